import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../_support.ts'
import { assertRuntimeBuilt, fixturePath } from '../runtime/_fixture-process.ts'
import { assertInstalled, type JsRuntime, REPO_ROOT } from './_runtimes.ts'

/** The key the agent process accepts (A2A_API_KEY); requests send it as X-API-Key. */
/** Webhooks on 127.0.0.1 (the test's receiver) are let through the push guard, over http. */
const PUSH_SETTINGS = { A2A_PUSH_ALLOW: '127.0.0.1', A2A_PUSH_ALLOW_HTTP: 'true' }
export const API_KEY = 'runtime-suite-key-5e1d'

/** test/fixtures/runtime-agent.mjs running on one runtime. */
export interface AgentProcess {
  pid: number
  url: string
  /** The server it reports it is served by: `node`, `bun` or `deno`. */
  server: string
  /** stderr so far (the runtime's log lines and anything the runtime itself printed), for failure messages. */
  stderr(): string
  /** Resolves with how the process ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** SIGTERM by PID, then SIGKILL if it is still running once the SIGTERM'd shutdown had its time; resolves at exit. */
  stop(): Promise<void>
}

/** How long a stopped process may take to shut down gracefully before it is killed. */
const STOP_GRACE_MS = 15_000

/**
 * Starts the fixture agent on `runtime` (cwd the repository root, auth on with API_KEY) and resolves once it
 * prints its `url … runtime …` line. No clock of its own: the hook's timeout bounds the wait.
 */
export async function startAgentProcess(
  runtime: JsRuntime,
  env: Record<string, string> = {},
  worker: WorkerState = {},
): Promise<AgentProcess> {
  assertInstalled(runtime)
  assertRuntimeBuilt()
  const [command, ...args] = runtime.argv
  const workerd = runtime.server === 'workerd'
  // A Worker's Durable Object storage: in a directory of the test's, or a fresh one removed at stop.
  const ownState = workerd && !worker.persistTo ? mkdtempSync(join(tmpdir(), 'a2a-worker-state-')) : undefined
  const persistTo = worker.persistTo ?? ownState
  const child = spawn(
    command!,
    [...args, ...(workerd ? await wranglerDevArgs(persistTo!) : [fixturePath('runtime-agent.mjs')])],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, ...runtime.env, A2A_API_KEY: API_KEY, ...PUSH_SETTINGS, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      // wrangler runs workerd as a child of its own: its group is ended with it.
      detached: workerd,
    },
  )
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-65_536)))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const alive = () => child.exitCode === null && child.signalCode === null
  // The process, or for wrangler its group (workerd with it).
  const target = workerd ? -child.pid! : child.pid!
  const stop = async () => {
    if (!alive()) return
    process.kill(target, 'SIGTERM')
    let timer: ReturnType<typeof setTimeout> | undefined
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        if (alive()) process.kill(target, 'SIGKILL')
        resolve()
      }, STOP_GRACE_MS)
    })
    await Promise.race([exited, killed])
    clearTimeout(timer)
    await exited
    if (workerd) killGroup(target)
    if (ownState) rmSync(ownState, { recursive: true, force: true })
  }
  try {
    const ready = workerd ? wranglerReady(child, () => stderr) : listening(child, () => stderr, runtime.name)
    const { url, server } = await withinStartDeadline(ready, runtime.name, () => stderr)
    return { pid: child.pid!, url, server, stderr: () => stderr, exited, stop }
  } catch (error) {
    if (alive()) process.kill(target, 'SIGKILL')
    await exited
    if (workerd) killGroup(target)
    if (ownState) rmSync(ownState, { recursive: true, force: true })
    throw error
  }
}

/**
 * Under the hooks' 60 s: a process that neither listens nor exits (wrangler whose bundle failed keeps watching for
 * a fix) fails its start with what it printed, and is stopped, instead of timing the hook out and living on.
 */
const START_DEADLINE_MS = 50_000

function withinStartDeadline<T>(ready: Promise<T>, name: string, stderr: () => string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${name} did not listen within ${START_DEADLINE_MS} ms:\n${stderr().slice(-2000)}`)),
      START_DEADLINE_MS,
    )
  })
  return Promise.race([ready, late]).finally(() => clearTimeout(timer))
}

/** Ends what is left of a process group (workerd after wrangler), if anything is. */
function killGroup(group: number): void {
  try {
    process.kill(group, 'SIGKILL')
  } catch {}
}

/** Where a Worker keeps its Durable Object's storage: the same directory again is the object restarted. */
export interface WorkerState {
  persistTo?: string
}

/** `wrangler dev` of test/fixtures/worker/ on a free port of 127.0.0.1, the API key as a variable. */
async function wranglerDevArgs(persistTo: string): Promise<string[]> {
  const port = await freePort()
  return [
    'dev',
    '--config',
    fixturePath('worker/wrangler.jsonc'),
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--inspector-port',
    String(await freePort()),
    '--var',
    `A2A_API_KEY:${API_KEY}`,
    ...Object.entries(PUSH_SETTINGS).flatMap(([name, value]) => ['--var', `${name}:${value}`]),
    '--persist-to',
    persistTo,
    '--show-interactive-dev-session=false',
  ]
}

/** wrangler's `Ready on <url>` line (its url without the trailing slash). */
function wranglerReady(child: ChildProcess, stderr: () => string): Promise<{ url: string; server: string }> {
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out = (out + chunk).slice(-65_536)
      const match = /Ready on (http:\/\/\S+)/.exec(out)
      if (match) resolve({ url: `${match[1]!.replace(/\/$/, '')}/`, server: 'workerd' })
    })
    child.once('error', (error) => reject(new Error(`wrangler could not be started: ${error.message}`)))
    child.once('exit', (code, signal) =>
      reject(
        new Error(
          `wrangler dev exited (${code ?? signal}) before it was ready:\n${out.slice(-2000)}\n${stderr().slice(-2000)}`,
        ),
      ),
    )
  })
}

/** The `url <url> runtime <server>` line, or the reason the process ended without printing it. */
function listening(child: ChildProcess, stderr: () => string, name: string): Promise<{ url: string; server: string }> {
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
      const match = /^url (\S+) runtime (\S+)$/m.exec(out)
      if (match) resolve({ url: match[1]!, server: match[2]! })
    })
    child.once('error', (error) => reject(new Error(`${name} could not be started: ${error.message}`)))
    child.once('exit', (code, signal) =>
      reject(new Error(`the agent on ${name} exited (${code ?? signal}) before listening:\n${stderr().slice(-2000)}`)),
    )
  })
}
