import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseEnv } from 'node:util'
import prompts from 'prompts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type CliIo, run } from '../../generator/src/cli.ts'

/**
 * The questions through `prompts.inject` (answers taken as given, in order) and `prompts.override` (an answer
 * that must pass the question's `validate`; a refused one falls through to the next injected answer, as a
 * person types again after the message under the prompt).
 */
const injected = prompts as unknown as { _injected?: unknown[]; _override?: unknown }

let cwd: string
let out: string[]
let err: string[]
let io: CliIo

beforeEach(() => {
  cwd = mkdtempSync(join(realpathSync(tmpdir()), 'a2a-prompts-'))
  out = []
  err = []
  io = { cwd, interactive: true, out: (text) => out.push(text), err: (text) => err.push(text) }
})

afterEach(() => {
  injected._injected = undefined
  prompts.override({})
  rmSync(cwd, { recursive: true, force: true })
})

const read = (...path: string[]) => readFileSync(join(...path), 'utf8')
const manifest = (dir: string) => JSON.parse(read(dir, 'package.json')) as { name: string; description: string }

/** The answers after the directory, in the order asked: name and description as typed, the rest defaults. */
const REST = (name: string | undefined, description: string | undefined) => [
  name,
  description,
  'echo',
  'node',
  true,
  false,
  'none',
  ['docker'], // deploy targets
  false, // OpenTelemetry
  false,
]

describe('each answer is checked in its prompt, by the rule its flag meets', () => {
  it('refuses a description of spaces in its prompt and takes the next answer, keeping the others', async () => {
    prompts.override({ description: '   ' })
    prompts.inject(['weather', ...REST('Weather', 'Tells the weather')])
    const code = await run(['--no-install', '--no-git'], io)
    expect(err).toEqual([])
    expect(code).toBe(0)
    expect(injected._injected ?? []).toEqual([])
    expect(manifest(join(cwd, 'weather')).description).toBe('Tells the weather')
  })

  it('refuses a blank name, a blank directory and a package name npm refuses, each in its prompt', async () => {
    prompts.override({ dir: '  ', name: ' ', packageName: 'Bad Name' })
    prompts.inject(['天气机器人', 'weather-bot', ...REST('Weather', 'Tells the weather')])
    const code = await run(['--no-install', '--no-git'], io)
    expect(err).toEqual([])
    expect(code).toBe(0)
    expect(injected._injected ?? []).toEqual([])
    expect(manifest(join(cwd, '天气机器人')).name).toBe('weather-bot')
  })

  it('refuses, in the directory prompt, a path that runs through a file', async () => {
    writeFileSync(join(cwd, 'afile'), 'x\n')
    prompts.override({ dir: 'afile/agent' })
    prompts.inject(['agent', ...REST('Agent', 'Does things')])
    expect(await run(['--no-install', '--no-git'], io)).toBe(0)
    expect(err).toEqual([])
    expect(existsSync(join(cwd, 'agent/package.json'))).toBe(true)
  })
})

