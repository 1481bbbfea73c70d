import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
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
export function runA2a(args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; running: Set<ChildProcess> }): Promise<CommandResult> {
  const child = spawn(process.execPath, [a2aBin, ...args], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] })
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
