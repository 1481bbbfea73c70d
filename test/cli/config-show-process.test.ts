import type { ChildProcess } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, expect, it } from 'vitest'
import { runA2a } from '../_support.ts'

/** `a2a config show` as a process (the built runtime): the layers reach it, and a bad file exits 2. */

const running = new Set<ChildProcess>()
afterEach(() => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
  running.clear()
})
const root = mkdtempSync(join(tmpdir(), 'a2a-config-process-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** The environment without the caller's own A2ACLI_* settings, a home of its own. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('A2ACLI_')))
  delete env.XDG_CONFIG_HOME
  return { ...env, HOME: join(root, 'home'), ...extra }
}

it('reads the local .env found up from the working directory and the global one, and says which', async () => {
  const project = join(root, 'project')
  const cwd = join(project, 'src')
  const xdg = join(root, 'xdg')
  mkdirSync(cwd, { recursive: true })
  mkdirSync(join(xdg, 'a2a-cli'), { recursive: true })
  writeFileSync(join(project, '.env'), 'PORT=4000\nA2ACLI_OUTPUT=json\n')
  writeFileSync(join(xdg, 'a2a-cli', '.env'), 'A2ACLI_CONFIG=ignored.env\n')
  const result = await runA2a(['config', 'show'], { cwd, env: cleanEnv({ XDG_CONFIG_HOME: xdg }), running })
  expect(result.stderr).toBe('')
  expect(result.code).toBe(0)
  const shown = JSON.parse(result.stdout) as { files: object; options: { option: string; source: string }[] }
  expect(shown.files).toEqual({ local: join(project, '.env'), global: join(xdg, 'a2a-cli', '.env') })
  expect(shown.options.find((option) => option.option === '--output')).toEqual({
    option: '--output',
    variable: 'A2ACLI_OUTPUT',
    value: 'json',
    source: `file ${join(project, '.env')}`,
  })
  // --config comes from a flag or A2ACLI_CONFIG only, never from a file.
  expect(shown.options.find((option) => option.option === '--config')).toMatchObject({ value: null, source: 'default' })
})

it('takes the environment over a file, and a flag over both', async () => {
  const cwd = join(root, 'env-over-file')
  mkdirSync(cwd)
  writeFileSync(join(cwd, '.env'), 'A2ACLI_OUTPUT=json\n')
  const text = await runA2a(['config', 'show'], { cwd, env: cleanEnv({ A2ACLI_OUTPUT: 'text' }), running })
  expect(text.code).toBe(0)
  expect(text.stdout).toContain('Option: --output\nVariable: A2ACLI_OUTPUT\nValue: text\nSource: env A2ACLI_OUTPUT\n')
  const json = await runA2a(['config', 'show', '-o', 'json'], {
    cwd,
    env: cleanEnv({ A2ACLI_OUTPUT: 'text' }),
    running,
  })
  expect(JSON.parse(json.stdout).options).toContainEqual({
    option: '--output',
    variable: 'A2ACLI_OUTPUT',
    value: 'json',
    source: 'flag',
  })
})

it('refuses a credential file others can read: the envelope names chmod 600, exit 2, the secret never printed', async () => {
  const cwd = join(root, 'insecure')
  mkdirSync(cwd)
  writeFileSync(join(cwd, 'agent.env'), 'A2ACLI_API_KEY=key-789\n')
  chmodSync(join(cwd, 'agent.env'), 0o644)
  const result = await runA2a(['config', 'show', '-o', 'json', '--config', 'agent.env'], {
    cwd,
    env: cleanEnv(),
    running,
  })
  expect(result.code).toBe(2)
  expect(JSON.parse(result.stdout).error).toEqual({
    code: 'A2ACLI_ERR_USAGE',
    message: `${join(cwd, 'agent.env')} holds A2ACLI_API_KEY and others can read it: run chmod 600 ${join(cwd, 'agent.env')}`,
    hint: `chmod 600 ${join(cwd, 'agent.env')}`,
    a2aCode: null,
  })
  expect(result.stdout + result.stderr).not.toContain('key-789')
  const text = await runA2a(['config', 'show', '--config', 'agent.env'], { cwd, env: cleanEnv(), running })
  expect(text.code).toBe(2)
  expect(text.stdout).toBe('')
  expect(text.stderr).toMatch(
    /^Error: .* others can read it: run chmod 600 .*\nCode: A2ACLI_ERR_USAGE\nHint: chmod 600 /,
  )
})