describe('OpenID Connect', () => {
  /** The answers after the directory with `oidc` chosen, then the issuer and the audience as given. */
  const OIDC = (issuer: string, audience: string) => [
    ...REST('Jwt', 'Checks tokens').slice(0, 6),
    'oidc',
    issuer,
    audience,
    ['docker'], // deploy targets
    false, // OpenTelemetry
    false,
  ]

  it('asks for the issuer and audience once oidc is chosen, refusing an http: issuer off this machine in its prompt, and writes them into .env', async () => {
    prompts.override({ oidcIssuer: 'http://login.example.com/' })
    prompts.inject(['jwt', ...OIDC('https://login.example.com/', 'api://jwt')])
    expect(await run(['--no-install', '--no-git'], io)).toBe(0)
    expect(err).toEqual([])
    expect(injected._injected ?? []).toEqual([])
    expect(parseEnv(read(join(cwd, 'jwt'), '.env'))).toEqual({
      A2A_OIDC_ISSUER: 'https://login.example.com/',
      A2A_OIDC_AUDIENCE: 'api://jwt',
    })
    expect(out.join('\n')).toContain('--auth oidc --oidc-issuer https://login.example.com/ --oidc-audience api://jwt')
  })

  it('takes blank answers as "later": .env holds commented placeholders and the next steps say what to set', async () => {
    prompts.inject(['jwt', ...OIDC('  ', '')])
    expect(await run(['--no-install', '--no-git'], io)).toBe(0)
    expect(err).toEqual([])
    expect(injected._injected ?? []).toEqual([])
    expect(parseEnv(read(join(cwd, 'jwt'), '.env'))).toEqual({})
    expect(out.join('\n')).toContain('OpenID Connect: set A2A_OIDC_ISSUER (your issuer) and A2A_OIDC_AUDIENCE')
    expect(out.join('\n')).not.toContain('--oidc-issuer')
  })

  it('asks neither with another authentication', async () => {
    prompts.inject(['plain', ...REST('Plain', 'No tokens')])
    expect(await run(['--no-install', '--no-git'], io)).toBe(0)
    expect(injected._injected ?? []).toEqual([])
    expect(existsSync(join(cwd, 'plain/.env'))).toBe(false)
  })
})

describe('a directory name of which no package name can be made', () => {
  it('asks for the package name (as create-vite does), offering "agent", and keeps the directory name on the card', async () => {
    prompts.inject([undefined, undefined, ...REST(undefined, 'Tells the weather').slice(1)])
    const code = await run(['天气机器人', '--no-install', '--no-git'], io)
    expect(err).toEqual([])
    expect(code).toBe(0)
    expect(injected._injected ?? []).toEqual([])
    const dir = join(cwd, '天气机器人')
    expect(manifest(dir).name).toBe('agent')
    expect(read(dir, 'src/agent.ts')).toMatch(/name: "天气机器人",/)
  })

  it('asks no package name for a directory that makes one', async () => {
    prompts.inject([...REST(undefined, 'Tells the weather')])
    expect(await run(['Weather Bot', '--no-install', '--no-git'], io)).toBe(0)
    expect(injected._injected ?? []).toEqual([])
    expect(manifest(join(cwd, 'Weather Bot')).name).toBe('weather-bot')
  })
})

describe('a directory that is not empty', () => {
  function busyDir(): string {
    const dir = join(cwd, 'busy')
    mkdirSync(dir)
    writeFileSync(join(dir, 'notes.txt'), 'my notes\n')
    return dir
  }

  it('offers another directory, and writes the project there, leaving the busy one as it was', async () => {
    const busy = busyDir()
    prompts.inject(['busy', 'another', 'fresh', ...REST('Fresh', 'Fresh start')])
    expect(await run(['--no-install', '--no-git'], io)).toBe(0)
    expect(err).toEqual([])
    expect(injected._injected ?? []).toEqual([])
    expect(readdirSync(busy)).toEqual(['notes.txt'])
    expect(manifest(join(cwd, 'fresh')).name).toBe('fresh')
  })

  it('asks as well when the directory came as an argument', async () => {
    busyDir()
    prompts.inject(['another', 'fresh', ...REST('Fresh', 'Fresh start')])
    expect(await run(['busy', '--no-install', '--no-git'], io)).toBe(0)
    expect(injected._injected ?? []).toEqual([])
    expect(existsSync(join(cwd, 'fresh/package.json'))).toBe(true)
  })

  it('offers to write beside the files (--force), which are left unchanged; the command to do it again says --force', async () => {
    const busy = busyDir()
    prompts.inject(['busy', 'beside', ...REST('Busy', 'Beside notes')])
    expect(await run(['--no-install', '--no-git'], io)).toBe(0)
    expect(err).toEqual([])
    expect(read(busy, 'notes.txt')).toBe('my notes\n')
    expect(manifest(busy).name).toBe('busy')
    const lines = out.join('\n').split('\n')
    expect(lines[lines.indexOf('To do this again without questions:') + 1]).toContain(' --force')
  })

  it('cancels with exit 1, writing nothing', async () => {
    const busy = busyDir()
    prompts.inject(['busy', 'cancel'])
    expect(await run(['--no-install', '--no-git'], io)).toBe(1)
    expect(err.join('\n')).toContain('Cancelled: nothing was written.')
    expect(readdirSync(busy)).toEqual(['notes.txt'])
    expect(readdirSync(cwd)).toEqual(['busy'])
  })
})

