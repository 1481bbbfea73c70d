import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { assertRuntimeBuilt, type FixtureAgent, type FixtureProbe, startFixtureAgent } from './_fixture-process.ts'

/**
 * The load-test agent (test/fixtures/load-agent.mjs) as its own process, so a test can read its file
 * descriptors and memory from /proc/<pid> and ask it (over IPC) to collect garbage and report its counters.
 * It imports the built a2a-runtime (runtime/dist), as test/fixtures/serve-agent.mjs does.
 */

/** /proc is there (Linux): file descriptors and RSS can be read from outside the process. */
export const procfs = existsSync('/proc/self/fd') && existsSync('/proc/self/status')

export interface Probe extends FixtureProbe {
  /** Agent turns running now, the most at once, started and finished since the process began. */
  active: number
  peak: number
  started: number
  finished: number
  storeSize: number
  /** Connections the HTTP server holds (server.getConnections). */
  connections: number
  /** Open file descriptors as the process counts them; -1 without /proc. */
  fds: number
  /** Warnings and errors the runtime logged; `expectedErrors` (the agent's "throw") apart. */
  logged: FixtureProbe['logged'] & { expectedErrors: number }
}

/** `release()` lets every `hold:` task go on. */
export type AgentProcess = FixtureAgent<Probe>

/** Starts the fixture with `env` (MAX_TASKS, TTL_MS, MAX_RUNNING, MAX_STREAMS…) and resolves once it listens. */
export async function startAgentProcess(env: Record<string, string> = {}): Promise<AgentProcess> {
  // load-agent.mjs imports the built runtime whatever A2A_RUNTIME_ENTRY says.
  assertRuntimeBuilt()
  return startFixtureAgent<Probe>('load-agent.mjs', env)
}

/** Open file descriptors of `pid` and how many of them are sockets, read from outside; undefined without /proc. */
export function fdsOf(pid: number): { total: number; sockets: number } | undefined {
  if (!procfs) return undefined
  let total = 0
  let sockets = 0
  let entries: string[]
  try {
    entries = readdirSync(`/proc/${pid}/fd`)
  } catch {
    return undefined
  }
  for (const entry of entries) {
    let target: string
    try {
      target = readlinkSync(`/proc/${pid}/fd/${entry}`)
    } catch {
      continue // closed between the listing and the read
    }
    total++
    if (target.startsWith('socket:')) sockets++
  }
  return { total, sockets }
}

/** Resident memory now and at its highest (VmRSS, VmHWM) in bytes; undefined without /proc. */
export function rssOf(pid: number): { rss: number; peak: number } | undefined {
  if (!procfs) return undefined
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? NaN) * 1024
    return { rss: kb('VmRSS'), peak: kb('VmHWM') }
  } catch {
    return undefined
  }
}

/** Polls `read` every `intervalMs` until `done` holds of its value or `timeoutMs` passes; returns the last value. */
export async function pollUntil<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
  intervalMs = 100,
): Promise<T> {
  const until = Date.now() + timeoutMs
  let value = await read()
  while (!done(value) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
    value = await read()
  }
  return value
}
