import { type A2AServer, type Agent, serveAgent } from 'a2a-runtime'
import { createRedisStore } from 'a2a-runtime/redis-store'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { rpc } from '../_rpc.ts'
import { agent, echoAgent } from './_agents.ts'
import { captureLogger } from './_logger.ts'
import { type RedisServer, startRedis } from './_redis.ts'

/**
 * What the Redis store costs grows with the page and the event, not with everything it holds: measured from
 * Redis's own counters of bytes in and out.
 */

const KiB = 1024
const MiB = 1024 * KiB

let redis: RedisServer
let raw: Redis
const cleanups: Array<() => unknown> = []

beforeAll(async () => {
  redis = await startRedis()
  raw = new Redis(redis.url)
})
afterAll(async () => {
  raw?.disconnect()
  await redis?.stop()
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function serve(served: Agent): Promise<A2AServer & { prefix: string }> {
  const prefix = `scale-${Math.random().toString(36).slice(2, 10)}:`
  const server = await serveAgent(served, {
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
    logger: captureLogger(),
    store: createRedisStore({ url: redis.url, prefix }),
  })
  cleanups.push(() => server.close())
  return Object.assign(server, { prefix })
}

const call = async (server: { url: string }, method: string, params: unknown) =>
  (await rpc(server.url, method, params, { version: '1.0' })).body

const message = (text: string) => ({
  message: { role: 'ROLE_USER', messageId: `m-${Math.random()}`, parts: [{ text }] },
})

/** Redis's counters of bytes it has read from and written to its clients. */
async function traffic(): Promise<{ input: number; output: number }> {
  const stats = await raw.info('stats')
  const read = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(stats)![1])
  return { input: read('total_net_input_bytes'), output: read('total_net_output_bytes') }
}

const mib = (bytes: number) => `${(bytes / MiB).toFixed(2)} MiB`

describe('the Redis store at scale', () => {
  it('answers ListTasks of one task over 200 large ones by reading that one task, not all 200', {
    timeout: 120_000,
  }, async () => {
    const server = await serve(echoAgent)
    const text = 'x'.repeat(64 * KiB)
    for (let sent = 0; sent < 200; sent += 10) {
      await Promise.all(
        Array.from({ length: 10 }, async () =>
          expect((await call(server, 'SendMessage', message(text))).result.task.status.state).toBe(
            'TASK_STATE_COMPLETED',
          ),
        ),
      )
    }
    const before = await traffic()
    const page = await call(server, 'ListTasks', { pageSize: 1, includeArtifacts: true })
    const after = await traffic()
    expect(page.result.tasks).toHaveLength(1)
    expect(page.result.totalSize).toBe(200)
    const moved = after.output - before.output
    // Each task holds ~128 KiB (the message and its echo): every task read would be ~25 MiB.
    console.info(`ListTasks {pageSize: 1} over 200 tasks of ~128 KiB: ${mib(moved)} out of Redis`)
    expect(moved).toBeLessThan(512 * KiB)
  })

  it('writes a 1 MiB answer streamed in 1,000 chunks once, not once per chunk', { timeout: 120_000 }, async () => {
    const chunks = 1000
    const streamer = agent((ctx, task) => {
      const size = Math.ceil(ctx.text.length / chunks)
      let artifactId: string | undefined
      for (let i = 0; i < chunks; i++) {
        artifactId = task.artifact(ctx.text.slice(i * size, (i + 1) * size), {
          ...(artifactId && { artifactId }),
          append: i > 0,
          lastChunk: i === chunks - 1,
        })
      }
      task.complete()
    })
    const server = await serve(streamer)
    const text = 'y'.repeat(1000 * KiB)
    const before = await traffic()
    const sent = await call(server, 'SendMessage', message(text))
    const after = await traffic()
    expect(sent.result.task.status.state).toBe('TASK_STATE_COMPLETED')
    const read = await call(server, 'GetTask', { id: sent.result.task.id })
    expect(read.result.artifacts[0].parts.map((part: { text: string }) => part.text).join('')).toBe(text)
    const written = after.input - before.input
    // The message and the answer: ~2 MiB. Rewriting the task at every chunk would write ~1.5 GiB (1 MiB and a growing
    // answer, 1,000 times).
    console.info(`a 1000 KiB message answered in ${chunks} chunks: ${mib(written)} written to Redis`)
    expect(written).toBeLessThan(4 * 2 * 1000 * KiB)
  })

  it("keeps a task's event log within its bytes (1 MiB) in Redis however many events its agent sends; a resume from before the window is told so", {
    timeout: 120_000,
  }, async () => {
    const updates = 20_000
    const chatty = agent((_ctx, task) => {
      for (let i = 0; i < updates; i++) task.working(`step ${i} ${'z'.repeat(200)}`)
      task.artifact('done')
      task.complete()
    })
    const server = await serve(chatty)
    const sent = await call(server, 'SendMessage', message('go'))
    expect(sent.result.task.status.state).toBe('TASK_STATE_COMPLETED')
    const id = sent.result.task.id
    const entries = `${server.prefix}{${id}}:entries`
    const held = Number(await raw.memory('USAGE', entries))
    const count = await raw.xlen(entries)
    // ~20,000 events of ~500 bytes: ~10 MB if every one were kept.
    console.info(`${updates} status updates on one task: ${count} entries kept in Redis, ${mib(held)}`)
    expect(held).toBeLessThan(1.5 * MiB)
    const store = createRedisStore({ url: redis.url, prefix: server.prefix })
    cleanups.push(() => store.close())
    const last = (await store.lastSeq(id))!
    expect(last).toBe(updates + 3)
    expect(await store.events(id, 0)).toBeUndefined()
    expect((await store.events(id, last - 3))!.map((event) => event.seq)).toEqual([last - 2, last - 1, last])
    const task = (await store.get(id))!
    expect(task.status.state).toBe('completed')
    expect(task.artifacts[0]!.parts[0]).toEqual({ kind: 'text', text: 'done' })
  })
})
