import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { InvalidParamsError } from '../../errors.js'
import type { Task, TaskState } from '../../types.js'
import type { TaskQuery, TaskStore } from '../task-store.js'
import { assertSameJson } from './_same.js'
import { ScriptedTask, StatusClock, text } from './_scripted-task.js'
import type { SessionCheck, StoreSession } from './_session.js'

/** Checks of `list`: the order, the filters, the pages and their cursors. */
export function listChecks(): SessionCheck[] {
  return [
    { name: 'list gives tasks newest status first, whatever order they were written in', check: newestFirst },
    {
      name: 'list filters by contextId, state and updatedAfter (at or after), alone and combined, total counting every match',
      check: filters,
    },
    {
      name: 'list pages with limit and nextCursor: every matching task once, newest first, total on every page, no nextCursor on the last',
      check: pages,
    },
    { name: 'list pages through tasks with equal status times without repeating or skipping one', check: ties },
    {
      name: 'list moves a task whose status changes to the front; an artifact alone does not move it',
      check: statusMovesToFront,
    },
    { name: 'list refuses a cursor that no page gave, with InvalidParamsError', check: foreignCursor },
  ]
}

interface Placed {
  contextId?: string
  state: TaskState
  /** Its status time. */
  at: string
}

/** A task whose status is `state` since `at`, moved there as the runtime would (working first). */
async function place(store: TaskStore, clock: StatusClock, { contextId, state, at }: Placed): Promise<Task> {
  const run = await ScriptedTask.start(store, clock, { at, ...(contextId !== undefined && { contextId }) })
  if (state === 'submitted') return run.task
  if (state !== 'working') run.working({ at })
  const asks = state === 'input-required' || state === 'auth-required'
  await run.status(state, { at, ...(asks && { message: 'Which one?' }) })
  await run.flush()
  return run.task
}

/** `count` status times, oldest first. */
function times(clock: StatusClock, count: number): string[] {
  return Array.from({ length: count }, () => clock.next())
}

async function newestFirst({ store }: StoreSession): Promise<void> {
  const clock = new StatusClock()
  const at = times(clock, 5)
  const byTime: Task[] = []
  // Written in an order unlike their status times: the order is the status times'.
  for (const index of [3, 0, 4, 1, 2]) byTime[index] = await place(store, clock, { state: 'completed', at: at[index]! })
  const page = await store.list({ limit: 100 })
  assert.deepEqual(ids(page.tasks), ids(byTime.reverse()), 'tasks are not newest status first')
  assert.equal(page.total, 5)
  assert.equal(page.nextCursor, undefined, 'nextCursor on the only page')
}

async function filters({ store }: StoreSession): Promise<void> {
  const clock = new StatusClock()
  const [a, b] = [randomUUID(), randomUUID()]
  const t = times(clock, 8)
  const tasks = {
    a1: await place(store, clock, { contextId: a, state: 'completed', at: t[1]! }),
    b1: await place(store, clock, { contextId: b, state: 'completed', at: t[2]! }),
    a2: await place(store, clock, { contextId: a, state: 'working', at: t[3]! }),
    b2: await place(store, clock, { contextId: b, state: 'submitted', at: t[4]! }),
    a3: await place(store, clock, { contextId: a, state: 'input-required', at: t[5]! }),
    b3: await place(store, clock, { contextId: b, state: 'completed', at: t[6]! }),
    a4: await place(store, clock, { contextId: a, state: 'completed', at: t[7]! }),
  }
  const expect = async (filter: Omit<TaskQuery, 'limit'>, names: Array<keyof typeof tasks>) => {
    const page = await store.list({ ...filter, limit: 100 })
    const what = `list(${JSON.stringify(filter)})`
    assert.deepEqual(
      ids(page.tasks),
      names.map((name) => tasks[name].id),
      `${what}: not the matching tasks, newest first (expected ${names.join(', ')})`,
    )
    assert.equal(page.total, names.length, `${what}: total`)
    assert.equal(page.nextCursor, undefined, `${what}: nextCursor on the only page`)
  }
  await expect({}, ['a4', 'b3', 'a3', 'b2', 'a2', 'b1', 'a1'])
  await expect({ contextId: a }, ['a4', 'a3', 'a2', 'a1'])
  await expect({ contextId: randomUUID() }, [])
  await expect({ state: 'completed' }, ['a4', 'b3', 'b1', 'a1'])
  await expect({ state: 'input-required' }, ['a3'])
  await expect({ state: 'failed' }, [])
  await expect({ updatedAfter: t[4]! }, ['a4', 'b3', 'a3', 'b2'])
  await expect({ updatedAfter: t[0]! }, ['a4', 'b3', 'a3', 'b2', 'a2', 'b1', 'a1'])
  await expect({ updatedAfter: clock.next() }, [])
  await expect({ contextId: a, state: 'completed' }, ['a4', 'a1'])
  await expect({ contextId: b, updatedAfter: t[4]! }, ['b3', 'b2'])
  await expect({ state: 'completed', updatedAfter: t[2]! }, ['a4', 'b3', 'b1'])
  await expect({ contextId: a, state: 'completed', updatedAfter: t[2]! }, ['a4'])
  await expect({ contextId: b, state: 'working' }, [])
}

