// The workloads. Each load runs in a child process pinned to the load core (load.mjs for request/response
// rows via autocannon, stream-load.mjs for streams), bounded in time and in count; the server's own CPU use
// over the row is read from /proc so a reader can tell a saturated server from an idle one.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { postJson } from './_http.mjs'
import { pinPrefix, runToEnd } from './_processes.mjs'
import { LOAD_CORE, launch, verify } from './_server.mjs'
import { CARD_PATH, listTasksRequest } from './_targets.mjs'

const here = fileURLToPath(new URL('.', import.meta.url))
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs a load script with its JSON config on the load core; resolves with the JSON line it prints. */
export async function runLoad(script, config, { pinning, server }) {
  const [exe, ...args] = [
    ...pinPrefix(pinning, LOAD_CORE),
    process.execPath,
    join(here, script),
    JSON.stringify(config),
  ]
  const cpuBefore = server.cpuSeconds()
  const started = performance.now()
  const timeoutMs = ((config.warmupSec ?? 0) + config.durationSec) * 1000 + 60_000
  const { code, stdout, output } = await runToEnd(exe, args, {
    cwd: here,
    env: { ...process.env, NODE_OPTIONS: '' },
    name: script,
    timeoutMs,
  })
  const elapsedSec = (performance.now() - started) / 1000
  const line = stdout.trim().split('\n').at(-1)
  if (code !== 0 || !line?.startsWith('{')) throw new Error(`${script} failed (${code}):\n${output.slice(-3000)}`)
  const result = JSON.parse(line)
  // Over the whole child run (warm-up included), which is what the server was busy with.
  const serverCpuSeconds = server.cpuSeconds() - cpuBefore
  result.serverCpu = serverCpuSeconds / elapsedSec
  // Per good answer, the warm-up's included: what one costs the server, whatever else bounded the rate.
  result.serverCpuPerCallUs =
    (serverCpuSeconds / ((result.requests ?? result.streams) + (result.warmupCount ?? 0))) * 1e6
  if (!server.handle.alive)
    throw new Error(`${server.handle.name} exited during ${script}:\n${server.handle.output.slice(-3000)}`)
  await pause(250) // let the server close the load's sockets and settle before the next row
  return result
}

/** Why a request/response row failed (load.mjs's or grpc-load.mjs's counts), or undefined. */
export function requestFailure(r) {
  const bad = { 'non-2xx': r.non2xx, errors: r.errors, timeouts: r.timeouts, 'wrong bodies': r.mismatches }
  const reasons = Object.entries(bad)
    .filter(([, n]) => n > 0)
    .map(([what, n]) => `${n} ${what}`)
  if (r.requests === 0) reasons.push('no successful request')
  return reasons.length ? reasons.join(', ') : undefined
}

/** message/send at `connections`: req/s and latency of completed tasks. */
export async function sendRow(target, server, connections, { profile, pinning, warm }) {
  const { send, sendExpect } = target.dialect
  const config = {
    url: server.url,
    method: 'POST',
    path: send.path ?? '/',
    headers: send.headers,
    body: send.body,
    connections,
    durationSec: profile.durationSec,
    maxRequests: profile.maxRequests,
    warmupSec: warm ? profile.warmupSec : 0,
    expect: sendExpect,
  }
  const result = await runLoad('load.mjs', config, { pinning, server })
  return { ...result, connections, failed: requestFailure(result) }
}

/** GET of the agent card: req/s and latency. */
export async function cardRow(_target, server, { profile, pinning, warm }) {
  const config = {
    url: server.url,
    method: 'GET',
    path: CARD_PATH,
    connections: profile.cardConcurrency,
    durationSec: profile.durationSec,
    maxRequests: profile.maxRequests,
    warmupSec: warm ? profile.warmupSec : 0,
    expect: ['"name"'],
  }
  const result = await runLoad('load.mjs', config, { pinning, server })
  return { ...result, connections: profile.cardConcurrency, failed: requestFailure(result) }
}

/** message/stream: streams/s, time to first event, whole-stream latency, events per stream. */
export async function streamRow(target, server, { profile, pinning, warm }) {
  const { stream, streamExpect } = target.dialect
  const config = {
    url: server.url,
    path: stream.path ?? '/',
    headers: stream.headers,
    body: stream.body,
    concurrency: profile.streamConcurrency,
    durationSec: profile.durationSec,
    maxStreams: profile.maxRequests,
    warmupSec: warm ? profile.warmupSec : 0,
    expect: streamExpect,
  }
  const result = await runLoad('stream-load.mjs', config, { pinning, server })
  return { ...result, connections: profile.streamConcurrency, failed: streamFailure(result) }
}

/** Why a stream row failed (stream-load.mjs's or grpc-load.mjs's counts), or undefined. */
export function streamFailure(result) {
  const reasons = []
  if (result.failed > 0)
    reasons.push(`${result.failed} bad streams (first: ${JSON.stringify(result.failures[0]).slice(0, 300)})`)
  if (result.streams === 0) reasons.push('no complete stream')
  if (!Number.isFinite(result.eventsPerStream))
    reasons.push(`events per stream vary: ${JSON.stringify(result.eventCounts)}`)
  return reasons.length ? reasons.join(', ') : undefined
}

