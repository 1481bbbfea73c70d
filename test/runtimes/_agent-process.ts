import { type ChildProcess, spawn } from 'node:child_process'
import { assertRuntimeBuilt, fixturePath } from '../runtime/_fixture-process.ts'
import { assertInstalled, type JsRuntime, REPO_ROOT } from './_runtimes.ts'

/** The key the agent process accepts (A2A_API_KEY); requests send it as X-API-Key. */
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
export async function startAgentProcess(runtime: JsRuntime, env: Record<string, string> = {}): Promise<AgentProcess> {
  assertInstalled(runtime)
  assertRuntimeBuilt()
  const [command, ...args] = runtime.argv
  const child = spawn(command!, [...args, fixturePath('runtime-agent.mjs')], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...runtime.env, A2A_API_KEY: API_KEY, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-65_536)))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const alive = () => child.exitCode === null && child.signalCode === null
  const stop = async () => {
    if (!alive()) return
    process.kill(child.pid!, 'SIGTERM')
    let timer: ReturnType<typeof setTimeout> | undefined
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        if (alive()) process.kill(child.pid!, 'SIGKILL')
        resolve()
      }, STOP_GRACE_MS)
    })
    await Promise.race([exited, killed])
    clearTimeout(timer)
    await exited
  }
  try {
    const { url, server } = await listening(child, () => stderr, runtime.name)
    return { pid: child.pid!, url, server, stderr: () => stderr, exited, stop }
  } catch (error) {
    if (alive()) process.kill(child.pid!, 'SIGKILL')
    await exited
    throw error
  }
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
    child.once('exit', (code, signal) => reject(new Error(`the agent on ${name} exited (${code ?? signal}) before listening:\n${stderr().slice(-2000)}`)))
  })
}