async function pages({ store }: StoreSession): Promise<void> {
  const clock = new StatusClock()
  const [a, b] = [randomUUID(), randomUUID()]
  const contexts = [a, b, a, a, b, a, a]
  const tasks: Task[] = []
  for (const contextId of contexts)
    tasks.push(await place(store, clock, { contextId, state: 'completed', at: clock.next() }))
  const newest = tasks.slice().reverse()

  const first = await store.list({ limit: 3 })
  assert.deepEqual(ids(first.tasks), ids(newest.slice(0, 3)), 'list({ limit: 3 }): the three newest')
  assert.equal(first.total, 7, 'list({ limit: 3 }): total counts every page')
  assert.ok(first.nextCursor, 'list({ limit: 3 }) of 7 tasks has a nextCursor')

  const all = await pageThrough(store, { limit: 2 })
  assert.deepEqual(all.sizes, [2, 2, 2, 1], 'pages of list({ limit: 2 }) over 7 tasks')
  assert.deepEqual(ids(all.tasks), ids(newest), 'paging with limit 2 gives every task once, newest first')

  const inA = await pageThrough(store, { contextId: a, limit: 2 })
  assert.deepEqual(
    ids(inA.tasks),
    ids(newest.filter((task) => task.contextId === a)),
    'paging one context with limit 2',
  )
  assert.deepEqual(inA.sizes, [2, 2, 1])
  assert.deepEqual(inA.totals, [5, 5, 5], 'total of every page of one context')

  const exact = await pageThrough(store, { contextId: b, limit: 2 })
  assert.deepEqual(
    ids(exact.tasks),
    ids(newest.filter((task) => task.contextId === b)),
    'a filter whose matches fill exactly one page',
  )
  assert.deepEqual(exact.sizes, [2], 'no page after a full last one (nextCursor absent)')
}

async function ties({ store }: StoreSession): Promise<void> {
  const clock = new StatusClock()
  const [older, tie, newer] = times(clock, 3)
  const tasks: Task[] = [await place(store, clock, { state: 'completed', at: older! })]
  for (let i = 0; i < 5; i++) tasks.push(await place(store, clock, { state: 'completed', at: tie! }))
  tasks.push(await place(store, clock, { state: 'completed', at: newer! }))
  for (const limit of [1, 2, 3, 4]) {
    const all = await pageThrough(store, { limit })
    const what = `paging with limit ${limit} over 7 tasks, 5 of one status time`
    assert.deepEqual(ids(all.tasks).sort(), ids(tasks).sort(), `${what}: a task repeated or skipped`)
    assert.equal(all.tasks[0]!.id, tasks.at(-1)!.id, `${what}: the newest first`)
    assert.equal(all.tasks.at(-1)!.id, tasks[0]!.id, `${what}: the oldest last`)
  }
}

async function statusMovesToFront({ store }: StoreSession): Promise<void> {
  const clock = new StatusClock()
  const runs: ScriptedTask[] = []
  for (let i = 0; i < 3; i++) {
    const run = await ScriptedTask.start(store, clock)
    run.working()
    runs.push(run)
  }
  const [oldest, middle, newest] = runs as [ScriptedTask, ScriptedTask, ScriptedTask]
  for (const run of runs) await run.flush()
  oldest.artifact({ parts: [text('an artifact changes no status')] })
  await oldest.flush()
  assert.deepEqual(
    ids((await store.list({ limit: 10 })).tasks),
    [newest.id, middle.id, oldest.id],
    'an artifact moved a task in the list (the order is by status time)',
  )
  const changed = clock.next()
  await oldest.complete()
  assert.deepEqual(
    ids((await store.list({ limit: 10 })).tasks),
    [oldest.id, newest.id, middle.id],
    'a task whose status changed is not first',
  )
  const since = await store.list({ updatedAfter: changed, limit: 10 })
  assert.deepEqual(ids(since.tasks), [oldest.id], 'updatedAfter the change gives the task that changed')
  assert.equal(since.total, 1)
  assertSameJson(since.tasks[0], oldest.task, 'the task listed differs from the task the runtime holds')
}

async function foreignCursor({ store }: StoreSession): Promise<void> {
  const clock = new StatusClock()
  for (let i = 0; i < 3; i++) await place(store, clock, { state: 'completed', at: clock.next() })
  for (const cursor of ['not-a-cursor', '%%%']) {
    await assert.rejects(
      async () => store.list({ limit: 1, cursor }),
      (error) => error instanceof InvalidParamsError,
      `list({ cursor: ${JSON.stringify(cursor)} }) must throw InvalidParamsError (clients are told their page token is invalid)`,
    )
  }
}

/** Every page of a query, following nextCursor; fails instead of looping when the cursors never end. */
async function pageThrough(
  store: TaskStore,
  query: Omit<TaskQuery, 'cursor'>,
): Promise<{ tasks: Task[]; sizes: number[]; totals: number[] }> {
  const tasks: Task[] = []
  const sizes: number[] = []
  const totals: number[] = []
  let cursor: string | undefined
  do {
    const page = await store.list({ ...query, ...(cursor !== undefined && { cursor }) })
    assert.ok(page.tasks.length <= query.limit, `a page of list(${JSON.stringify(query)}) holds more than limit`)
    sizes.push(page.tasks.length)
    totals.push(page.total)
    assert.ok(sizes.length <= page.total + 1, `list(${JSON.stringify(query)}) gives more pages than tasks`)
    assert.ok(page.nextCursor === undefined || page.tasks.length > 0, 'an empty page with a nextCursor')
    for (const task of page.tasks) {
      const before = tasks.at(-1)
      assert.ok(
        !before || before.status.timestamp >= task.status.timestamp,
        `list(${JSON.stringify(query)}): a task of a newer status after an older one, on this page or across pages`,
      )
      tasks.push(task)
    }
    cursor = page.nextCursor
  } while (cursor !== undefined)
  for (const total of totals)
    assert.equal(
      total,
      tasks.length,
      `list(${JSON.stringify(query)}): total is not the number of tasks on all pages together`,
    )
  return { tasks, sizes, totals }
}

function ids(tasks: Task[]): string[] {
  return tasks.map((task) => task.id)
}