/** The round whose rate is the median (the lower middle for an even count), with every round's rate beside it. */
function medianRound(rounds, rate) {
  const sorted = [...rounds].sort((a, b) => (a[rate] ?? 0) - (b[rate] ?? 0))
  const failed = rounds.find((round) => round.failed)
  return {
    ...sorted[(sorted.length - 1) >> 1],
    ...(failed && { failed: failed.failed }),
    rounds: rounds.map((round) => round[rate]),
  }
}

/**
 * One row of servers measured in `rounds` rounds that take them in turn, alternating the order: the machine's speed
 * drifts (a shared VM: one run's ceiling was 18k req/s, the next one's 28k), and interleaving shifts every server
 * alike, so the ratios hold where one-server-after-another figures did not. `run(target, warm)` measures one
 * server once (warm in the first round). Resolves with each server's median round by `rate`, by name; every
 * round's rate is kept in it (`rounds`).
 */
export async function alternatingRounds(order, rounds, rate, run) {
  const measured = Object.fromEntries(order.map((target) => [target.name, []]))
  for (let round = 0; round < rounds; round++) {
    for (const target of round % 2 ? [...order].reverse() : order)
      measured[target.name].push(await run(target, round === 0))
  }
  return Object.fromEntries(order.map((target) => [target.name, medianRound(measured[target.name], rate)]))
}

/** SIGUSR2 to the server (memory-probe.mjs answers into `file`); resolves with its process.memoryUsage(). */
async function probeMemory(server, file, previousSeq) {
  process.kill(server.pid, 'SIGUSR2')
  const deadline = performance.now() + 15_000
  for (;;) {
    try {
      const usage = JSON.parse(readFileSync(file, 'utf8'))
      if (usage.seq > previousSeq) return usage
    } catch {}
    if (performance.now() > deadline)
      throw new Error(`${server.handle.name} did not answer the memory probe:\n${server.handle.output.slice(-2000)}`)
    await pause(20)
  }
}

/**
 * A fresh server with memory-probe.mjs preloaded: memory at rest, after `checkpoint` tasks (ours' retention
 * cap), and after all `profile.memoryTasks` (message/send at profile.memoryConcurrency, bounded by
 * profile.memoryBudgetSec in all). The divisor for bytes per task is the number of tasks the server still
 * holds (ListTasks totalSize) when it holds fewer than were sent.
 */
export async function memoryRun(target, { profile, pinning, tmp, env, checkpoint }) {
  const file = join(tmp, `memory-${target.name}.json`)
  const probe = pathToFileURL(join(here, 'memory-probe.mjs')).href
  const server = await launch(target, {
    pinning,
    env: { ...env, NODE_OPTIONS: `--expose-gc --import=${probe}`, BENCH_MEMORY_FILE: file },
  })
  try {
    await verify(target, server) // also loads the code paths, so the baseline is not the cold process
    let sent = 2 // the check made one task with message/send and one with message/stream
    const baseline = await probeMemory(server, file, 0)
    const deadline = performance.now() + profile.memoryBudgetSec * 1000
    const { send, sendExpect } = target.dialect
    const leg = async (count) => {
      const durationSec = Math.max(1, (deadline - performance.now()) / 1000)
      const config = {
        url: server.url,
        method: 'POST',
        path: '/',
        headers: send.headers,
        body: send.body,
        connections: profile.memoryConcurrency,
        durationSec,
        maxRequests: count,
        warmupSec: 0,
        expect: sendExpect,
      }
      const result = await runLoad('load.mjs', config, { pinning, server })
      const failed = requestFailure(result)
      if (failed) throw new Error(`${target.name}: memory load failed: ${failed}`)
      sent += result.requests
      return result
    }
    const first = Math.min(checkpoint, profile.memoryTasks)
    await leg(first)
    const atCheckpoint = { sent, usage: await probeMemory(server, file, baseline.seq) }
    let after = atCheckpoint.usage
    if (profile.memoryTasks > first && performance.now() < deadline) {
      await leg(profile.memoryTasks - first)
      after = await probeMemory(server, file, after.seq)
    }
    const held = await heldTasks(target, server)
    const divisor =
      held === undefined
        ? { count: sent, what: 'sent (holds no task)' }
        : held < sent
          ? { count: held, what: 'held (ListTasks)' }
          : { count: sent, what: 'sent (all held)' }
    const heapDelta = after.heapUsed - baseline.heapUsed
    const extra = sent - atCheckpoint.sent
    return {
      sent,
      held: held ?? 0,
      timeBounded: sent < profile.memoryTasks + 2,
      baseline,
      checkpoint: { tasks: atCheckpoint.sent, heapUsed: atCheckpoint.usage.heapUsed, rss: atCheckpoint.usage.rss },
      after,
      heapDelta,
      rssDelta: after.rss - baseline.rss,
      divisor,
      bytesPerTask: heapDelta / divisor.count,
      // Heap growth per task beyond the checkpoint: about 0 once a store stops growing.
      bytesPerExtraTask: extra > 0 ? (after.heapUsed - atCheckpoint.usage.heapUsed) / extra : NaN,
    }
  } finally {
    await server.stop()
  }
}

/** How many tasks the server holds (undefined for the ceiling, which keeps none). */
async function heldTasks(target, server) {
  if (target.name === 'ceiling') return undefined
  const answer = await postJson(server.url, listTasksRequest)
  const total = answer?.result?.totalSize
  if (!Number.isInteger(total))
    throw new Error(`${target.name}: ListTasks gave no totalSize: ${JSON.stringify(answer).slice(0, 300)}`)
  return total
}
