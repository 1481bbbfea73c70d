import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Helpers the process-level suites share. */

export const runtimeDir = fileURLToPath(new URL('../runtime', import.meta.url))
export const a2aBin = join(runtimeDir, 'bin/a2a.mjs')

/** A port nobody listens on right now: bind port 0 on 127.0.0.1, note it, let it go. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

/**
 * A project as a user has it, in a new temporary folder: the agent in TypeScript at `src/agent.ts` and
 * `a2a-runtime` in node_modules (this repository's). The caller removes the folder.
 */
export function makeAgentProject(prefix: string, agentSource: string): string {
  const project = mkdtempSync(join(tmpdir(), prefix))
  mkdirSync(join(project, 'src'))
  mkdirSync(join(project, 'node_modules'))
  symlinkSync(runtimeDir, join(project, 'node_modules/a2a-runtime'), 'dir')
  writeFileSync(join(project, 'src/agent.ts'), agentSource)
  return project
}

export interface CommandResult {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * Runs `a2a <args>` without a terminal to its end, killed by PID past 10 s. `running` tracks the child so the
 * suite's afterEach can end it if the test fails first.
 */
export function runA2a(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; running: Set<ChildProcess> },
): Promise<CommandResult> {
  const child = spawn(process.execPath, [a2aBin, ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  options.running.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk) => (stdout += chunk))
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  const timer = setTimeout(() => process.kill(child.pid!, 'SIGKILL'), 10_000)
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer)
      options.running.delete(child)
      resolve({ code, stdout, stderr })
    }),
  )
}

export interface StartedA2a {
  child: ChildProcess
  /** The address `a2a start` printed, e.g. `http://127.0.0.1:41234/`. */
  url: string
  /** Everything it printed so far, stdout and stderr together. */
  output(): string
  exited: Promise<number | null>
  /** SIGKILLs it (by PID) if it still runs, and removes the project. */
  dispose(): Promise<void>
}

export interface A2aOnProject {
  child: ChildProcess
  project: string
  /** What it printed so far, as it arrives: stdout, stderr, and both as they came. */
  output: { stdout: string; stderr: string; all: string }
  exit: Promise<number | null>
  /** SIGKILLs it (by PID) if it still runs and waits for its exit, then removes the project. */
  dispose(): Promise<void>
}

/**
 * `a2a <args>` on a new temporary project with `agentSource` (`makeAgentProject`), on 127.0.0.1 (HOST) with
 * `env` over this process's environment. The caller disposes of it (also when the test fails).
 */
export function a2aOnProject(
  prefix: string,
  agentSource: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): A2aOnProject {
  const project = makeAgentProject(prefix, agentSource)
  const child = spawn(process.execPath, [a2aBin, ...args], {
    cwd: project,
    env: { ...process.env, HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const output = { stdout: '', stderr: '', all: '' }
  for (const stream of ['stdout', 'stderr'] as const)
    child[stream]!.setEncoding('utf8').on('data', (chunk: string) => {
      output[stream] += chunk
      output.all += chunk
    })
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const dispose = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(child.pid!, 'SIGKILL')
      await exit
    }
    rmSync(project, { recursive: true, force: true })
  }
  return { child, project, output, exit, dispose }
}

/**
 * `a2a start` on a temporary project with `agentSource`, on a free port of 127.0.0.1, once it listens. It runs
 * the built runtime, as an installed project does. The caller disposes of it (also when the test fails).
 */
export async function startA2a(prefix: string, agentSource: string, env: NodeJS.ProcessEnv): Promise<StartedA2a> {
  const distIndex = join(runtimeDir, 'dist/index.js')
  if (!existsSync(distIndex)) throw new Error(`${distIndex} is missing: run \`npm run build\` (npm test does) first.`)
  const { child, output, exit: exited, dispose } = a2aOnProject(prefix, agentSource, ['start'], { PORT: '0', ...env })
  const until = Date.now() + 10_000
  const listeningAt = () => /listening on (http:\/\/\S+\/)/.exec(output.all)?.[1]
  while (!listeningAt()) {
    if (child.exitCode !== null || Date.now() > until) {
      await dispose()
      throw new Error(`a2a start did not listen: ${output.all}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return { child, url: listeningAt()!, output: () => output.all, exited, dispose }
}
