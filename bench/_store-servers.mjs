// Starting the store bench's agent (servers/store-agent.mjs) on the server core, on a given store, and filling a
// durable store beforehand. A memory store can only be filled by the server that serves it, before it listens;
// a file or Redis store is filled by a process of its own (the same script and request path), and the server
// measured is a fresh process that opens what the fill left: for a file store, reading every task back at
// start, as after a restart.

import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort, pinPrefix, runToEnd, start, waitForCard } from './_processes.mjs'
import { SERVER_CORE } from './_server.mjs'
import { CARD_PATH } from './_targets.mjs'

const serversDir = fileURLToPath(new URL('./servers/', import.meta.url))
const script = join(serversDir, 'store-agent.mjs')

/** What the agent's process gets: ours minus what would change how node runs it, plus the bench's settings. */
function agentEnv(extra) {
  const env = { ...process.env, HOST: '127.0.0.1', ...extra }
  delete env.NODE_OPTIONS
  for (const key of Object.keys(env)) if (key.startsWith('VITEST') || key === 'NODE_V8_COVERAGE') delete env[key]
  return env
}

function settings({ store, maxTasks, fill, chunks, runtimeEntry }) {
  return {
    BENCH_STORE: store,
    ...(maxTasks && { BENCH_MAX_TASKS: String(maxTasks) }),
    ...(fill && { BENCH_FILL: String(fill) }),
    ...(chunks && { BENCH_CHUNKS: String(chunks) }),
    ...(runtimeEntry && { A2A_RUNTIME_ENTRY: runtimeEntry }),
  }
}

/**
 * Starts the agent on `options.store` and waits for its card (a memory fill happens first, so up to
 * `readyTimeoutMs`). Resolves with { name, url, pid, handle, fill, stop() }; `fill` is what the server said of
 * its own fill ({ filled, fillSec }), if it made one.
 */
export async function launchStoreAgent(name, options, { pinning, readyTimeoutMs = 30_000 }) {
  const port = await freePort()
  const [exe, ...args] = [...pinPrefix(pinning, SERVER_CORE), process.execPath, script]
  const handle = start(exe, args, {
    cwd: serversDir,
    env: agentEnv({ ...settings(options), PORT: String(port) }),
    name,
  })
  const url = `http://127.0.0.1:${port}/`
  try {
    await Promise.race([
      waitForCard(handle, new URL(CARD_PATH, url).href, { timeoutMs: readyTimeoutMs, intervalMs: 20 }),
      handle.spawnFailed,
    ])
  } catch (error) {
    await handle.stop()
    throw error
  }
  const fillLine = handle.stdout.split('\n').find((line) => line.startsWith('{"filled"'))
  return {
    name,
    url,
    pid: handle.child.pid,
    handle,
    fill: fillLine && JSON.parse(fillLine),
    stop: () => handle.stop(10_000),
  }
}

/**
 * Adds `count` tasks to a durable store from a process of its own, which exits once they are all written;
 * resolves with { filled, fillSec }. The fill only sets up the measure, so it may use both cores (nothing else
 * runs meanwhile; a file store's fill is CPU-bound, ~3 ms a task) and a wider libuv pool (64 threads, more of
 * a file store's fsyncs in flight at once); the servers measured are pinned and run with the default pool.
 */
export async function fillStore(options, count, { timeoutMs = 1_800_000 } = {}) {
  const [exe, ...args] = [process.execPath, script]
  const env = agentEnv({ ...settings({ ...options, fill: count }), BENCH_FILL_ONLY: '1', UV_THREADPOOL_SIZE: '64' })
  const { code, stdout, output } = await runToEnd(exe, args, { cwd: serversDir, env, name: 'fill', timeoutMs })
  const line = stdout.split('\n').find((l) => l.startsWith('{"filled"'))
  if (code !== 0 || !line) throw new Error(`filling ${options.store} failed (${code}):\n${output.slice(-3000)}`)
  return JSON.parse(line)
}
