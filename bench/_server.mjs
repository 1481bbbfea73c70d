// Starting one server under test on 127.0.0.1 and a free port, pinned to the server core, and the checks
// made before any load: a wrong answer served fast is worth nothing, so a server that does not answer the
// request with a completed task holding the echoed text stops the bench.
import { readFileSync } from 'node:fs'
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

/** Starts `target` and waits for its card; resolves with { url, handle, readyMs, stop() }. */
export async function launch(target, { pinning, env }) {
  const port = await freePort()
  const { command, args, cwd } = target.command()
  // taskset execs the command, so the PID we hold (and signal) is the server's own.
  const [exe, ...rest] = [...pinPrefix(pinning, SERVER_CORE), command, ...args]
  const handle = start(exe, rest, { cwd, env: serverEnv(port, env), name: target.name })
  const url = `http://127.0.0.1:${port}/`
  try {
    const readyMs = await Promise.race([waitForCard(handle, new URL(CARD_PATH, url).href), handle.spawnFailed])
    return { url, handle, readyMs, pid: handle.child.pid, stop: () => handle.stop() }
  } catch (error) {
    await handle.stop()
    throw error
  }
}

/** One send and one stream, checked in full; resolves with the number of events the stream carried. */
export async function verify(target, server) {
  const { dialect } = target
  try {
    dialect.checkSend(await postJson(server.url, dialect.send))
    const events = await postStream(server.url, dialect.stream)
    dialect.checkStream(events)
    return { eventsPerStream: events.length }
  } catch (error) {
    throw new Error(`${target.name} did not answer correctly: ${error.message}\n${server.handle.output.slice(-2000)}`)
  }
}

const CLOCK_TICKS = 100 // USER_HZ, 100 on every Linux we run on

/** CPU seconds the server process has used so far (user + system), or NaN where /proc is missing. */
export function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
  } catch {
    return NaN
  }
}
