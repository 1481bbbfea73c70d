// message/send throughput of the echo agent on each store: autocannon (load.mjs) on the load core against one
// server, or spread evenly over several instances of one agent (autocannon's connections take the URLs in
// turn). Every response body is checked. CPU time is read from /proc for each process that serves: the agent
// processes and the store's server (redis-server, or every process of the PostgreSQL cluster), so a reader can
// tell which one was the limit.
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { pinPrefix, runToEnd } from './_processes.mjs'
import { cpuSeconds, LOAD_CORE } from './_server.mjs'
import { targets } from './_targets.mjs'

const here = fileURLToPath(new URL('.', import.meta.url))
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
// The platform dialect's message/send of "hi", as the main bench sends it to ours; the echo agent answers it.
const { send, sendExpect } = targets.ours.dialect

/** CPU seconds of a store's server so far: a PostgreSQL cluster sums its processes; a redis-server is one. */
const backendCpu = (backend) => (backend.cpuSeconds ? backend.cpuSeconds() : cpuSeconds(backend.pid))

/**
 * One load run against `servers` (the agent processes sharing the load) at `connections`; `backend` (optional) is
 * the store's server behind them (from _redis.mjs or _postgres.mjs). Resolves with load.mjs's figures plus
 * `serverCpu` (each agent, in cores), `backendCpu`, and `failed` (why the run does not count) when a response was
 * wrong.
 */
export async function sendLoad(servers, { backend, connections, durationSec, warmupSec, maxRequests, pinning }) {
  const url = servers.length === 1 ? servers[0].url : servers.map((server) => server.url)
  const config = {
    url,
    method: 'POST',
    path: '/',
    headers: send.headers,
    body: send.body,
    connections,
    durationSec,
    maxRequests,
    warmupSec,
    expect: sendExpect,
  }
  const [exe, ...args] = [
    ...pinPrefix(pinning, LOAD_CORE),
    process.execPath,
    join(here, 'load.mjs'),
    JSON.stringify(config),
  ]
  const pids = servers.map((server) => server.pid)
  const cpuBefore = pids.map(cpuSeconds)
  const backendBefore = backend ? backendCpu(backend) : NaN
  const started = performance.now()
  const { code, stdout, output } = await runToEnd(exe, args, {
    cwd: here,
    env: { ...process.env, NODE_OPTIONS: '' },
    name: 'load.mjs',
    timeoutMs: (warmupSec + durationSec) * 1000 + 60_000,
  })
  const elapsedSec = (performance.now() - started) / 1000
  const line = stdout.trim().split('\n').at(-1)
  if (code !== 0 || !line?.startsWith('{')) throw new Error(`load.mjs failed (${code}):\n${output.slice(-3000)}`)
  const result = JSON.parse(line)
  // Over the whole child run, warm-up included: what the servers were busy with.
  result.serverCpu = pids.map((pid, i) => (cpuSeconds(pid) - cpuBefore[i]) / elapsedSec)
  result.backendCpu = backend ? (backendCpu(backend) - backendBefore) / elapsedSec : undefined
  for (const server of servers)
    if (!server.handle.alive)
      throw new Error(`${server.name} exited during the load:\n${server.handle.output.slice(-3000)}`)
  const bad = {
    'non-2xx': result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    'wrong bodies': result.mismatches,
  }
  const reasons = Object.entries(bad)
    .filter(([, n]) => n > 0)
    .map(([what, n]) => `${n} ${what}`)
  if (result.requests === 0) reasons.push('no successful request')
  if (reasons.length) result.failed = reasons.join(', ')
  await pause(1000) // the server's tail (closing sockets, a store's writes landing) stays out of the next run
  return result
}
