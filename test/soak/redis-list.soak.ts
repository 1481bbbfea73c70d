import { serveAgent } from 'a2a-runtime'
import { createRedisStore } from 'a2a-runtime/redis-store'
import type { TaskQuery, TaskStore } from 'a2a-runtime/store'
import { Redis } from 'ioredis'
import { expect, it } from 'vitest'
import { ScriptedTask, StatusClock, text } from '../../runtime/src/stores/contract/_scripted-task.ts'
import type { RedisTaskStore } from '../../runtime/src/stores/redis/store.ts'
import { rpc } from '../_rpc.ts'
import { echoAgent } from '../runtime/_agents.ts'
import { captureLogger } from '../runtime/_logger.ts'
import { startRedis } from '../runtime/_redis.ts'

/**
 * `npm run soak -- redis-list`: the attack on ListTasks over the Redis store. 200 tasks of 2 MiB in Redis (half an
 * answer of 2 MiB, half a question of 2 MiB); three clients loop ListTasks {pageSize: 100, historyLength: 0} while
 * a fourth sends messages. Before, each page read its 100 tasks whole: ~200 MiB out of Redis, pages of 1.7 s (p50)
 * here and sends behind them on the store's connection at p99 3.2 s (on a slower machine, past the store's 5 s
 * timeout: 503s, sends p99 24 s). Now a page moves its tasks' summaries (< 1 MiB), answers in < 250 ms, and the
 * sends' p99 stays < 250 ms. `SOAK_SECONDS` (default 20) bounds the loops, as do their counts.
 *
 * The server runs in this process, on the runtime's source. ListTasks's view (`historyLength`, `includeArtifacts`)
 * reaches the store's `list` when the v1 binding passes it; while it does not, the server's store stands in for the
 * binding and adds the view ListTasks asked for (historyLength 0, no artifacts), and the soak says so.
 */

const KiB = 1024
const MiB = 1024 * KiB
const TASKS = 200
const LISTERS = 3
const SECONDS = Number(process.env.SOAK_SECONDS ?? 20)
const MAX_PAGES = 3000
const MAX_SENDS = 5000
const BUDGET_MS = 250

async function timedRpc(
  url: string,
  method: string,
  params: unknown,
): Promise<{ status: number; ms: number; body: any }> {
  const started = performance.now()
  const { status, body } = await rpc(url, method, params, { version: '1.0' })
  return { status, ms: performance.now() - started, body }
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}

