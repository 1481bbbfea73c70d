import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, expect, it } from 'vitest'
import { registerConfig } from '../../runtime/src/cli/config/_command.ts'
import { takesConfiguration } from '../../runtime/src/cli/config/_configurable.ts'

/** `a2a config show` in-process: every configurable option, its value and source, credentials redacted. */

const { Command } = createRequire(import.meta.url)('commander') as typeof import('commander')

const root = mkdtempSync(join(tmpdir(), 'a2a-config-show-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
afterEach(() => {
  process.exitCode = undefined
})

function run(args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  const out: string[] = []
  const err: string[] = []
  const program = new Command('a2a').exitOverride()
  program.option('-a, --agent-card <ref>', 'the agent')
  takesConfiguration(program.command('send'))
    .option('--bearer <token>', 'bearer token')
    .option('--svc-param <key:value>', 'service parameter', (value: string, all: string[]) => [...all, value], [])
    .option('--stream', 'follow the stream')
    .option('--insecure', 'skip TLS checks', false)
    .option('--text <text>', 'a part')
  // A command that serves an agent reads its own settings: not listed.
  program.command('dev').option('--port <port>', 'port')
  registerConfig(program, {
    stdout: { write: (text: string) => out.push(text) },
    stderr: { write: (text: string) => err.push(text) },
    env,
    cwd,
  })
  program.parse(['node', 'a2a', 'config', 'show', ...args])
  return { stdout: out.join(''), stderr: err.join(''), status: process.exitCode ?? 0 }
}

it('lists each configurable option with its value and source, credentials and service parameter values redacted', () => {
  const cwd = join(root, 'one')
  mkdirSync(cwd)
  writeFileSync(
    join(cwd, '.env'),
    'A2ACLI_AGENT_CARD=agents.example\nA2ACLI_SVC_PARAM=x-trace:abc,authorization:Bearer s3cret\n',
    {
      mode: 0o600,
    },
  )
  const env = { HOME: join(root, 'home'), A2ACLI_BEARER: 'tok-123' }
  const { stdout, status } = run(['-o', 'json'], env, cwd)
  expect(status).toBe(0)
  const shown = JSON.parse(stdout) as { files: object; options: { option: string; value: unknown; source: string }[] }
  expect(shown.files).toEqual({ local: join(cwd, '.env'), global: null })
  expect(shown.options.map((option) => option.option)).toEqual([
    '--agent-card',
    '--bearer',
    '--config',
    '--insecure',
    '--output',
    '--svc-param',
  ])
  expect(shown.options).toContainEqual({
    option: '--bearer',
    variable: 'A2ACLI_BEARER',
    value: '[redacted]',
    source: 'env A2ACLI_BEARER',
  })
  expect(shown.options).toContainEqual({
    option: '--svc-param',
    variable: 'A2ACLI_SVC_PARAM',
    value: ['x-trace:[redacted]', 'authorization:[redacted]'],
    source: `file ${join(cwd, '.env')}`,
  })
  expect(shown.options).toContainEqual({
    option: '--output',
    variable: 'A2ACLI_OUTPUT',
    value: 'json',
    source: 'flag',
  })
  // Values keep their JSON type: a switch is a boolean.
  expect(shown.options).toContainEqual({
    option: '--insecure',
    variable: 'A2ACLI_INSECURE',
    value: false,
    source: 'default',
  })
  expect(stdout).not.toMatch(/tok-123|s3cret|abc/)
})

it('prints records of Option, Variable, Value and Source in text', () => {
  const cwd = join(root, 'two')
  mkdirSync(cwd)
  const { stdout } = run([], { HOME: join(root, 'home'), A2ACLI_AGENT_CARD: 'agents.example' }, cwd)
  expect(stdout).toContain(
    'Option: --agent-card\nVariable: A2ACLI_AGENT_CARD\nValue: agents.example\nSource: env A2ACLI_AGENT_CARD\n\n',
  )
  expect(stdout).toContain('Option: --bearer\nVariable: A2ACLI_BEARER\nValue: (not set)\nSource: default\n\n')
  expect(stdout).toMatch(/^Local file: \(none\)\nGlobal file: \(none\)\n\n/)
  expect(stdout).not.toContain('--port')
})

it('refuses a credential file others can read with the error envelope and exit status 2', () => {
  const cwd = join(root, 'three')
  mkdirSync(cwd)
  writeFileSync(join(cwd, '.env'), 'A2ACLI_BEARER=tok-456\n')
  chmodSync(join(cwd, '.env'), 0o644)
  const { stdout, status } = run(['-o', 'json'], { HOME: join(root, 'home') }, cwd)
  expect(status).toBe(2)
  expect(JSON.parse(stdout).error).toMatchObject({
    code: 'A2ACLI_ERR_USAGE',
    hint: `chmod 600 ${join(cwd, '.env')}`,
  })
  expect(stdout).not.toContain('tok-456')
})
