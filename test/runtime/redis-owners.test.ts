import { createMemoryStore, type Task } from 'a2a-runtime'
import { createRedisStore } from 'a2a-runtime/redis-store'
import type { TaskPage, TaskQuery, TaskStore } from 'a2a-runtime/store'
import { Cluster, Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ScriptedTask, StatusClock, text } from '../../runtime/src/stores/contract/_scripted-task.ts'
import type { RedisTaskStore } from '../../runtime/src/stores/redis/store.ts'
import { type RedisServer, startRedis } from './_redis.ts'
import { type RedisCluster, startRedisCluster } from './_redis-cluster.ts'

/**
 * The Redis store keeps each task's owner (the `Principal.id` of the caller that created it) and answers an owner
 * only its own tasks: another's answers as a task that does not exist, through `get`, `snapshot` and `list`, on
 * a single Redis and on Redis Cluster (where the index lives on another node than the tasks). The answers are
 * held to the memory store's for the same tasks and owners.
 */

// Owners as OpenID Connect callers are named (`<issuer> <subject>`). BOB is ALICE followed by ':x', so that
// ALICE's tasks of the context 'x:shared' and BOB's of 'shared' would share one set if the owner and the context
// were simply joined by ':'.
const ALICE = 'https://id.example:8443 alice'
const BOB = `${ALICE}:x`
const SHARED = 'shared'
const ALICE_ONLY = 'x:shared'

/** The value as JSON would carry it; `null` for none. */
const asJson = (value: unknown) => (value === undefined ? null : JSON.parse(JSON.stringify(value)))

/** The store as one caller's requests reach it: `create` with that caller's owner, everything else as it is. */
function calledBy(owner: string | undefined, store: TaskStore): TaskStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'create') return (task: Task) => target.create(task, owner)
      const value = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/** Every page of a listing, `limit` at a time: the ids and total of each page (at most 50 pages). */
async function allPages(
  store: Pick<TaskStore, 'list'>,
  query: Omit<TaskQuery, 'limit' | 'cursor'>,
  limit: number,
): Promise<Array<{ tasks: unknown; total: number; more: boolean }>> {
  const pages: Array<{ tasks: unknown; total: number; more: boolean }> = []
  let cursor: string | undefined
  for (let page = 0; page < 50; page++) {
    const got: TaskPage = await store.list({ ...query, limit, ...(cursor && { cursor }) })
    pages.push({ tasks: asJson(got.tasks), total: got.total, more: got.nextCursor !== undefined })
    cursor = got.nextCursor
    if (!cursor) return pages
  }
  throw new Error('a listing that never ends')
}

interface Seeded {
  /** Each task, driven as the runtime drives it (`run.task` is the task as the runtime holds it), with its owner. */
  tasks: Array<{ run: ScriptedTask; owner: string | undefined }>
}

/**
 * ALICE: three tasks of 'x:shared' (two completed, one waiting for input) and two of 'shared'; BOB: three of
 * 'shared' (one completed, two working); nobody (created without an owner, as every task was before owners were
 * kept): two of 'shared'.
 */
async function seed(store: TaskStore): Promise<Seeded> {
  const clock = new StatusClock()
  const tasks: Seeded['tasks'] = []
  const start = async (owner: string | undefined, contextId: string, end: 'complete' | 'ask' | 'work') => {
    const run = await ScriptedTask.start(calledBy(owner, store), clock, { contextId, text: `from ${owner}` })
    run.working()
    run.artifact({ parts: [text(`answer for ${owner}`)] })
    if (end === 'complete') await run.complete(`done for ${owner}`)
    else if (end === 'ask') await run.inputRequired('which one?')
    else await run.flush()
    tasks.push({ run, owner })
  }
  await start(ALICE, ALICE_ONLY, 'complete')
  await start(BOB, SHARED, 'work')
  await start(ALICE, SHARED, 'complete')
  await start(undefined, SHARED, 'complete')
  await start(ALICE, ALICE_ONLY, 'ask')
  await start(BOB, SHARED, 'complete')
  await start(ALICE, ALICE_ONLY, 'complete')
  await start(undefined, SHARED, 'complete')
  await start(BOB, SHARED, 'work')
  await start(ALICE, SHARED, 'complete')
  return { tasks }
}

