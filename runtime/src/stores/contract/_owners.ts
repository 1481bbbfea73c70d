import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { Task } from '../../types.js'
import type { TaskQuery } from '../task-store.js'
import { assertSameTask } from './_same.js'
import { ScriptedTask, StatusClock } from './_scripted-task.js'
import type { SessionCheck, StoreSession } from './_session.js'

const ALICE = 'https://issuer.example alice'
const BOB = 'credential:bob'

/**
 * Checks of ownership: a task is its creator's only. Read as another owner (or as any owner, when it was created
 * without one) it is absent exactly as a task that never existed, through every read; read without an owner (the
 * runtime itself, after its own check) it is there whoever owns it.
 */
export function ownerChecks(canReopen: boolean): SessionCheck[] {
  return [
    {
      name: "get and snapshot with an owner answer only that owner's tasks; another's is undefined, as an unknown id",
      check: (session) => readsByOwner(session, false),
    },
    ...(canReopen
      ? [
          {
            name: 'a task keeps its owner when the store is opened again',
            check: (session: StoreSession) => readsByOwner(session, true),
          },
        ]
      : []),
    {
      name: "list with an owner gives only that owner's tasks, with and without contextId and state, total and pages counting only them",
      check: listsByOwner,
    },
  ]
}

async function readsByOwner(session: StoreSession, reopen: boolean): Promise<void> {
  assert.equal(session.store.keepsOwners, true, 'a store that keeps owners says so: keepsOwners must be true')
  const clock = new StatusClock()
  const alices = await ScriptedTask.start(session.store, clock, { owner: ALICE, text: "Alice's question" })
  const bobs = await ScriptedTask.start(session.store, clock, { owner: BOB, text: "Bob's question" })
  const nobodys = await ScriptedTask.start(session.store, clock, { text: 'Asked without credentials' })
  for (const run of [alices, bobs, nobodys]) {
    run.working()
    await run.complete('Done')
  }
  const store = reopen ? await session.reopen() : session.store
  const when = reopen ? 'after opening the store again' : ''
  assertSameTask(await store.get(alices.id, ALICE), alices.task, `Alice's task read by Alice ${when}`)
  assertSameTask(await store.get(bobs.id, BOB), bobs.task, `Bob's task read by Bob ${when}`)
  assert.equal(await store.get(alices.id, BOB), undefined, `Alice's task read by Bob must be undefined ${when}`)
  assert.equal(await store.get(bobs.id, ALICE), undefined, `Bob's task read by Alice must be undefined ${when}`)
  assert.equal(await store.get(nobodys.id, ALICE), undefined, `an unowned task read by an owner must be undefined`)
  assert.equal(await store.get(randomUUID(), ALICE), undefined, 'an unknown id read by an owner must be undefined')
  // The runtime's own reads (no owner) see every task.
  for (const run of [alices, bobs, nobodys]) assertSameTask(await store.get(run.id), run.task, `read without owner`)
  if (store.snapshot) {
    assert.equal((await store.snapshot(alices.id, ALICE))?.task.id, alices.id, "Alice's snapshot read by Alice")
    assert.equal(await store.snapshot(alices.id, BOB), undefined, "Alice's snapshot read by Bob must be undefined")
    assert.equal(await store.snapshot(nobodys.id, BOB), undefined, 'an unowned snapshot read by an owner')
  }
}

async function listsByOwner({ store }: StoreSession): Promise<void> {
  const clock = new StatusClock()
  const shared = randomUUID()
  const made: Array<{ owner: string | undefined; task: Task }> = []
  // Both owners in one context (a context id is the client's to choose), and each in one of its own.
  for (const [owner, contextId, state] of [
    [ALICE, shared, 'completed'],
    [BOB, shared, 'completed'],
    [ALICE, shared, 'failed'],
    [ALICE, randomUUID(), 'completed'],
    [BOB, randomUUID(), 'failed'],
    [undefined, shared, 'completed'],
  ] as const) {
    const run = await ScriptedTask.start(store, clock, { contextId, ...(owner && { owner }) })
    run.working()
    await run.status(state)
    made.push({ owner, task: run.task })
  }
  const ids = (query: Omit<TaskQuery, 'limit'>) => expectedIds(made, query)
  const listed = async (query: Omit<TaskQuery, 'limit'>, limit = 100) => {
    const seen: string[] = []
    let cursor: string | undefined
    let total: number | undefined
    do {
      const page = await store.list({ ...query, limit, ...(cursor !== undefined && { cursor }) })
      seen.push(...page.tasks.map((task) => task.id))
      total = page.total
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return { seen, total }
  }
  for (const query of [
    { owner: ALICE },
    { owner: BOB },
    { owner: ALICE, contextId: shared },
    { owner: BOB, contextId: shared },
    { owner: ALICE, state: 'completed' as const },
    { owner: BOB, contextId: shared, state: 'failed' as const },
    { owner: 'credential:nobody-at-all' },
  ]) {
    const expected = ids(query)
    const { seen, total } = await listed(query)
    assert.deepEqual(seen, expected, `list ${JSON.stringify(query)} must give exactly the owner's matching tasks`)
    assert.equal(total, expected.length, `list ${JSON.stringify(query)} must count only the owner's tasks`)
    if (expected.length > 1) {
      const paged = await listed(query, 1)
      assert.deepEqual(paged.seen, expected, `list ${JSON.stringify(query)} a task a page must give the same`)
    }
  }
  // Without an owner: every task, as before identity.
  assert.equal((await store.list({ contextId: shared, limit: 100 })).total, 4, 'list without owner counts all')
}

/** Newest status first, as `list` orders them (ties by id, descending). */
function expectedIds(made: Array<{ owner: string | undefined; task: Task }>, query: Omit<TaskQuery, 'limit'>) {
  return made
    .filter(
      ({ owner, task }) =>
        owner === query.owner &&
        (query.contextId === undefined || task.contextId === query.contextId) &&
        (query.state === undefined || task.status.state === query.state),
    )
    .map(({ task }) => task)
    .sort((a, b) =>
      a.status.timestamp !== b.status.timestamp
        ? a.status.timestamp < b.status.timestamp
          ? 1
          : -1
        : a.id < b.id
          ? 1
          : -1,
    )
    .map((task) => task.id)
}
