import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * Agents of test/fixtures/ as their own processes: a test can SIGKILL them, read their memory and file descriptors
 * from /proc/<pid>, and ask them (over IPC) to collect garbage and report their counters. Every fixture prints
 * `url <url>` as its one stdout line once listening; those started by startFixtureAgent answer on the IPC channel
 * as test/fixtures/_test-channel.mjs does.
 */

const SERVE_FIXTURE = fixturePath('serve-agent.mjs')
export const DIST_INDEX = fileURLToPath(new URL('../../runtime/dist/index.js', import.meta.url))

/** The path of test/fixtures/<name>. */
export function fixturePath(name: string): string {
  return fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url))
}

/** Fails with a pointer at `npm run build` when the built runtime the fixtures import is missing. */
export function assertRuntimeBuilt(): void {
  if (!existsSync(DIST_INDEX)) {
    throw new Error(
      `${DIST_INDEX} is missing: the agent process imports the built a2a-runtime. Run \`npm run build\` (npm test does) first.`,
    )
  }
}

/**
 * Resolves with the url `child` prints (`url <url>` on stdout); rejects when it exits first or `timeoutMs` (when
 * given) passes, with the end of its stderr (`stderr()`) to say why.
 */
function listeningUrl(child: ChildProcess, stderr: () => string, timeoutMs?: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = ''
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(
            () =>
              reject(
                new Error(`the agent process did not listen within ${timeoutMs / 1000} s: ${stderr().slice(-1000)}`),
              ),
            timeoutMs,
          )
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
      reject(new Error(`the agent process exited (${code}) before listening: ${stderr().slice(-1000)}`))
    })
  })
}

/**
 * Starts test/fixtures/serve-agent.mjs as its own process (so a test can SIGKILL it) and resolves once it
 * prints its url. The caller ends it.
 */
export async function startServeFixture(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [SERVE_FIXTURE], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  // No clock of its own: the test's timeout bounds the wait.
  const url = await listeningUrl(child, () => stderr)
  return { child, url }
}

/** What every fixture's probe answers; each fixture adds its own counters. */
export interface FixtureProbe {
  /** Warnings and errors the runtime logged: how many, the first 20, and the first 5 errors. */
  logged: { warn: number; error: number; last: string[]; errors: string[] }
  memory: NodeJS.MemoryUsage
}

/** A fixture agent process started by startFixtureAgent; `P` is what its probe answers. */
export interface FixtureAgent<P> {
  child: ChildProcess
  pid: number
  url: string
  port: number
  alive(): boolean
  /** stderr so far (the last 64 KB): the runtime's info lines and anything the process printed. */
  stderr(): string
  /** Its counters and memory, after two garbage collections when `gc` is set. Times out after 10 s. */
  probe(options?: { gc?: boolean }): Promise<P>
  /** Lets every held task go on (for the fixtures that hold tasks until the test says so). */
  release(): void
  /** SIGKILL by PID when it is still running; resolves once it has exited. */
  kill(): Promise<void>
}

/**
 * Starts test/fixtures/<fixture> with --expose-gc (so a probe can collect garbage before it reads the memory) and
 * `env`, and resolves once it listens. A2A_RUNTIME_ENTRY in `env` points the fixture at another build of the
 * runtime, so the built one need not be there then.
 */
export async function startFixtureAgent<P>(
  fixture: string,
  env: Record<string, string> = {},
): Promise<FixtureAgent<P>> {
  if (!env.A2A_RUNTIME_ENTRY) assertRuntimeBuilt()
  const child = spawn(process.execPath, ['--expose-gc', fixturePath(fixture)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
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
    url = await listeningUrl(child, () => stderr, 15_000)
  } catch (error) {
    await kill()
    throw error
  }

  // Probes are answered by id: a late answer to one that timed out is dropped, not taken for the next.
  let nextId = 0
  const waiting = new Map<number, (probe: P) => void>()
  child.on('message', (reply: { type?: string; id?: number } & P) => {
    if (reply?.type !== 'probe' || reply.id === undefined) return
    waiting.get(reply.id)?.(reply)
    waiting.delete(reply.id)
  })
  return {
    child,
    pid: child.pid!,
    url,
    port: Number(new URL(url).port),
    alive,
    stderr: () => stderr,
    probe(options = {}) {
      const id = ++nextId
      return new Promise<P>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id)
          reject(
            new Error(
              `the agent process did not answer a probe within 10 s${alive() ? '' : ` (it exited: ${stderr.slice(-1000)})`}`,
            ),
          )
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