/** What each owner (and the runtime itself, without one) must be able to read and list. */
async function expectOwnersKept(store: TaskStore, seeded: Seeded): Promise<void> {
  const tasks = seeded.tasks.map(({ run, owner }) => ({ task: run.task, owner }))
  for (const { task, owner } of tasks) {
    expect(asJson(await store.get(task.id))).toEqual(asJson(task))
    for (const reader of [ALICE, BOB, 'nobody']) {
      const mine = reader === owner
      expect(asJson(await store.get(task.id, reader))).toEqual(mine ? asJson(task) : null)
      const snapshot = await store.snapshot?.(task.id, reader)
      expect(asJson(snapshot?.task)).toEqual(mine ? asJson(task) : null)
    }
  }
  const memory = createMemoryStore()
  for (const { task, owner } of tasks) memory.create(structuredClone(task), owner)
  const filters: Array<Omit<TaskQuery, 'limit'>> = [
    {},
    { contextId: SHARED },
    { contextId: ALICE_ONLY },
    { state: 'completed' },
    { state: 'working' },
    { contextId: SHARED, state: 'completed' },
    { contextId: ALICE_ONLY, state: 'input-required' },
    { updatedAfter: tasks[4]!.task.status.timestamp },
  ]
  for (const owner of [ALICE, BOB, 'nobody', undefined])
    for (const filter of filters)
      for (const limit of [2, 100]) {
        const query = { ...filter, ...(owner !== undefined && { owner }) }
        const want = await allPages(memory, query, limit)
        expect({ query, pages: await allPages(store, query, limit) }).toEqual({ query, pages: want })
      }
  memory.close()
  // Not vacuous: each owner has tasks, in the shared context too, and the totals tell them apart.
  expect((await store.list({ owner: ALICE, limit: 100 })).total).toBe(5)
  expect((await store.list({ owner: BOB, limit: 100, contextId: SHARED })).total).toBe(3)
  expect((await store.list({ owner: ALICE, limit: 100, contextId: SHARED })).total).toBe(2)
  expect((await store.list({ limit: 100 })).total).toBe(10)
}