describe('a directory an earlier run left', () => {
  it('continues it as soon as it is named, with the answers read back from its files, asking nothing more', {
    timeout: 60_000,
  }, async () => {
    const skill = JSON.stringify({
      id: 'forecast',
      name: 'Forecast <3',
      description: 'Says "rain", mostly',
      tags: ['weather', 'rain'],
      examples: ['Rain?'],
    })
    const first = [
      'weather',
      '--name',
      'Weather: Bot',
      '--description',
      'Tells the weather',
      '--skill',
      skill,
      '--template',
      'multi-turn',
    ]
    const flags = [
      ...first,
      '--auth',
      'apikey',
      '--pm',
      'pnpm',
      '--no-streaming',
      '--push-notifications',
      '--runtime',
      'bun',
      '--yes',
    ]
    expect(await run([...flags, '--no-install', '--no-git'], io)).toBe(0)
    const secret = read(cwd, 'weather/.env')
    out = []

    // Only the directory is answered: every other answer comes from the earlier run.
    prompts.inject(['weather'])
    expect(await run(['--no-install', '--no-git'], io)).toBe(0)
    expect(err.filter((line) => !line.includes('not installed'))).toEqual([])
    expect(injected._injected ?? []).toEqual([])
    expect(out.join('\n')).toMatch(/^Continuing in .*weather: it holds this project from an earlier run/m)
    expect(read(cwd, 'weather/.env')).toBe(secret)
    const again = out.join('\n').split('\n')
    expect(again[again.indexOf('To do this again without questions:') + 1]).toContain(
      '--runtime bun --auth apikey --pm pnpm --no-streaming --push-notifications',
    )
  })

  it('continues an OpenID Connect project with its .env (the issuer and audience) as it is, asking nothing more', {
    timeout: 60_000,
  }, async () => {
    const flags = ['jwt', '--oidc-issuer', 'https://login.example.com/', '--oidc-audience', 'api://jwt', '--yes']
    expect(await run([...flags, '--no-install', '--no-git'], io)).toBe(0)
    const settings = read(cwd, 'jwt/.env')
    out = []
    prompts.inject(['jwt'])
    expect(await run(['--no-install', '--no-git'], io)).toBe(0)
    expect(err).toEqual([])
    expect(injected._injected ?? []).toEqual([])
    expect(out.join('\n')).toMatch(/^Continuing in .*jwt: it holds this project from an earlier run/m)
    expect(read(cwd, 'jwt/.env')).toBe(settings)
  })

  it('refuses it at once, before any other question, when a flag makes another project of it', {
    timeout: 60_000,
  }, async () => {
    expect(await run(['weather', '--yes', '--no-install', '--no-git'], io)).toBe(0)
    prompts.inject(['cancel'])
    expect(await run(['weather', '--template', 'streaming', '--no-install', '--no-git'], io)).toBe(1)
    expect(injected._injected ?? []).toEqual([])
    expect(manifest(join(cwd, 'weather')).description).toBe('An A2A agent built with create-a2a-agent')
  })

  it('offers the choices at once for a project that has been used (a2a dev wrote .a2a/), never its questions', {
    timeout: 60_000,
  }, async () => {
    expect(await run(['weather', '--yes', '--no-install', '--no-git'], io)).toBe(0)
    mkdirSync(join(cwd, 'weather/.a2a'))
    writeFileSync(join(cwd, 'weather/.a2a/dev.json'), '{}\n')
    // Were the questions asked, 'cancel' would answer the agent's name and the run would go on.
    prompts.inject(['weather', 'cancel'])
    expect(await run(['--no-install', '--no-git'], io)).toBe(1)
    expect(injected._injected ?? []).toEqual([])
    expect(err.join('\n')).toContain('Cancelled: nothing was written.')
  })
})
