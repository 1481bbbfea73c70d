// The agent of the store benchmarks (bench/stores.mjs), served by serveAgent from the runtime build named by
// A2A_RUNTIME_ENTRY (default: this clone's runtime/dist/index.js) on 127.0.0.1:PORT, with a silent logger.
//
//   BENCH_STORE      memory | file:<dir> | redis://host:port/db[?prefix=…] | postgres://…[?schema=…]
//                    (default memory)
//   BENCH_MAX_TASKS  raises the store's task cap (and the byte budget with it) so a large fill stays whole;
//                    unset: the store's defaults, as a deployment gets them
//   BENCH_FILL       tasks to make before listening (see fill() below)
//   BENCH_FILL_ONLY  exit once the fill is written (a durable store filled for another process to serve)
//   BENCH_CHUNKS     echo the text back in this many chunks of one artifact instead of one artifact
//
// What a message asks for: "fail" fails the task (a share of the filled tasks, so a status filter selects
// some); "follow <ms>" emits, after <ms>, one artifact carrying the time it was emitted (ms since the epoch,
// fractional), waits a little and completes (the cross-instance latency measure); anything else is echoed.

import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'

const entry = process.env.A2A_RUNTIME_ENTRY ?? fileURLToPath(new URL('../../runtime/dist/index.js', import.meta.url))
const { createA2AApp, createMemoryStore, defineAgent, serveAgent, ...root } = await import(entry)
// The file and Redis stores are subpaths of the runtime; a build from before they were (an A/B run) has them at the
// root.
const subpath = async (name) => await import(entry.replace(/index\.js$/, `entries/${name}.js`))
const createFileStore = root.createFileStore ?? (await subpath('file-store')).createFileStore
const createRedisStore = root.createRedisStore ?? (await subpath('redis-store')).createRedisStore

const chunks = Number(process.env.BENCH_CHUNKS ?? 0)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const agent = defineAgent({
  card: { name: 'Store bench', description: 'Echoes the message', version: '1.0.0', capabilities: { streaming: true } },
  async execute(ctx, task) {
    const text = ctx.text
    if (text === 'fail') return task.fail('asked to fail')
    if (text.startsWith('follow ')) {
      await sleep(Number(text.slice('follow '.length)))
      task.artifact(String(performance.timeOrigin + performance.now()))
      // The follower has the artifact before the task ends, so its stream is not cut short by the end.
      await sleep(20)
      return task.complete()
    }
    if (chunks > 0) {
      const size = Math.ceil(text.length / chunks)
      for (let i = 0; i < chunks; i++)
        task.artifact(text.slice(i * size, (i + 1) * size), {
          artifactId: 'echo',
          append: i > 0,
          lastChunk: i === chunks - 1,
        })
      return task.complete()
    }
    task.artifact(`Echo: ${text}`)
    task.complete()
  },
})

const silent = { debug() {}, info() {}, warn() {}, error() {} }
const store = await openStore(
  process.env.BENCH_STORE ?? 'memory',
  process.env.BENCH_MAX_TASKS ? Number(process.env.BENCH_MAX_TASKS) : undefined,
)
// A 1 MiB message is more than the default request body limit (1 MiB, envelope included).
const maxBodySize = 4 * 1024 * 1024

async function openStore(setting, maxTasks) {
  // A raised task cap needs a byte budget to match: 100,000 small tasks are ~130 MB against 128 MiB by default.
  const raised = maxTasks ? { maxTasks, maxBytes: 4 * 1024 ** 3 } : {}
  if (setting === 'memory') return createMemoryStore(raised)
  if (setting.startsWith('file:')) return createFileStore({ dir: setting.slice('file:'.length), ...raised })
  if (setting.startsWith('redis://')) return createRedisStore({ url: setting, ...(maxTasks && { maxTasks }) })
  // Imported only here: builds from before the PostgreSQL store have no such entry.
  if (/^postgres(ql)?:\/\//.test(setting))
    return (await subpath('postgres-store')).createPostgresStore({ url: setting, ...(maxTasks && { maxTasks }) })
  throw new Error(`BENCH_STORE: memory, file:<dir>, redis://… or postgres://… (got ${setting})`)
}

/**
 * Makes `count` tasks the way clients make them: SendMessage requests (A2A v1.0) answered by the app's own
 * request handler in this process (`app.fetch`, the whole path of a request but the socket), `concurrency` at
 * a time, before the server listens. One in ten asks to fail.
 */
async function fill(count, concurrency = 64) {
  const app = createA2AApp(agent, { store, logger: silent, maxBodySize })
  filler = app
  let next = 0
  const worker = async () => {
    while (next < count) {
      const n = next++
      const text = n % 10 === 9 ? 'fail' : `task ${n}`
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: n,
        method: 'SendMessage',
        params: { message: { role: 'ROLE_USER', messageId: `fill-${n}`, parts: [{ text }] } },
      })
      const response = await app.fetch(
        new Request('http://127.0.0.1/', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'a2a-version': '1.0', host: '127.0.0.1' },
          body,
        }),
      )
      const answer = await response.json()
      const state = answer?.result?.task?.status?.state
      if (state !== (text === 'fail' ? 'TASK_STATE_FAILED' : 'TASK_STATE_COMPLETED'))
        throw new Error(`fill: task ${n} answered ${JSON.stringify(answer).slice(0, 300)}`)
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, worker))
  // The bench reads how the fill went from the first line of output.
  process.stdout.write(`${JSON.stringify({ filled: count, fillSec: (performance.now() - started) / 1000 })}\n`)
}

let filler
const fillCount = Number(process.env.BENCH_FILL ?? 0)
if (fillCount > 0) await fill(fillCount)
if (process.env.BENCH_FILL_ONLY) {
  // Closes the store: a file store's writes land and its directory lock goes; Redis and PostgreSQL connections
  // close.
  await filler?.close()
  process.exit(0)
}
await serveAgent(agent, { hostname: '127.0.0.1', port: Number(process.env.PORT), logger: silent, store, maxBodySize })
