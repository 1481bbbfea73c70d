import { type ChildProcess, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { runA2a } from '../_support.ts'

/** `a2a completion bash` from the built CLI, sourced by bash and asked for the real command tree. */

const running = new Set<ChildProcess>()
afterEach(() => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
  running.clear()
})
const dir = mkdtempSync(join(tmpdir(), 'a2a-completion-process-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const script = join(dir, 'a2a.bash')

beforeAll(async () => {
  const result = await runA2a(['completion', 'bash'], { cwd: dir, env: process.env, running })
  expect(result.stderr).toBe('')
  expect(result.code).toBe(0)
  writeFileSync(script, result.stdout)
})

function complete(...words: string[]): string[] {
  const result = spawnSync(
    'bash',
    [
      '-c',
      'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _a2a; printf "%s\\n" "${COMPREPLY[@]}"',
      'bash',
      script,
      ...words,
    ],
    { encoding: 'utf8' },
  )
  expect(result.stderr).toBe('')
  return result.stdout.split('\n').filter(Boolean).sort()
}

it('completes every command of the CLI, their subcommands and options', () => {
  expect(complete('a2a', 'conf')).toContain('config')
  expect(complete('a2a', 'comp')).toEqual(['completion'])
  expect(complete('a2a', 'config', '')).toEqual(['help', 'show'])
  expect(complete('a2a', 'config', 'show', '--')).toEqual(expect.arrayContaining(['--config', '--help', '--output']))
  expect(complete('a2a', 'completion', '')).toEqual(['bash', 'fish', 'zsh'])
  expect(complete('a2a', 'd')).toEqual(['dev'])
  expect(complete('a2a', 'ta')).toEqual(['task'])
  expect(complete('a2a', 'task', '')).toEqual(expect.arrayContaining(['cancel', 'get', 'list', 'subscribe']))
  expect(complete('a2a', 'task', 'get', '--')).toEqual(expect.arrayContaining(['--agent-card', '--output', '--wait']))
  expect(complete('a2a', 'send', '-o', '')).toEqual(['json', 'text'])
})

const installed = (shell: string) => spawnSync(shell, ['-c', 'exit 0'], { stdio: 'ignore' }).status === 0

it.each(['zsh', 'fish'] as const)('prints a script for %s too', async (shell) => {
  const result = await runA2a(['completion', shell], { cwd: dir, env: process.env, running })
  expect(result.code).toBe(0)
  expect(result.stdout).toContain("'config'")
})

for (const shell of ['zsh', 'fish'] as const)
  it.skipIf(!installed(shell))(`${shell} parses its script (skipped where ${shell} is not installed)`, async () => {
    const result = await runA2a(['completion', shell], { cwd: dir, env: process.env, running })
    const path = join(dir, `a2a.${shell}`)
    writeFileSync(path, result.stdout)
    const parsed = spawnSync(shell, [shell === 'zsh' ? '-n' : '--no-execute', path], { encoding: 'utf8' })
    expect(parsed.stderr).toBe('')
    expect(parsed.status).toBe(0)
  })
