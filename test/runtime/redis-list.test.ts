import { createMemoryStore, serveAgent, type Task } from 'a2a-runtime'
import { createRedisStore } from 'a2a-runtime/redis-store'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ScriptedTask, StatusClock, text } from '../../runtime/src/stores/contract/_scripted-task.ts'
import type { RedisTaskStore } from '../../runtime/src/stores/redis/store.ts'
import { echoAgent } from './_agents.ts'
import { captureLogger } from './_logger.ts'
import { type RedisServer, startRedis } from './_redis.ts'

/**
 * ListTasks on the Redis store reads what it answers of each task, not the task: with `historyLength` and
 * `includeArtifacts` (what the ListTasks answer shows) a page of large tasks moves its summaries out of Redis,
 * measured by Redis's own counter of bytes sent, on a Redis only this file uses. The answer is what the memory
 * store answers for the same tasks, cut as ListTasks cuts it.
 */

const KiB = 1024
const MiB = 1024 * KiB
const BIG = 2 * MiB
const big = (tag: string) => `${tag} ${'x'.repeat(BIG - tag.length - 1)}`

let redis: RedisServer
let raw: Redis
let store: RedisTaskStore
/** The tasks as the runtime holds them, newest status last. */
const tasks: Task[] = []
const contexts = ['ctx-a', 'ctx-b', 'ctx-c']

/** Bytes Redis has sent its clients. */
async function sent(): Promise<number> {
  const stats = await raw.info('stats')
  return Number(/^total_net_output_bytes:(\d+)/m.exec(stats)![1])
}

/** Bytes Redis sends for `work`, less the INFO that measures it (a few KiB). */
async function moved<T>(work: () => Promise<T>): Promise<{ result: T; bytes: number }> {
  const before = await sent()
  const result = await work()
  return { result, bytes: (await sent()) - before }
}

/** What ListTasks shows of a task (the binding's cut), on the task the memory store answers. */
function cut(task: Task, historyLength: number | undefined, includeArtifacts: boolean): Task {
  const history =
    historyLength === undefined ? task.history : historyLength === 0 ? [] : task.history.slice(-historyLength)
  return { ...task, history, artifacts: includeArtifacts ? task.artifacts : [] }
}

const asJson = (value: unknown) => JSON.parse(JSON.stringify(value))

/**
 * 30 tasks of ~2 MiB, written the ways the runtime writes them: an answer in one artifact; a 2 MiB question with
 * a question back, a follow-up and an answer; an artifact streamed in chunks, some tasks still working (their
 * events not folded into the task yet).
 */
async function seed(): Promise<void> {
  const clock = new StatusClock()
  for (let i = 0; i < 30; i++) {
    const contextId = contexts[i % contexts.length]!
    const kind = i % 3
    const run = await ScriptedTask.start(store, clock, {
      contextId,
      text: kind === 1 ? big(`question ${i}`) : `hello ${i}`,
    })
    run.working()
    if (kind === 0) {
      run.artifact({ parts: [text(big(`answer ${i}`))], name: `answer ${i}` })
      await run.complete(`done ${i}`)
    } else if (kind === 1) {
      await run.inputRequired(`which one, ${i}?`)
      await run.followUp(`this one, ${i}`)
      run.artifact({ parts: [text(`short answer ${i}`)] })
      await run.complete()
    } else {
      let artifactId: string | undefined
      for (let chunk = 0; chunk < 4; chunk++)
        artifactId = run.artifact({
          parts: [text(big(`chunk ${i}.${chunk}`).slice(0, BIG / 4))],
          append: chunk > 0,
          lastChunk: chunk === 3,
          ...(artifactId && { artifactId }),
        })
      if (i % 2 === 0) await run.complete(`streamed ${i}`)
      else await run.flush()
    }
    tasks.push(run.task)
  }
}

beforeAll(async () => {
  redis = await startRedis()
  raw = new Redis(redis.url)
  store = createRedisStore({ url: redis.url, prefix: 'list:' })
  await seed()
}, 120_000)

afterAll(async () => {
  await store?.close()
  raw?.disconnect()
  await redis?.stop()
})

