// Starting one server under test on 127.0.0.1 and a free port, pinned to the server core, and the checks
// made before any load: a wrong answer served fast is worth nothing, so a server that does not answer the
// request with a completed task holding the echoed text stops the bench.
import { readdirSync, readFileSync } from 'node:fs'
import { postJson, postStream } from './_http.mjs'
import { freePort, pinPrefix, start, waitForCard } from './_processes.mjs'
import { CARD_PATH } from './_targets.mjs'

export const SERVER_CORE = 0
export const LOAD_CORE = 1

/** The environment a server gets: ours, minus anything that would change how node runs it. */
function serverEnv(port, extra) {
  const env = { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...extra }
  if (!extra?.NODE_OPTIONS) delete env.NODE_OPTIONS
  for (const key of Object.keys(env)) if (key.startsWith('VITEST') || key === 'NODE_V8_COVERAGE') delete env[key]
  return env
}

/**
 * Starts `target` and waits for its card; resolves with { url, handle, readyMs, pid, cpuSeconds(), stop() }.
 * `target.command({ port })` gives the command (a server that takes its port as an argument, as wrangler does, has
 * it there too); `target.readyTimeoutMs` bounds the wait for the card; `target.processGroup` says the server is
 * several processes (wrangler and its workerd), whose CPU time is then summed.
 */
export async function launch(target, { pinning, env }) {
  const port = await freePort()
  const { command, args, cwd } = await target.command({ port })
  // taskset execs the command, so the PID we hold (and signal) is the server's own.
  const [exe, ...rest] = [...pinPrefix(pinning, SERVER_CORE), command, ...args]
  const handle = start(exe, rest, { cwd, env: serverEnv(port, env), name: target.name })
  const url = `http://127.0.0.1:${port}/`
  try {
    const readyMs = await Promise.race([
      waitForCard(handle, new URL(CARD_PATH, url).href, { timeoutMs: target.readyTimeoutMs }),
      handle.spawnFailed,
    ])
    const pid = handle.child.pid
    // Detached, the server leads its own process group: the group is the server and whatever it started.
    const cpu = target.processGroup ? () => groupCpuSeconds(pid) : () => cpuSeconds(pid)
    return { url, handle, readyMs, pid, cpuSeconds: cpu, stop: () => handle.stop() }
  } catch (error) {
    await handle.stop()
    throw error
  }
}

/** One send and one stream, checked in full; resolves with the number of events the stream carried. */
export async function verify(target, server) {
  const { dialect } = target
  try {
    const at = (request) => new URL(request.path ?? '/', server.url).href
    dialect.checkSend(await postJson(at(dialect.send), dialect.send))
    const events = await postStream(at(dialect.stream), dialect.stream)
    dialect.checkStream(events)
    return { eventsPerStream: events.length }
  } catch (error) {
    throw new Error(`${target.name} did not answer correctly: ${error.message}\n${server.handle.output.slice(-2000)}`)
  }
}

const CLOCK_TICKS = 100 // USER_HZ, 100 on every Linux we run on

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces): state, ppid, pgrp, … */
const statFields = (pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
const cpuOf = (fields) => (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS // utime + stime

/** CPU seconds the server process has used so far (user + system), or NaN where /proc is missing. */
export function cpuSeconds(pid) {
  try {
    return cpuOf(statFields(pid))
  } catch {
    return NaN
  }
}

/** CPU seconds the processes of process group `group` have used so far, those still running; NaN without /proc. */
function groupCpuSeconds(group) {
  let entries
  try {
    entries = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))
  } catch {
    return NaN
  }
  let total = 0
  for (const pid of entries) {
    try {
      const fields = statFields(pid)
      if (Number(fields[2]) === group) total += cpuOf(fields)
    } catch {} // gone meanwhile
  }
  return total
}