describe.each([
  { target: 'a single Redis', cluster: false },
  { target: 'a Redis Cluster of 3 masters', cluster: true },
])('the Redis store on $target keeps the owner of each task', ({ cluster }) => {
  let redis: RedisServer | RedisCluster
  let raw: Redis | Cluster
  const stores: TaskStore[] = []
  const open = (prefix: string, options: { ttlMs?: number; maxTasks?: number } = {}) => {
    const store = createRedisStore({ url: redis.url, prefix, cluster, ...options })
    stores.push(store)
    return store
  }
  const freshPrefix = () => `owners-${Math.random().toString(36).slice(2, 10)}:`

  beforeAll(async () => {
    redis = cluster ? await startRedisCluster() : await startRedis()
    raw = cluster
      ? new Cluster([{ host: '127.0.0.1', port: (redis as RedisCluster).nodes[0]!.port }])
      : new Redis(redis.url)
  }, 120_000)
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close?.()
  })
  afterAll(async () => {
    raw?.disconnect()
    await redis?.stop()
  })

  it("answers each owner only its own tasks: get, snapshot, and list with and without filters, totals and pages as the memory store's", {
    timeout: 60_000,
  }, async () => {
    const store = open(freshPrefix())
    await expectOwnersKept(store, await seed(store))
  })

  it('keeps the owners for another instance on the same Redis, and for one started after the first stopped', {
    timeout: 60_000,
  }, async () => {
    const prefix = freshPrefix()
    const first = open(prefix)
    const seeded = await seed(first)
    await expectOwnersKept(open(prefix), seeded)
    await first.close()
    await expectOwnersKept(open(prefix), seeded)
  })

  it("files again under its owner a task a listing took out of the index before it was written (the index holds no owner for it then), at the task's next status", {
    timeout: 60_000,
  }, async () => {
    const store = open(freshPrefix()) as RedisTaskStore
    const clock = new StatusClock()
    const run = await ScriptedTask.start(calledBy(ALICE, store), clock, { contextId: SHARED })
    // As a listing leaves a task it found in the index but could not read yet (on a cluster the index is written
    // beside the task, not with it): out of every set, and of the index's record of its owner.
    const keys = store.keys
    const filed = await raw.hget(keys.indexed, run.id)
    expect(filed).toBe(`submitted ${SHARED}`)
    expect(await raw.hget(keys.owners, run.id)).toBe(ALICE)
    for (const set of [
      keys.all,
      keys.byState('submitted'),
      keys.byContext(SHARED),
      keys.byContextState(SHARED, 'submitted'),
      keys.byOwner(ALICE),
      keys.byOwner(ALICE, { state: 'submitted' }),
      keys.byOwner(ALICE, { contextId: SHARED }),
      keys.byOwner(ALICE, { contextId: SHARED, state: 'submitted' }),
    ])
      await raw.zrem(set, run.id)
    await raw.hdel(keys.indexed, run.id)
    await raw.hdel(keys.owners, run.id)
    expect((await store.list({ owner: ALICE, limit: 10 })).total).toBe(0)
    await run.complete()
    const page = await store.list({ owner: ALICE, limit: 10, contextId: SHARED, state: 'completed' })
    expect(page.tasks.map((task) => task.id)).toEqual([run.id])
    expect((await store.list({ owner: BOB, limit: 10 })).total).toBe(0)
  })

  it("leaves none of an owner's index entries behind once its tasks expire", { timeout: 60_000 }, async () => {
    const store = open(freshPrefix(), { ttlMs: 5000 }) as RedisTaskStore
    const { tasks } = await seed(store)
    const keys = store.keys
    const ownerSets = (owner: string) => [
      keys.byOwner(owner),
      ...[SHARED, ALICE_ONLY].map((contextId) => keys.byOwner(owner, { contextId })),
      ...['submitted', 'working', 'input-required', 'completed'].flatMap((state) => [
        keys.byOwner(owner, { state }),
        ...[SHARED, ALICE_ONLY].map((contextId) => keys.byOwner(owner, { contextId, state })),
      ]),
    ]
    const present = async (sets: string[]) => {
      let found = 0
      for (const set of sets) found += await raw.exists(set)
      return found
    }
    const index = [...ownerSets(ALICE), ...ownerSets(BOB)]
    // ALICE: every set but BOB's context and working; BOB: his own, context 'shared', completed and working.
    expect(await present(index)).toBe(8 + 6)
    expect(await raw.hlen(keys.owners)).toBe(8)
    // BOB's working tasks would never expire: they complete now, and every task expires `ttlMs` after it settled.
    for (const { run } of tasks) if (run.task.status.state === 'working') await run.complete()
    await expect
      .poll(async () => (await Promise.all(tasks.map(({ run }) => raw.exists(keys.task(run.id))))).join(''), {
        timeout: 30_000,
      })
      .toBe('0'.repeat(tasks.length))
    // A listing by owner answers nothing, and tidies what it found; a sweep (this one, or the timer's) the rest.
    expect(await store.list({ owner: ALICE, limit: 100 })).toEqual({ tasks: [], total: 0 })
    expect(await present(ownerSets(ALICE))).toBe(0)
    await expect
      .poll(
        async () => {
          await store.sweep(Date.now() + 1000)
          return {
            sets: await present(index),
            owners: await raw.hlen(keys.owners),
            indexed: await raw.hlen(keys.indexed),
            all: await raw.zcard(keys.all),
          }
        },
        { timeout: 30_000 },
      )
      .toEqual({ sets: 0, owners: 0, indexed: 0, all: 0 })
    expect(await store.list({ owner: BOB, limit: 100 })).toEqual({ tasks: [], total: 0 })
  })

  it("takes the tasks that retention trims past maxTasks out of their owner's sets too", {
    timeout: 60_000,
  }, async () => {
    const store = open(freshPrefix(), { maxTasks: 10 }) as RedisTaskStore
    const clock = new StatusClock()
    // The store counts its tasks every 64 settlings, and trims the oldest settled ones past maxTasks.
    for (let i = 0; i < 70; i++) {
      const run = await ScriptedTask.start(calledBy(ALICE, store), clock, { contextId: SHARED })
      run.working()
      await run.complete()
    }
    const keys = store.keys
    const sets = [
      keys.byOwner(ALICE),
      keys.byOwner(ALICE, { contextId: SHARED }),
      keys.byOwner(ALICE, { state: 'completed' }),
      keys.byOwner(ALICE, { contextId: SHARED, state: 'completed' }),
    ]
    await expect.poll(async () => raw.zcard(keys.all)).toBeLessThan(70)
    const kept = await raw.zrange(keys.all, 0, -1)
    for (const set of sets) expect((await raw.zrange(set, 0, -1)).sort()).toEqual([...kept].sort())
    for (const id of kept) expect(await raw.exists(keys.task(id))).toBe(1)
    expect(await raw.hlen(keys.owners)).toBe(kept.length)
    expect((await store.list({ owner: ALICE, limit: 100 })).total).toBe(kept.length)
  })
})