it(`${TASKS} tasks of 2 MiB in Redis, ${LISTERS} clients looping ListTasks {pageSize: 100, historyLength: 0}, one sending: pages < 1 MiB and < ${BUDGET_MS} ms, sends p99 < ${BUDGET_MS} ms`, {
  timeout: 600_000,
}, async () => {
  const redis = await startRedis()
  const raw = new Redis(redis.url)
  const prefix = 'soak-list:'
  const output = async () => Number(/^total_net_output_bytes:(\d+)/m.exec(await raw.info('stats'))![1])
  const store = createRedisStore({ url: redis.url, prefix })
  let viewFromBinding = false
  // Stands in for the binding until it passes ListTasks's view to the store (see above).
  const served = new Proxy(store, {
    get(target, name) {
      if (name === 'list')
        return (query: TaskQuery & { historyLength?: number; includeArtifacts?: boolean }) => {
          if ('historyLength' in query || 'includeArtifacts' in query) viewFromBinding = true
          return target.list(viewFromBinding ? query : { ...query, historyLength: 0, includeArtifacts: false })
        }
      const value = Reflect.get(target, name, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  }) as RedisTaskStore as TaskStore
  const server = await serveAgent(echoAgent, {
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
    logger: captureLogger(),
    store: served,
  })
  try {
    const seeding = performance.now()
    const clock = new StatusClock()
    const big = 'x'.repeat(2 * MiB)
    for (let i = 0; i < TASKS; i++) {
      const run = await ScriptedTask.start(store, clock, { text: i % 2 ? `${i} ${big}` : `hello ${i}` })
      run.working()
      if (i % 2 === 0) run.artifact({ parts: [text(`${i} ${big}`)] })
      await run.complete(`done ${i}`)
    }
    const seeded = performance.now() - seeding
    const memory = Number(/^used_memory:(\d+)/m.exec(await raw.info('memory'))![1])

    // One page alone: what it moves out of Redis.
    const alone: number[] = []
    for (let i = 0; i < 5; i++) {
      const before = await output()
      const page = await timedRpc(server.url, 'ListTasks', { pageSize: 100, historyLength: 0 })
      alone.push((await output()) - before)
      expect(page.status).toBe(200)
      expect(page.body.result.tasks).toHaveLength(100)
    }

    const pages: Array<{ ms: number; status: number }> = []
    const sends: Array<{ ms: number; status: number; state?: string }> = []
    const deadline = performance.now() + SECONDS * 1000
    let listing = true
    const before = await output()
    const started = performance.now()
    const lister = async () => {
      let pageToken = ''
      while (performance.now() < deadline && pages.length < MAX_PAGES) {
        const page = await timedRpc(server.url, 'ListTasks', {
          pageSize: 100,
          historyLength: 0,
          ...(pageToken && { pageToken }),
        })
        pages.push({ ms: page.ms, status: page.status })
        pageToken = page.body.result?.nextPageToken ?? ''
      }
    }
    const sender = async () => {
      // Sends start once the listings are under way, and stop with them.
      await new Promise((resolve) => setTimeout(resolve, 200))
      for (let i = 0; listing && i < MAX_SENDS; i++) {
        const answer = await timedRpc(server.url, 'SendMessage', {
          message: { role: 'ROLE_USER', messageId: `send-${i}`, parts: [{ text: `ping ${i}` }] },
        })
        sends.push({ ms: answer.ms, status: answer.status, state: answer.body.result?.task?.status?.state })
      }
    }
    const sending = sender()
    await Promise.all(Array.from({ length: LISTERS }, lister))
    listing = false
    await sending
    const moved = (await output()) - before
    const took = (performance.now() - started) / 1000

    const pageMs = pages.map((page) => page.ms)
    const sendMs = sends.map((send) => send.ms)
    const failedSends = sends.filter((send) => send.status !== 200 || send.state !== 'TASK_STATE_COMPLETED')
    console.log(
      [
        `${TASKS} tasks of 2 MiB in Redis (used_memory ${(memory / MiB).toFixed(0)} MiB, seeded in ${(seeded / 1000).toFixed(1)} s); ListTasks's view from ${viewFromBinding ? 'the binding' : 'the soak (the binding does not pass it yet)'}`,
        `  one page of 100 alone: ${alone.map((bytes) => `${(bytes / KiB).toFixed(1)} KiB`).join(', ')} out of Redis`,
        `  ${LISTERS} listers, ${pages.length} pages in ${took.toFixed(1)} s: p50 ${quantile(pageMs, 0.5).toFixed(1)} ms, p99 ${quantile(pageMs, 0.99).toFixed(1)} ms, max ${Math.max(...pageMs).toFixed(1)} ms; ${pages.filter((page) => page.status !== 200).length} not 200`,
        `  Redis sent ${(moved / MiB).toFixed(2)} MiB meanwhile: ${(moved / Math.max(1, pages.length) / KiB).toFixed(1)} KiB per page (the sends' traffic included)`,
        `  sender: ${sends.length} sends, p50 ${quantile(sendMs, 0.5).toFixed(1)} ms, p99 ${quantile(sendMs, 0.99).toFixed(1)} ms, max ${Math.max(...sendMs).toFixed(1)} ms; ${failedSends.length} failed`,
      ].join('\n'),
    )
    expect(Math.max(...alone)).toBeLessThan(MiB)
    expect(moved / pages.length).toBeLessThan(MiB)
    expect(pages.every((page) => page.status === 200)).toBe(true)
    expect(Math.max(...pageMs)).toBeLessThan(BUDGET_MS)
    expect(failedSends).toEqual([])
    expect(sends.length).toBeGreaterThan(0)
    expect(quantile(sendMs, 0.99)).toBeLessThan(BUDGET_MS)
  } finally {
    await server.close()
    raw.disconnect()
    await redis.stop()
  }
})