describe('ListTasks on the Redis store reads what it answers', () => {
  it('a page of 100 over 30 tasks of ~2 MiB with historyLength 0 moves under 1 MiB, and answers what the memory store answers', async () => {
    const memory = createMemoryStore({ maxBytes: 1024 * MiB })
    for (const task of tasks) memory.create(structuredClone(task))
    const { result: page, bytes } = await moved(() =>
      store.list({ limit: 100, historyLength: 0, includeArtifacts: false }),
    )
    console.info(
      `ListTasks {pageSize: 100, historyLength: 0} over 30 tasks of ~2 MiB: ${(bytes / KiB).toFixed(1)} KiB out of Redis`,
    )
    expect(bytes).toBeLessThan(MiB)
    const expected = memory.list({ limit: 100 })
    expect(page.tasks).toHaveLength(30)
    expect(page.total).toBe(30)
    expect(page.nextCursor).toBeUndefined()
    expect(asJson(page.tasks)).toEqual(asJson(expected.tasks.map((task) => cut(task, 0, false))))
    // Filtered and paged the same way too.
    for (const contextId of contexts) {
      let cursor: string | undefined
      let mine: string | undefined
      do {
        const got = await store.list({
          limit: 4,
          contextId,
          historyLength: 0,
          includeArtifacts: false,
          ...(cursor && { cursor }),
        })
        const want = memory.list({ limit: 4, contextId, ...(mine && { cursor: mine }) })
        expect(asJson(got.tasks)).toEqual(asJson(want.tasks.map((task) => cut(task, 0, false))))
        expect(got.total).toBe(want.total)
        expect(Boolean(got.nextCursor)).toBe(Boolean(want.nextCursor))
        cursor = got.nextCursor
        mine = want.nextCursor
      } while (cursor)
    }
    const completed = await store.list({ limit: 100, state: 'completed', historyLength: 0, includeArtifacts: false })
    expect(asJson(completed.tasks)).toEqual(
      asJson(memory.list({ limit: 100, state: 'completed' }).tasks.map((task) => cut(task, 0, false))),
    )
    memory.close()
  })

  it('historyLength 2 moves the two newest messages of each task; includeArtifacts and no cut answer whole tasks', async () => {
    const memory = createMemoryStore({ maxBytes: 1024 * MiB })
    for (const task of tasks) memory.create(structuredClone(task))
    const expected = memory.list({ limit: 100 }).tasks
    // The two newest messages: the 2 MiB question only where it is among them (a task that was asked nothing back).
    const newestTwo = expected.reduce((sum, task) => sum + JSON.stringify(task.history.slice(-2)).length, 0)
    const { result: two, bytes } = await moved(() =>
      store.list({ limit: 100, historyLength: 2, includeArtifacts: false }),
    )
    console.info(
      `ListTasks {pageSize: 100, historyLength: 2}: ${(bytes / KiB).toFixed(1)} KiB out of Redis for ${(newestTwo / KiB).toFixed(1)} KiB of messages`,
    )
    expect(bytes).toBeLessThan(newestTwo + MiB)
    expect(asJson(two.tasks)).toEqual(asJson(expected.map((task) => cut(task, 2, false))))
    const withArtifacts = await store.list({ limit: 100, historyLength: 1, includeArtifacts: true })
    expect(asJson(withArtifacts.tasks)).toEqual(asJson(expected.map((task) => cut(task, 1, true))))
    const whole = await store.list({ limit: 100 })
    expect(asJson(whole.tasks)).toEqual(asJson(expected))
    for (const task of tasks.slice(0, 6)) expect(asJson(await store.get(task.id))).toEqual(asJson(task))
    memory.close()
  })

  it('lists tasks written by the earlier layout (history in the json, follow-ups in the entries), and writes them anew on their next event', async () => {
    const prefix = 'old:'
    const old = createRedisStore({ url: redis.url, prefix })
    try {
      const keys = old.keys
      const at = Date.now()
      const written: Task[] = []
      for (let i = 0; i < 3; i++) {
        const id = `old-${i}`
        const contextId = 'ctx-old'
        const message = (role: 'user' | 'agent', value: string) => ({
          kind: 'message' as const,
          messageId: `${id}-${value}`,
          role,
          parts: [text(value)],
          taskId: id,
          contextId,
        })
        const task: Task = {
          kind: 'task',
          id,
          contextId,
          status: {
            state: 'input-required',
            timestamp: new Date(at + i).toISOString(),
            message: message('agent', 'which?'),
          },
          artifacts: [{ artifactId: `${id}-a`, parts: [text(`answer ${i}`)] }],
          history: [message('user', `hello ${i}`), message('agent', 'which?')],
          metadata: { n: i },
        }
        // As the earlier layout wrote it: the json at seq 1, then a follow-up and the next question in the entries.
        const followUp = message('user', `this one ${i}`)
        const again = message('agent', 'and then?')
        const status = {
          state: 'input-required' as const,
          timestamp: new Date(at + 10 + i).toISOString(),
          message: again,
        }
        const asked = { kind: 'status-update', seq: 2, taskId: id, contextId, status, final: true }
        await raw.hset(keys.task(id), 'json', JSON.stringify(task), 'seq', 1, 'state', 'input-required', 'last', 2)
        await raw.xadd(keys.entries(id), '2-0', 'm', JSON.stringify(followUp))
        await raw.xadd(keys.entries(id), '2-1', 'e', JSON.stringify(asked))
        await raw.hset(keys.indexed, id, `input-required ${contextId}`)
        for (const index of [
          keys.all,
          keys.byState('input-required'),
          keys.byContext(contextId),
          keys.byContextState(contextId, 'input-required'),
        ])
          await raw.zadd(index, at + 10 + i, id)
        written.unshift({ ...task, history: [...task.history, followUp, again], status })
      }
      const listed = await old.list({ limit: 10, historyLength: 2, includeArtifacts: false })
      expect(asJson(listed.tasks)).toEqual(asJson(written.map((task) => cut(task, 2, false))))
      expect(asJson((await old.list({ limit: 10 })).tasks)).toEqual(asJson(written))
      expect(asJson((await old.list({ limit: 10, historyLength: 0 })).tasks)).toEqual(
        asJson(written.map((task) => cut(task, 0, true))),
      )
      // The next event (written alone, it would miss the history kept in the json): the whole task, in the new layout.
      const task = written.at(-1)!
      task.status = { state: 'completed', timestamp: new Date(at + 100).toISOString() }
      task.history.push({
        kind: 'message',
        messageId: 'last words',
        role: 'user',
        parts: [text('that one')],
        taskId: task.id,
        contextId: task.contextId,
      })
      await old.append(task, {
        kind: 'status-update',
        seq: 3,
        taskId: task.id,
        contextId: task.contextId,
        status: task.status,
        final: true,
      })
      expect(await raw.hget(keys.task(task.id), 'v')).toBe('2')
      expect(asJson(await old.get(task.id))).toEqual(asJson(task))
      const after = await old.list({ limit: 10, historyLength: 1, includeArtifacts: false })
      expect(asJson(after.tasks[0])).toEqual(asJson(cut(task, 1, false)))
    } finally {
      await old.close()
    }
  })
})

