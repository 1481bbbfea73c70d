import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Command as CommandType } from 'commander'
import { afterAll, describe, expect, it } from 'vitest'
import { configuredValue, describeSource, resolveOptions } from '../../runtime/src/cli/config/_resolve.ts'
import { UsageError } from '../../runtime/src/cli/output/_failures.ts'

/** Option resolution: flag > A2ACLI_* environment > local .env (or --config) > global .env > default. */

const { Command, Option } = createRequire(import.meta.url)('commander') as typeof import('commander')

const root = mkdtempSync(join(tmpdir(), 'a2a-config-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let folders = 0

/** A project folder (with a nested working directory) and a home with its own config folder. */
function layout(files: { local?: string; global?: string; xdg?: string } = {}) {
  const base = join(root, String(++folders))
  const project = join(base, 'project')
  const cwd = join(project, 'src', 'deep')
  const home = join(base, 'home')
  mkdirSync(cwd, { recursive: true })
  mkdirSync(join(home, '.config', 'a2a-cli'), { recursive: true })
  if (files.local !== undefined) writeFileSync(join(project, '.env'), files.local, { mode: 0o600 })
  if (files.global !== undefined) writeFileSync(join(home, '.config', 'a2a-cli', '.env'), files.global, { mode: 0o600 })
  if (files.xdg !== undefined) {
    mkdirSync(join(base, 'xdg', 'a2a-cli'), { recursive: true })
    writeFileSync(join(base, 'xdg', 'a2a-cli', '.env'), files.xdg, { mode: 0o600 })
  }
  return { base, project, cwd, home, local: join(project, '.env'), global: join(home, '.config', 'a2a-cli', '.env') }
}

/** Parses `args` with a program shaped like a2a's and resolves the options of the command that ran. */
function resolve(args: string[], env: NodeJS.ProcessEnv, cwd: string) {
  const program = new Command('a2a').exitOverride()
  program.option('-a, --agent-card <ref>', 'the agent')
  program.addOption(program.createOption('-o, --output <format>', 'format').choices(['text', 'json']).default('text'))
  program.option('--bearer <token>', 'bearer token').option('--config <path>', 'config file')
  let ran: CommandType | undefined
  program
    .command('send')
    .option('--stream', 'follow the stream')
    .option('--text <text>', 'a text part')
    .option('--no-wait', 'do not wait')
    .option('--timeout <seconds>', 'give up after', (value: string) => {
      const seconds = Number(value)
      if (!(seconds > 0)) throw new Error(`'${value}' is not a number of seconds`)
      return seconds
    })
    .option(
      '--transport <binding>',
      'preferred binding, repeatable',
      (value: string, all: string[]) => [...all, value],
      [],
    )
    // Repeatable with no default: its parser collects (as the client commands declare --svc-param).
    .option('--svc-param <key:value>', 'a service parameter', (value: string, all: string[] = []) => [...all, value])
    .addOption(new Option('--url <url>', 'earlier spelling of --agent-card').hideHelp())
    .action((_flags: unknown, command: CommandType) => {
      ran = command
    })
  program.parse(['node', 'a2a', ...args])
  return resolveOptions(ran!, { env, cwd })
}

const sourceOf = (resolved: ReturnType<typeof resolve>, attribute: string) =>
  describeSource(resolved.options.find((option) => option.attribute === attribute)!.source)

describe('precedence', () => {
  it('takes a flag over the environment, the environment over the local file, that over the global one', () => {
    const dirs = layout({
      local: 'A2ACLI_AGENT_CARD=local.example\nA2ACLI_OUTPUT=json\nA2ACLI_TIMEOUT=7\n',
      global: 'A2ACLI_AGENT_CARD=global.example\nA2ACLI_OUTPUT=text\nA2ACLI_TIMEOUT=9\nA2ACLI_TRANSPORT=GRPC\n',
    })
    const env = { HOME: dirs.home, A2ACLI_OUTPUT: 'text', A2ACLI_AGENT_CARD: 'env.example' }
    const resolved = resolve(['send', '--agent-card', 'flag.example'], env, dirs.cwd)
    expect(resolved.values).toMatchObject({
      agentCard: 'flag.example',
      output: 'text',
      timeout: 7,
      transport: ['GRPC'],
    })
    expect(sourceOf(resolved, 'agentCard')).toBe('flag')
    expect(sourceOf(resolved, 'output')).toBe('env A2ACLI_OUTPUT')
    expect(sourceOf(resolved, 'timeout')).toBe(`file ${dirs.local}`)
    expect(sourceOf(resolved, 'transport')).toBe(`file ${dirs.global}`)
    expect(sourceOf(resolved, 'bearer')).toBe('default')
    expect(resolved.files).toEqual({ local: dirs.local, global: dirs.global })
  })

  it('falls back to the built-in default', () => {
    const dirs = layout()
    const resolved = resolve(['send'], { HOME: dirs.home }, dirs.cwd)
    expect(resolved.values).toMatchObject({ output: 'text', wait: true, transport: [] })
    expect(resolved.values.agentCard).toBeUndefined()
    expect(sourceOf(resolved, 'output')).toBe('default')
  })

  it('reads $XDG_CONFIG_HOME/a2a-cli/.env in place of ~/.config/a2a-cli/.env when it is set', () => {
    const dirs = layout({ global: 'A2ACLI_AGENT_CARD=home.example\n', xdg: 'A2ACLI_AGENT_CARD=xdg.example\n' })
    const resolved = resolve(['send'], { HOME: dirs.home, XDG_CONFIG_HOME: join(dirs.base, 'xdg') }, dirs.cwd)
    expect(resolved.values.agentCard).toBe('xdg.example')
    expect(sourceOf(resolved, 'agentCard')).toBe(`file ${join(dirs.base, 'xdg', 'a2a-cli', '.env')}`)
  })

  it('reads the file --config names in place of the local .env, the global file still below it', () => {
    const dirs = layout({ local: 'A2ACLI_AGENT_CARD=local.example\n', global: 'A2ACLI_TIMEOUT=4\n' })
    const chosen = join(dirs.base, 'agent-b.env')
    writeFileSync(chosen, 'A2ACLI_OUTPUT=json\n', { mode: 0o600 })
    for (const resolved of [
      resolve(['send', '--config', chosen], { HOME: dirs.home }, dirs.cwd),
      resolve(['send'], { HOME: dirs.home, A2ACLI_CONFIG: chosen }, dirs.cwd),
    ]) {
      expect(resolved.values).toMatchObject({ output: 'json', timeout: 4, agentCard: undefined })
      expect(resolved.files.local).toBe(chosen)
    }
    expect(() => resolve(['send', '--config', join(dirs.base, 'missing.env')], { HOME: dirs.home }, dirs.cwd)).toThrow(
      /--config: no file at .*missing\.env/,
    )
  })
})

describe('what configuration may set', () => {
  it('reads only A2ACLI_* keys from a file: a project .env holds the agent own settings too', () => {
    const dirs = layout({ local: 'PORT=4000\nA2A_BEARER_TOKEN=agent-secret\nA2ACLI_AGENT_CARD=x.example\n' })
    const resolved = resolve(['send'], { HOME: dirs.home }, dirs.cwd)
    expect(resolved.values.agentCard).toBe('x.example')
    expect(JSON.stringify(resolved)).not.toContain('agent-secret')
  })

  it('never reads a hidden option (an earlier spelling, an alias) from the environment', () => {
    const dirs = layout()
    const resolved = resolve(['send'], { HOME: dirs.home, A2ACLI_URL: 'old.example' }, dirs.cwd)
    expect(resolved.values.url).toBeUndefined()
    expect(resolve(['send', '--url', 'x.example'], { HOME: dirs.home }, dirs.cwd).values.url).toBe('x.example')
  })

  it('never takes --stream (or a message part) from the environment or a file', () => {
    const dirs = layout({ local: 'A2ACLI_STREAM=true\nA2ACLI_TEXT=hello\n' })
    const resolved = resolve(['send'], { HOME: dirs.home, A2ACLI_STREAM: '1' }, dirs.cwd)
    expect(resolved.values.stream).toBeUndefined()
    expect(resolved.values.text).toBeUndefined()
    expect(sourceOf(resolved, 'stream')).toBe('default')
    expect(resolve(['send', '--stream'], { HOME: dirs.home }, dirs.cwd).values.stream).toBe(true)
  })

  it('sets a switch from true or false, --no-wait from A2ACLI_WAIT, a list from commas', () => {
    const dirs = layout()
    const env = {
      HOME: dirs.home,
      A2ACLI_WAIT: 'false',
      A2ACLI_TRANSPORT: 'HTTP+JSON, JSONRPC',
      A2ACLI_SVC_PARAM: 'a:1,b:2',
    }
    const resolved = resolve(['send'], env, dirs.cwd)
    expect(resolved.values).toMatchObject({
      wait: false,
      transport: ['HTTP+JSON', 'JSONRPC'],
      svcParam: ['a:1', 'b:2'],
    })
    expect(sourceOf(resolved, 'wait')).toBe('env A2ACLI_WAIT')
    expect(resolve(['send', '--no-wait'], { HOME: dirs.home, A2ACLI_WAIT: 'true' }, dirs.cwd).values.wait).toBe(false)
  })

  it('refuses a configured value the flag would refuse, naming the variable and where it was set', () => {
    const dirs = layout({ local: 'A2ACLI_OUTPUT=xml\n' })
    expect(() => resolve(['send'], { HOME: dirs.home }, dirs.cwd)).toThrow(
      `A2ACLI_OUTPUT in ${dirs.local}: 'xml' is not one of text, json`,
    )
    expect(() => resolve(['send'], { HOME: dirs.home, A2ACLI_TIMEOUT: 'soon' }, dirs.cwd)).toThrow(
      "A2ACLI_TIMEOUT: 'soon' is not a number of seconds",
    )
    expect(() => resolve(['send'], { HOME: dirs.home, A2ACLI_WAIT: 'maybe' }, dirs.cwd)).toThrow(
      "A2ACLI_WAIT: 'maybe' is not true or false",
    )
    expect(() => resolve(['send'], { HOME: dirs.home, A2ACLI_WAIT: 'maybe' }, dirs.cwd)).toThrow(UsageError)
  })
})

describe('credentials in files', () => {
  it('refuses a file holding a credential that others can read, naming chmod 600', () => {
    const dirs = layout({ local: 'A2ACLI_BEARER=secret-token\n' })
    chmodSync(dirs.local, 0o644)
    let refused: unknown
    try {
      resolve(['send'], { HOME: dirs.home }, dirs.cwd)
    } catch (error) {
      refused = error
    }
    expect(refused).toBeInstanceOf(UsageError)
    expect((refused as UsageError).message).toBe(
      `${dirs.local} holds A2ACLI_BEARER and others can read it: run chmod 600 ${dirs.local}`,
    )
    expect((refused as UsageError).hint).toBe(`chmod 600 ${dirs.local}`)
    expect((refused as UsageError).message).not.toContain('secret-token')
    chmodSync(dirs.local, 0o640)
    expect(() => resolve(['send'], { HOME: dirs.home }, dirs.cwd)).toThrow(/chmod 600/)
    chmodSync(dirs.local, 0o600)
    expect(resolve(['send'], { HOME: dirs.home }, dirs.cwd).values.bearer).toBe('secret-token')
  })

  it.each(['A2ACLI_WEBHOOK_TOKEN=hook-secret', 'A2ACLI_AUTH_CREDENTIALS=hook-credentials', 'A2ACLI_SVC_PARAM=x-key:k'])(
    'counts a webhook secret and a service parameter as credentials: %s in a file others can read is refused',
    (line) => {
      const dirs = layout({ local: `${line}\n` })
      chmodSync(dirs.local, 0o644)
      expect(() => resolve(['send'], { HOME: dirs.home }, dirs.cwd)).toThrow(
        `${dirs.local} holds ${line.split('=')[0]} and others can read it`,
      )
    },
  )

  it('reads a file others can read when it holds no credential', () => {
    const dirs = layout({ global: 'A2ACLI_AGENT_CARD=x.example\n' })
    chmodSync(dirs.global, 0o644)
    expect(resolve(['send'], { HOME: dirs.home }, dirs.cwd).values.agentCard).toBe('x.example')
  })
})

describe('a setting read outside the options (configuredValue)', () => {
  it("reads the file the command's --config names, as its options do", () => {
    const dirs = layout({ local: 'A2ACLI_CLIENT_SECRET=from-local-env\n' })
    const chosen = join(dirs.base, 'agent.env')
    writeFileSync(chosen, 'A2ACLI_CLIENT_SECRET=from-config\n', { mode: 0o600 })
    resolve(['send', '--config', chosen], { HOME: dirs.home }, dirs.cwd)
    expect(configuredValue('A2ACLI_CLIENT_SECRET')).toBe('from-config')
    resolve(['send'], { HOME: dirs.home }, dirs.cwd)
    expect(configuredValue('A2ACLI_CLIENT_SECRET')).toBe('from-local-env')
  })

  it("takes the environment as the command found it: a project's .env loaded later is no environment", () => {
    const dirs = layout({ local: 'A2ACLI_CLIENT_SECRET=from-local-env\n' })
    const chosen = join(dirs.base, 'agent.env')
    writeFileSync(chosen, 'A2ACLI_CLIENT_SECRET=from-config\n', { mode: 0o600 })
    const env: NodeJS.ProcessEnv = { HOME: dirs.home, A2ACLI_AGENT_CARD: 'env.example' }
    resolve(['send', '--config', chosen], env, dirs.cwd)
    // What loading the project's .env into the process does once the command runs.
    env.A2ACLI_CLIENT_SECRET = 'from-local-env'
    expect(configuredValue('A2ACLI_CLIENT_SECRET')).toBe('from-config')
    expect(configuredValue('A2ACLI_AGENT_CARD')).toBe('env.example')
  })
})
