import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * The load-test agent (test/fixtures/load-agent.mjs) as its own process, so a test can read its file
 * descriptors and memory from /proc/<pid> and ask it (over IPC) to collect garbage and report its counters.
 * It imports the built a2a-runtime (runtime/dist), as test/fixtures/serve-agent.mjs does.
 */

const FIXTURE = fileURLToPath(new URL('../fixtures/load-agent.mjs', import.meta.url))
export const DIST_INDEX = fileURLToPath(new URL('../../runtime/dist/index.js', import.meta.url))
/** /proc is there (Linux): file descriptors and RSS can be read from outside the process. */
export const procfs = existsSync('/proc/self/fd') && existsSync('/proc/self/status')

export interface Probe {
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
  logged: { warn: number; error: number; expectedErrors: number; last: string[] }
  memory: NodeJS.MemoryUsage
}

export interface AgentProcess {
  child: ChildProcess
  pid: number
  url: string
  port: number
  /** stderr so far (the last 64 KB): the runtime's info lines and anything the process printed. */
  stderr(): string
  /** Counters and memory, after two garbage collections when `gc` is set. Times out after 10 s. */
  probe(options?: { gc?: boolean }): Promise<Probe>
  /** Lets every `hold:` task go on. */
  release(): void
  /** SIGKILL by PID when it is still running; resolves once it has exited. */
  kill(): Promise<void>
}

/** Fails with a pointer at `npm run build` when the built runtime the fixture imports is missing. */
export function assertRuntimeBuilt(): void {
  if (!existsSync(DIST_INDEX)) {
    throw new Error(`${DIST_INDEX} is missing: the agent process imports the built a2a-runtime. Run \`npm run build\` (npm test does) first.`)
  }
}

/** Starts the fixture with `env` (MAX_TASKS, TTL_MS, MAX_RUNNING, MAX_STREAMS…) and resolves once it listens. */
export async function startAgentProcess(env: Record<string, string> = {}): Promise<AgentProcess> {
  assertRuntimeBuilt()
  const child = spawn(process.execPath, ['--expose-gc', FIXTURE], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-65_536)))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const alive = () => child.exitCode === null && child.signalCode === null
  const kill = async () => {
    if (alive()) process.kill(child.pid!, 'SIGKILL')
    await exited
  }
  let url: string
  try {
    url = await new Promise<string>((resolve, reject) => {
      let out = ''
      const timer = setTimeout(() => reject(new Error(`the agent process did not listen within 15 s: ${stderr.slice(-1000)}`)), 15_000)
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk
        const match = /^url (\S+)$/m.exec(out)
        if (match) {
          clearTimeout(timer)
          resolve(match[1]!)
        }
      })
      child.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`the agent process exited (${code}) before listening: ${stderr.slice(-1000)}`))
      })
    })
  } catch (error) {
    await kill()
    throw error
  }

  let nextId = 0
  const waiting = new Map<number, (probe: Probe) => void>()
  child.on('message', (message: { type?: string; id?: number } & Probe) => {
    if (message?.type !== 'probe' || message.id === undefined) return
    waiting.get(message.id)?.(message)
    waiting.delete(message.id)
  })
  return {
    child,
    pid: child.pid!,
    url,
    port: Number(new URL(url).port),
    stderr: () => stderr,
    probe(options = {}) {
      const id = ++nextId
      return new Promise<Probe>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id)
          reject(new Error('the agent process did not answer a probe within 10 s'))
        }, 10_000)
        waiting.set(id, (probe) => {
          clearTimeout(timer)
          resolve(probe)
        })
        child.send({ type: 'probe', id, gc: options.gc === true })
      })
    },
    release: () => child.send({ type: 'release' }),
    kill,
  }
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
export async function pollUntil<T>(read: () => T | Promise<T>, done: (value: T) => boolean, timeoutMs: number, intervalMs = 100): Promise<T> {
  const until = Date.now() + timeoutMs
  let value = await read()
  while (!done(value) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
    value = await read()
  }
  return value
}