describe("an owner's listing on the Redis store costs its page, not the other owners' tasks", () => {
  const KiB = 1024
  const MiB = 1024 * KiB
  let redis: RedisServer
  let raw: Redis
  let store: RedisTaskStore

  beforeAll(async () => {
    redis = await startRedis()
    raw = new Redis(redis.url)
    store = createRedisStore({ url: redis.url, prefix: 'owner-cost:' })
  }, 60_000)
  afterAll(async () => {
    await store?.close()
    raw?.disconnect()
    await redis?.stop()
  })

  /** Redis's counters: bytes sent to clients, and commands run (those that scripts call included). */
  async function counters(): Promise<{ bytes: number; commands: number }> {
    const stats = await raw.info('stats')
    const commands = await raw.info('commandstats')
    let calls = 0
    for (const [, n] of commands.matchAll(/calls=(\d+)/g)) calls += Number(n)
    return { bytes: Number(/^total_net_output_bytes:(\d+)/m.exec(stats)![1]), commands: calls }
  }

  /** What Redis sends, and the commands it runs, for `work` (less the INFO calls that measure it). */
  async function cost<T>(work: () => Promise<T>): Promise<{ result: T; bytes: number; commands: number }> {
    const before = await counters()
    const result = await work()
    const after = await counters()
    return { result, bytes: after.bytes - before.bytes, commands: after.commands - before.commands }
  }

  it("reads ALICE's 3 tasks of ~2 MiB among BOB's 400 with a few dozen commands and under 1 MiB (ListTasks' pageSize 100, historyLength 0); BOB's get of one of them moves under 1 KiB", {
    timeout: 120_000,
  }, async () => {
    const clock = new StatusClock()
    const big = (tag: string) => `${tag} ${'x'.repeat(2 * MiB)}`
    const alice: Task[] = []
    for (let i = 0; i < 3; i++) {
      const run = await ScriptedTask.start(calledBy(ALICE, store), clock, { contextId: SHARED, text: big(`q${i}`) })
      run.working()
      run.artifact({ parts: [text(big(`a${i}`))] })
      await run.complete()
      alice.unshift(run.task)
    }
    for (let sent = 0; sent < 400; sent += 20)
      await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const run = await ScriptedTask.start(calledBy(BOB, store), clock, {
            contextId: i % 2 ? SHARED : 'bob',
            text: 'x'.repeat(8 * KiB),
          })
          run.working()
          await run.complete('y'.repeat(8 * KiB))
        }),
      )
    const idle = await cost(async () => undefined)
    for (const query of [{}, { contextId: SHARED }, { state: 'completed' as const }]) {
      const {
        result: page,
        bytes,
        commands,
      } = await cost(() =>
        store.list({ ...query, owner: ALICE, limit: 100, historyLength: 0, includeArtifacts: false }),
      )
      console.info(
        `ALICE's ListTasks ${JSON.stringify(query)} among BOB's 400 tasks: ${commands - idle.commands} commands, ${(bytes / KiB).toFixed(1)} KiB out of Redis`,
      )
      expect(page.tasks.map((task) => task.id)).toEqual(alice.map((task) => task.id))
      expect(page.total).toBe(3)
      // Reading each of BOB's tasks, even to find it is not ALICE's, would take at least 400 commands.
      expect(commands - idle.commands).toBeLessThan(60)
      expect(bytes).toBeLessThan(MiB)
    }
    const bobs = await store.list({ owner: BOB, limit: 1, contextId: SHARED, historyLength: 0 })
    expect(bobs.total).toBe(200)
    // BOB reading one of ALICE's 4 MiB tasks by its id: Redis checks the owner before it reads anything of it.
    const reads: Array<() => Promise<unknown>> = [
      () => store.get(alice[0]!.id, BOB),
      () => store.snapshot(alice[0]!.id, BOB),
    ]
    for (const read of reads) {
      const { result, bytes } = await cost(read)
      expect(result).toBeUndefined()
      expect(bytes - idle.bytes).toBeLessThan(KiB)
    }
  })
})