describe('a Redis that does not answer in time', () => {
  it('answers 503 with Retry-After saying the store did not answer within its timeout, not that it is unreachable', {
    timeout: 60_000,
  }, async () => {
    const slow = await startRedis()
    const pauser = new Redis(slow.url)
    const server = await serveAgent(echoAgent, {
      port: 0,
      hostname: '127.0.0.1',
      handleSignals: false,
      logger: captureLogger(),
      store: createRedisStore({ url: slow.url, prefix: 'slow:', timeoutMs: 300 }),
    })
    try {
      const getTask = () =>
        fetch(server.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: { pageSize: 10 } }),
        })
      // Redis is up (it answers), before and after the pause.
      await expect.poll(async () => (await getTask()).status).toBe(200)
      await pauser.call('CLIENT', 'PAUSE', '3000', 'ALL')
      const answer = await getTask()
      const body = (await answer.json()) as { error: { code: number; message: string } }
      expect(answer.status).toBe(503)
      expect(answer.headers.get('retry-after')).toBe('1')
      expect(body.error.code).toBe(-32603)
      expect(body.error.message).toBe('The task store (Redis) did not answer within 300 ms; retry shortly')
      await expect.poll(async () => (await getTask()).status, { timeout: 15_000 }).toBe(200)
    } finally {
      await server.close()
      pauser.disconnect()
      await slow.stop()
    }
  })
})
