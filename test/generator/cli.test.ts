import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseEnv } from 'node:util'
import prompts from 'prompts'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type CliIo, run } from '../../generator/src/cli.ts'
import { tsString } from '../../generator/src/escape.ts'
import { parseSkill, type Skill } from '../../generator/src/options.ts'
import { tsValue } from '../../generator/src/render.ts'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const bin = join(repoRoot, 'generator/bin/create-a2a-agent.mjs')
const runtimeVersion = (JSON.parse(readFileSync(join(repoRoot, 'runtime/package.json'), 'utf8')) as { version: string })
  .version
const tarball = `vendor/a2a-runtime-${runtimeVersion}.tgz`

/**
 * The child's environment: npm as the package manager that ran it, offline (should a broken generator start an
 * install, it cannot reach a registry), a git identity of its own and no user or system git configuration (so
 * commits work on any machine), and no repository discovered above the temp dir.
 */
const childEnv: NodeJS.ProcessEnv = {
  ...process.env,
  npm_config_user_agent: 'npm/10.8.2 node/v20.20.2 linux x64 workspaces/false',
  npm_config_offline: 'true',
  GIT_AUTHOR_NAME: 'Generator Test',
  GIT_AUTHOR_EMAIL: 'generator-test@example.com',
  GIT_COMMITTER_NAME: 'Generator Test',
  GIT_COMMITTER_EMAIL: 'generator-test@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CEILING_DIRECTORIES: realpathSync(tmpdir()),
}

interface Outcome {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

let cwd: string
const running = new Set<ChildProcess>()

beforeAll(() => {
  if (!existsSync(join(repoRoot, 'generator/dist/index.js')) || !existsSync(join(repoRoot, 'runtime/dist/index.js'))) {
    throw new Error('The generator and the runtime are not built: run `npm run build` first (the bin imports dist/).')
  }
})

beforeEach(() => {
  cwd = mkdtempSync(join(realpathSync(tmpdir()), 'a2a-create-'))
})

/**
 * Ends a child we started, by its PID. Children run in their own process group (the group id is their PID), so
 * whatever they started themselves (npm, git) ends with them.
 */
function end(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  try {
    process.kill(-child.pid, 'SIGKILL')
  } catch {
    child.kill('SIGKILL')
  }
}

afterEach(() => {
  for (const child of running) end(child)
  running.clear()
  injected._injected = undefined
  rmSync(cwd, { recursive: true, force: true })
})

/** Runs the command with stdin a closed pipe (not a terminal); kills it by PID if it outlives `timeoutMs`. */
function create(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Outcome> {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: options.cwd ?? cwd,
    env: options.env ?? childEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  })
  running.add(child)
  child.stdin!.end()
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  // Generous: a run packs the runtime (npm pack) and may run git, on a machine that may be busy.
  const timeoutMs = options.timeoutMs ?? 12_000
  return new Promise<Outcome>((resolve, reject) => {
    const timer = setTimeout(() => {
      end(child)
      reject(
        new Error(
          `create-a2a-agent ${args.join(' ')} did not exit within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      )
    }, timeoutMs)
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      running.delete(child)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

/** Every file and folder under `dir`, relative, `/`-separated, sorted; `.git` is listed but not entered. */
function tree(dir: string, root = dir): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      const path = join(dir, entry)
      const name = relative(root, path).split(sep).join('/')
      return statSync(path).isDirectory() && entry !== '.git' ? [`${name}/`, ...tree(path, root)] : [name]
    })
}

/** Every file under `dir` (no folders), relative and sorted. */
const filesOf = (dir: string) => tree(dir).filter((path) => !path.endsWith('/'))

const read = (...path: string[]) => readFileSync(join(...path), 'utf8')

const git = (dir: string, args: string[]) =>
  execFileSync('git', args, { cwd: dir, env: childEnv, encoding: 'utf8', timeout: 5_000 }).trim()

/** What `prompts.inject` queued and no question has taken yet. */
const injected = prompts as unknown as { _injected?: unknown[] }

const USAGE = 'Usage: create-a2a-agent [options] [dir]'

describe('without a terminal', () => {
  it('exits 2 naming [dir], --name and --description with the usage, and writes nothing', async () => {
    const result = await create([])
    expect(result.code).toBe(2)
    const [firstLine] = result.stderr.split('\n')
    expect(firstLine).toMatch(/^Missing \[dir\], --name, --description: /)
    expect(result.stderr).toContain(USAGE)
    expect(result.stdout).toBe('')
    expect(readdirSync(cwd)).toEqual([])
  })

  it('names only --description when the directory and the name are given', async () => {
    const result = await create(['weather', '--name', 'Weather'])
    expect(result.code).toBe(2)
    const [firstLine] = result.stderr.split('\n')
    expect(firstLine).toMatch(/^Missing --description: /)
    expect(firstLine).not.toMatch(/\[dir\]|--name/)
    expect(result.stderr).toContain(USAGE)
    expect(readdirSync(cwd)).toEqual([])
  })

  it('asks nothing when stdin is an open pipe that never ends: it exits without reading it', async () => {
    // The pipe stays open and silent: a command that waited on it would never exit. The deadline is only
    // there to fail with a message rather than at the test's timeout; a loaded machine meets it many times over.
    const child = spawn(process.execPath, [bin], {
      cwd,
      env: childEnv,
      stdio: ['pipe', 'ignore', 'pipe'],
      detached: true,
    })
    running.add(child)
    let stderr = ''
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        end(child)
        reject(
          new Error(
            `create-a2a-agent did not exit within 12 s with stdin an open pipe: it waits on stdin\nstderr: ${stderr}`,
          ),
        )
      }, 12_000)
      child.once('exit', (exitCode) => {
        clearTimeout(timer)
        resolve(exitCode)
      })
    })
    running.delete(child)
    expect(code).toBe(2)
    expect(stderr).toContain('Missing [dir], --name, --description')
  })

  it('refuses an unknown option with exit 2 and the usage text, writing nothing', async () => {
    const result = await create(['agent', '--yes', '--no-install', '--no-git', '--bogus'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("unknown option '--bogus'")
    expect(result.stderr).toContain(USAGE)
    expect(readdirSync(cwd)).toEqual([])
  })

  it('refuses a --template outside its choices with exit 2 and the usage text, writing nothing', async () => {
    const result = await create(['agent', '--yes', '--no-install', '--no-git', '--template', 'react'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("'react' is invalid")
    expect(result.stderr).toMatch(/Allowed choices are echo, streaming, multi-turn, ai-sdk, mastra, langgraph/)
    expect(result.stderr).toContain(USAGE)
    expect(readdirSync(cwd)).toEqual([])
  })

  it('refuses a --runtime outside its choices with exit 2, naming the flag and the choices, writing nothing', async () => {
    const result = await create(['agent', '--yes', '--no-install', '--no-git', '--runtime', 'cloudflare'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("option '--runtime <name>' argument 'cloudflare' is invalid")
    expect(result.stderr).toMatch(/Allowed choices are node, bun, deno, workers/)
    expect(result.stderr).toContain(USAGE)
    expect(readdirSync(cwd)).toEqual([])
  })

  it.each([
    ['bun', 'npm run dev', 'src/server.ts'],
    ['deno', 'deno task dev', 'deno.json'],
    ['workers', 'npm run dev', 'wrangler.jsonc'],
  ])(
    '--runtime %s: the summary names the runtime, the next step is %j, and the project has %s',
    async (runtime, dev, file) => {
      const result = await create(['agent', '--yes', '--no-install', '--no-git', '--json', '--runtime', runtime])
      expect(result.code).toBe(0)
      const summary = JSON.parse(result.stdout) as { runtime: string; files: string[]; commands: string[] }
      expect(summary.runtime).toBe(runtime)
      expect(summary.commands.at(-1)).toBe(dev)
      expect(summary.files).toContain(file)
      // The Dockerfile runs `a2a start` on Node: only the node project has one.
      expect(summary.files).not.toContain('Dockerfile')
      expect(result.stderr).toContain(
        `(echo template, ${{ bun: 'Bun', deno: 'Deno', workers: 'Cloudflare Workers' }[runtime]})`,
      )
    },
  )

  it('declares push notifications on the card with --push-notifications, and documents the guard in .env.example', async () => {
    const result = await create(['--push-notifications', '--yes', '--no-install', '--no-git', 'pushy'])
    expect(result.code).toBe(0)
    expect(read(join(cwd, 'pushy'), 'src/agent.ts')).toContain(
      'capabilities: { streaming: true, pushNotifications: true }',
    )
    expect(read(join(cwd, 'pushy'), '.env.example')).toContain('# A2A_PUSH_ALLOW=127.0.0.1,::1')
    expect(read(join(cwd, 'pushy'), 'test/agent.test.ts')).toContain("describe('push notifications'")
    expect(read(join(cwd, 'pushy'), 'README.md')).toContain('## Push notifications')
  })
})

describe('--yes --json', () => {
  it('prints one JSON summary on stdout and writes the project, depending on the runtime packed into vendor/', async () => {
    const result = await create(['--yes', '--no-install', '--no-git', '--json'])
    expect(result.stderr).not.toMatch(/error/i)
    expect(result.code).toBe(0)
    expect(result.stdout.trim().split('\n')).toHaveLength(1)
    const summary = JSON.parse(result.stdout) as Record<string, unknown>
    const dir = join(cwd, 'my-agent')
    expect(summary).toEqual({
      dir,
      packageName: 'my-agent',
      template: 'echo',
      runtime: 'node',
      deploy: ['docker'],
      files: expect.arrayContaining([
        'package.json',
        'src/agent.ts',
        'test/agent.test.ts',
        'tsconfig.json',
        '.gitignore',
        '.env.example',
        'README.md',
        'AGENTS.md',
        'Dockerfile',
        tarball,
      ]),
      installed: false,
      git: 'skipped',
      commands: ['cd my-agent', 'npm install', 'npm run dev'],
    })
    // The summary lists exactly what is on disk.
    expect([...(summary.files as string[])].sort()).toEqual(filesOf(dir))

    const manifest = JSON.parse(read(dir, 'package.json')) as {
      name: string
      dependencies: Record<string, string>
      scripts: Record<string, string>
    }
    expect(manifest.name).toBe('my-agent')
    expect(manifest.dependencies['a2a-runtime']).toBe(`file:./${tarball}`)
    expect(Object.keys(manifest.scripts)).toEqual(expect.arrayContaining(['dev', 'start', 'test', 'typecheck', 'card']))
    expect(statSync(join(dir, tarball)).size).toBeGreaterThan(0)
    expect(existsSync(join(dir, '.env'))).toBe(false)
  })

  it('--auth bearer writes a .env with a generated A2A_BEARER_TOKEN, and .gitignore keeps .env out of git', async () => {
    const result = await create(['secured', '--yes', '--no-install', '--no-git', '--json', '--auth', 'bearer'])
    expect(result.code).toBe(0)
    const dir = join(cwd, 'secured')
    const token = /^A2A_BEARER_TOKEN=(.*)$/m.exec(read(dir, '.env'))?.[1]
    expect(token?.trim()).toMatch(/^\S{16,}$/)
    expect(
      read(dir, '.gitignore')
        .split('\n')
        .map((line) => line.trim()),
    ).toContain('.env')
    expect(read(dir, 'src/agent.ts')).toContain("authentication: { schemes: ['bearer'] }")
    expect((JSON.parse(result.stdout) as { files: string[] }).files).toContain('.env')
  })

  it('--auth oidc without an issuer or audience: .env holds them as commented placeholders (0600), the next steps say to set them, and the project tests with a local issuer of its own', async () => {
    const result = await create(['jwt', '--yes', '--no-install', '--no-git', '--auth', 'oidc'])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const dir = join(cwd, 'jwt')
    const env = read(dir, '.env')
    expect(parseEnv(env)).toEqual({})
    expect(env).toMatch(/^# A2A_OIDC_ISSUER=https:\/\/\S+$/m)
    expect(env).toMatch(/^# A2A_OIDC_AUDIENCE=\S+$/m)
    expect((statSync(join(dir, '.env')).mode & 0o777).toString(8)).toBe('600')
    expect(result.stdout.split('\nNext:\n')[1]).toMatch(
      /^OpenID Connect: set A2A_OIDC_ISSUER \(your issuer\) and A2A_OIDC_AUDIENCE \(the audience its tokens name\) in \.env/m,
    )
    expect(read(dir, 'src/agent.ts')).toContain("authentication: { schemes: ['oidc'] }")
    expect(read(dir, 'test/oidc-issuer.ts')).toContain('export async function startTestIssuer')
    const manifest = JSON.parse(read(dir, 'package.json')) as { devDependencies: Record<string, string> }
    expect(manifest.devDependencies.jose).toMatch(/^\^6\./)
  })

  it('--oidc-issuer and --oidc-audience (--auth oidc implied) go into .env as given, and nothing is left to set', async () => {
    const flags = ['--oidc-issuer', 'https://login.example.com/tenant/v2.0', '--oidc-audience', 'api://jwt,api://other']
    const result = await create(['jwt', '--yes', '--no-install', '--no-git', ...flags])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const dir = join(cwd, 'jwt')
    expect(parseEnv(read(dir, '.env'))).toEqual({
      A2A_OIDC_ISSUER: 'https://login.example.com/tenant/v2.0',
      A2A_OIDC_AUDIENCE: 'api://jwt,api://other',
    })
    expect(result.stdout).not.toContain('OpenID Connect: set')
    expect(read(dir, 'src/agent.ts')).toContain("authentication: { schemes: ['oidc'] }")
  })

  it.each([
    [['--oidc-issuer', 'http://login.example.com/'], /^--oidc-issuer must be an absolute https: URL/],
    [['--auth', 'bearer', '--oidc-audience', 'api://x'], /^--oidc-audience is for --auth oidc \(got --auth bearer\)$/],
  ])('%j exits 2 in one line naming the flag, and writes nothing', async (flags, message) => {
    const result = await create(['jwt', '--yes', '--no-install', '--no-git', ...flags])
    expect(result.code).toBe(2)
    expect(result.stderr.trim()).toMatch(message)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(existsSync(join(cwd, 'jwt'))).toBe(false)
  })

  it('writes the .env (the credential) readable and writable by its owner only (0600)', async () => {
    const result = await create(['secured', '--yes', '--no-install', '--no-git', '--auth', 'apikey'])
    expect(result.code).toBe(0)
    const dir = join(cwd, 'secured')
    expect((statSync(join(dir, '.env')).mode & 0o777).toString(8)).toBe('600')
    // The other files keep the usual permissions, as the umask allows.
    expect(statSync(join(dir, 'src/agent.ts')).mode & 0o777).toBe(0o666 & ~process.umask())
  })

  it('makes the package name weather-bot from the directory "Weather Bot" and keeps "Weather Bot" on the card', async () => {
    const result = await create(['Weather Bot', '--name', 'Weather Bot', '--yes', '--no-install', '--no-git', '--json'])
    expect(result.code).toBe(0)
    const dir = join(cwd, 'Weather Bot')
    expect((JSON.parse(result.stdout) as { packageName: string }).packageName).toBe('weather-bot')
    expect((JSON.parse(read(dir, 'package.json')) as { name: string }).name).toBe('weather-bot')
    expect(read(dir, 'src/agent.ts')).toMatch(/card: \{\s*name: "Weather Bot",/)
  })
})

describe('the target directory', () => {
  it("accepts a fresh repository's files, keeps README.md and LICENSE as they are, and adds to .gitignore", async () => {
    const dir = join(cwd, 'fresh')
    mkdirSync(join(dir, '.git'), { recursive: true })
    writeFileSync(join(dir, 'README.md'), '# My own readme\n')
    writeFileSync(join(dir, 'LICENSE'), 'MIT, me\n')
    writeFileSync(join(dir, '.gitignore'), 'secrets/\n*.tmp\n')
    const result = await create(['fresh', '--yes', '--no-install', '--no-git'])
    expect(result.code).toBe(0)
    expect(read(dir, 'README.md')).toBe('# My own readme\n')
    expect(read(dir, 'LICENSE')).toBe('MIT, me\n')
    const gitignore = read(dir, '.gitignore')
    expect(gitignore.startsWith('secrets/\n*.tmp\n')).toBe(true)
    const lines = gitignore.split('\n')
    expect(lines).toContain('node_modules/')
    expect(lines).toContain('.env')
    expect(lines.filter((line) => line === 'node_modules/')).toHaveLength(1)
    expect(existsSync(join(dir, 'src/agent.ts'))).toBe(true)
    expect(result.stdout).toContain('Kept your README.md')
  })

  it('refuses a directory holding other files with exit 1, lists them, and writes nothing', async () => {
    const dir = join(cwd, 'busy')
    mkdirSync(join(dir, 'src'), { recursive: true })
    writeFileSync(join(dir, 'notes.txt'), 'my notes\n')
    writeFileSync(join(dir, 'src/old.ts'), 'export const old = 1\n')
    const before = tree(cwd)
    const result = await create(['busy', '--yes', '--no-install', '--no-git'])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^\s+notes\.txt$/m)
    expect(result.stderr).toMatch(/^\s+src(\/|\/old\.ts)?$/m)
    expect(result.stderr).toContain('--force')
    expect(tree(cwd)).toEqual(before)
  })

  it('with --force writes the project beside those files and leaves them unchanged', async () => {
    const dir = join(cwd, 'busy')
    mkdirSync(join(dir, 'src'), { recursive: true })
    writeFileSync(join(dir, 'notes.txt'), 'my notes\n')
    writeFileSync(join(dir, 'src/old.ts'), 'export const old = 1\n')
    const result = await create(['busy', '--yes', '--no-install', '--no-git', '--force'])
    expect(result.code).toBe(0)
    expect(read(dir, 'notes.txt')).toBe('my notes\n')
    expect(read(dir, 'src/old.ts')).toBe('export const old = 1\n')
    expect(existsSync(join(dir, 'src/agent.ts'))).toBe(true)
    expect(existsSync(join(dir, 'package.json'))).toBe(true)
  })

  it('with --force still never writes over a file of the user: it lists those in the way and writes nothing', async () => {
    const dir = join(cwd, 'busy')
    mkdirSync(join(dir, 'src'), { recursive: true })
    writeFileSync(join(dir, 'package.json'), '{"name":"mine"}\n')
    writeFileSync(join(dir, 'src/agent.ts'), 'export const mine = 1\n')
    const before = tree(cwd)
    const result = await create(['busy', '--yes', '--no-install', '--no-git', '--force'])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^\s+package\.json$/m)
    expect(result.stderr).toMatch(/^\s+src\/agent\.ts$/m)
    expect(read(dir, 'package.json')).toBe('{"name":"mine"}\n')
    expect(tree(cwd)).toEqual(before)
  })
})

describe('never outside the target, never half-written in silence', () => {
  it('does not write through a README.md link, even a dangling one', async () => {
    const dir = join(cwd, 'linked')
    mkdirSync(dir)
    const outside = join(cwd, 'outside-readme.md')
    symlinkSync(outside, join(dir, 'README.md'))
    const result = await create(['linked', '--yes', '--no-install', '--no-git'])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^\s+README\.md$/m)
    expect(existsSync(outside)).toBe(false)
    expect(lstatSync(join(dir, 'README.md')).isSymbolicLink()).toBe(true)
  })

  it('with --force stops before writing anything when a file stands where a folder must go', async () => {
    const dir = join(cwd, 'busy')
    mkdirSync(dir)
    writeFileSync(join(dir, 'test'), 'mine\n')
    writeFileSync(join(cwd, 'elsewhere'), 'not yours to touch\n')
    symlinkSync(join(cwd, 'elsewhere'), join(dir, 'Dockerfile'))
    const before = tree(cwd)
    const result = await create(['busy', '--yes', '--no-install', '--no-git', '--force'])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^\s+test$/m)
    expect(result.stderr).toMatch(/^\s+Dockerfile$/m)
    expect(result.stderr).not.toMatch(/\n\s+at /)
    expect(tree(cwd)).toEqual(before)
  })

  it('says in one line when the target path runs through a file', async () => {
    writeFileSync(join(cwd, 'afile'), 'x\n')
    const result = await create(['afile/agent', '--yes', '--no-install', '--no-git'])
    expect(result.code).toBe(1)
    expect(result.stderr.trim()).toMatch(/cannot be created: part of its path is a file$/)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
  })

  it("with --force leaves the user's other files out of the first commit", async () => {
    const dir = join(cwd, 'busy')
    mkdirSync(dir)
    writeFileSync(join(dir, 'notes.txt'), 'private\n')
    const result = await create(['busy', '--yes', '--no-install', '--force'])
    expect(result.code).toBe(0)
    const committed = git(dir, ['ls-files']).split('\n')
    expect(committed).toContain('src/agent.ts')
    expect(committed).not.toContain('notes.txt')
  })
})

describe('git', () => {
  it('outside a repository, initialises one with a single commit holding the whole project', async () => {
    const result = await create(['agent', '--yes', '--no-install'])
    expect(result.code).toBe(0)
    const dir = join(cwd, 'agent')
    expect(statSync(join(dir, '.git')).isDirectory()).toBe(true)
    expect(git(dir, ['rev-list', '--count', 'HEAD'])).toBe('1')
    expect(git(dir, ['status', '--porcelain'])).toBe('')
    expect(git(dir, ['ls-files'])).toContain('src/agent.ts')
    expect(result.stdout).toContain('Initialised a git repository with a first commit')
  })

  for (const auth of ['bearer', 'apikey'] as const) {
    it(`with --auth ${auth}, commits the project without its .env (the credential) and prints the next steps`, async () => {
      const result = await create(['secured', '--yes', '--no-install', '--auth', auth])
      expect(result.stderr).toBe('')
      expect(result.code).toBe(0)
      const dir = join(cwd, 'secured')
      expect(existsSync(join(dir, '.env'))).toBe(true)
      expect(git(dir, ['rev-list', '--count', 'HEAD'])).toBe('1')
      const committed = git(dir, ['ls-files']).split('\n')
      expect(committed).toContain('src/agent.ts')
      expect(committed).toContain('.env.example')
      expect(committed).not.toContain('.env')
      expect(git(dir, ['status', '--porcelain'])).toBe('')
      expect(result.stdout).toContain('Initialised a git repository with a first commit')
      expect(result.stdout).toMatch(/Next:\n {2}cd secured\n/)
    })
  }

  it('after the next steps, a template that calls a model says where its key and model go (.env); another says nothing of a model', async () => {
    const model = await create(['chat', '--yes', '--no-install', '--no-git', '--template', 'ai-sdk'])
    expect(model.code).toBe(0)
    const after = model.stdout.split('\nNext:\n')[1]!
    expect(after).toMatch(
      /^The model: put your key in \.env, as OPENAI_API_KEY=<your key>; OPENAI_MODEL picks the model, OPENAI_BASE_URL another/m,
    )
    expect(read(join(cwd, 'chat'), '.env')).toMatch(/^OPENAI_API_KEY=$/m)
    const echo = await create(['plain', '--yes', '--no-install', '--no-git'])
    expect(echo.code).toBe(0)
    expect(echo.stdout).not.toContain('The model')
  })

  it('inside an existing repository, creates no nested repository and says so', async () => {
    git(cwd, ['init', '--quiet'])
    const result = await create(['agent', '--yes', '--no-install'])
    expect(result.code).toBe(0)
    const dir = join(cwd, 'agent')
    expect(existsSync(join(dir, 'src/agent.ts'))).toBe(true)
    expect(existsSync(join(dir, '.git'))).toBe(false)
    expect(result.stdout).toMatch(/Git: the directory is already inside a git repository, so no new one was created/)
    // The outer repository gained no commit either.
    expect(() => git(cwd, ['rev-parse', '--verify', '--quiet', 'HEAD'])).toThrow()
  })
})

describe('install', () => {
  it('commits the lockfile installing wrote, so `npm ci` (the Dockerfile) works from a clone', async () => {
    // An npm whose install writes a lockfile and a dependency folder at once, so no registry is reached; the
    // real one packs the runtime.
    const realNpm = execFileSync('which', ['npm'], { env: childEnv, encoding: 'utf8', timeout: 5_000 }).trim()
    const env = fakePackageManager(
      'npm',
      `[ "$1" = install ] || exec '${realNpm}' "$@"\necho '{"lockfileVersion":3}' > package-lock.json && mkdir -p node_modules/x`,
    )
    const result = await create(['locked', '--yes', '--pm', 'npm'], { env })
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const committed = git(join(cwd, 'locked'), ['ls-files']).split('\n')
    expect(committed).toContain('package-lock.json')
    expect(committed).not.toContain('node_modules/x')
    expect(git(join(cwd, 'locked'), ['status', '--porcelain'])).toBe('')
  })

  it('keeps the project when installing fails, exits 1 and prints the command to retry', async () => {
    let env = childEnv
    const hasPnpm = (() => {
      try {
        execFileSync('which', ['pnpm'], { env: childEnv, stdio: 'ignore', timeout: 5_000 })
        return true
      } catch {
        return false
      }
    })()
    if (hasPnpm) {
      // A pnpm that fails at once, first on PATH, so no registry is ever reached.
      const fakeBin = join(cwd, 'fake-bin')
      mkdirSync(fakeBin)
      writeFileSync(join(fakeBin, 'pnpm'), '#!/bin/sh\necho "pnpm: failing on purpose" >&2\nexit 1\n')
      chmodSync(join(fakeBin, 'pnpm'), 0o755)
      env = { ...childEnv, PATH: `${fakeBin}${delimiter}${childEnv.PATH ?? ''}` }
    }
    const result = await create(['my agent', '--yes', '--no-git', '--pm', 'pnpm'], { env })
    expect(result.code).toBe(1)
    const dir = join(cwd, 'my agent')
    expect(existsSync(join(dir, 'package.json'))).toBe(true)
    expect(existsSync(join(dir, 'src/agent.ts'))).toBe(true)
    expect(existsSync(join(dir, tarball))).toBe(true)
    expect(result.stderr).toMatch(/Installing failed/)
    expect(result.stderr).toContain("cd 'my agent' && pnpm install")
  })
})

describe('interactive', () => {
  it('asks for what is missing, writes the project from the answers, and prints the command that does it again', async () => {
    const name = 'Trip "Desk" <Ops>'
    const description = "Plans trips: flights & hotels, it's fast"
    const skill: Skill = {
      id: 'find-flight',
      name: 'Find a flight',
      description: 'Searches flights: any airline',
      tags: ['travel', 'flights'],
      examples: ['Fly to Oslo', 'Cheapest to Rome'],
    }
    prompts.inject([
      'trip-desk', // dir
      name,
      description,
      'multi-turn', // template
      'deno', // runtime
      false, // streaming
      true, // push notifications
      'apikey', // auth
      true, // declare skills now?
      skill.id,
      skill.name,
      skill.description,
      ' travel, flights ,', // tags
      'Fly to Oslo, Cheapest to Rome', // examples
      false, // another skill?
    ])
    const out: string[] = []
    const err: string[] = []
    const io: CliIo = { cwd, interactive: true, out: (text) => out.push(text), err: (text) => err.push(text) }
    // --no-install and --no-git: they are not asked, and the test must not reach a registry.
    const code = await run(['--no-install', '--no-git'], io)
    // Without deno on this machine's PATH the generator says so in one line (requirements.test.ts): nothing else.
    const problems = () => err.filter((line) => !line.startsWith('Deno is not installed (no deno on PATH)'))
    expect(problems()).toEqual([])
    expect(code).toBe(0)
    // Every injected answer was asked for, in order.
    expect(injected._injected ?? []).toEqual([])

    const dir = join(cwd, 'trip-desk')
    expect((JSON.parse(read(dir, 'package.json')) as { name: string; description: string }).name).toBe('trip-desk')
    expect((JSON.parse(read(dir, 'package.json')) as { description: string }).description).toBe(description)
    const agent = read(dir, 'src/agent.ts')
    expect(agent).toContain(`name: ${tsString(name)},`)
    expect(agent).toContain(`description: ${tsString(description)},`)
    expect(agent).toContain(`const skills: AgentSkill[] = ${tsValue([skill])}`)
    expect(agent).toContain('capabilities: { streaming: false, pushNotifications: true }')
    expect(agent).toContain("authentication: { schemes: ['apiKey'] }")
    expect(agent).toContain('task.inputRequired(') // the multi-turn template
    expect(read(dir, '.env')).toMatch(/^A2A_API_KEY=\S{16,}$/m)

    const lines = out.join('\n').split('\n')
    const heading = lines.indexOf('To do this again without questions:')
    expect(heading).toBeGreaterThan(-1)
    const command = lines[heading + 1]!.trim()
    expect(command.split(' ')).toContain('--yes')

    // The words the shell makes of it carry the same answers, the skill included.
    const words = execFileSync('/bin/sh', ['-c', `npx() { printf '%s\\0' "$@"; }\n${command}`], {
      encoding: 'utf8',
      timeout: 5_000,
    })
      .split('\0')
      .slice(0, -1)
    const value = (flag: string) => words[words.indexOf(flag) + 1]
    expect(words.slice(0, 2)).toEqual(['create-a2a-agent', 'trip-desk'])
    expect(value('--name')).toBe(name)
    expect(value('--description')).toBe(description)
    expect(parseSkill(value('--skill')!)).toEqual(skill)
    expect(value('--template')).toBe('multi-turn')
    expect(value('--runtime')).toBe('deno')
    expect(words).toContain('--push-notifications')
    expect(value('--auth')).toBe('apikey')
    expect(words).toEqual(expect.arrayContaining(['--no-streaming', '--no-install', '--no-git', '--yes']))

    // Run again without questions elsewhere, it makes the same project (the generated secret aside).
    const again = mkdtempSync(join(realpathSync(tmpdir()), 'a2a-create-again-'))
    try {
      const repeatIo: CliIo = { cwd: again, interactive: true, out: () => {}, err: (text) => err.push(text) }
      expect(await run(words.slice(1), repeatIo)).toBe(0)
      expect(problems()).toEqual([])
      const first = filesOf(dir)
      expect(filesOf(join(again, 'trip-desk'))).toEqual(first)
      for (const path of first.filter((file) => file !== '.env' && !file.endsWith('.tgz'))) {
        expect(read(again, 'trip-desk', path), path).toBe(read(dir, path))
      }
    } finally {
      rmSync(again, { recursive: true, force: true })
    }
  })
})

describe('the command line', () => {
  it('--version, -v and -V (as for a2a) print just the version and exit 0', async () => {
    const { version } = JSON.parse(read(repoRoot, 'generator', 'package.json')) as { version: string }
    for (const flag of ['--version', '-v', '-V']) {
      const result = await create([flag])
      expect(result.code, flag).toBe(0)
      expect(result.stdout, flag).toBe(`${version}\n`)
      expect(result.stderr).toBe('')
    }
  })

  it('--help shows the defaults of --template, --runtime and --auth, and no "(default: [])" for --skill', async () => {
    const result = await create(['--help'])
    expect(result.code).toBe(0)
    const help = result.stdout.replace(/\s+/g, ' ')
    expect(help).toMatch(
      /--template <name> .*\(choices: "echo", "streaming", "multi-turn", "ai-sdk", "mastra", "langgraph", "team", default: "echo"\)/,
    )
    expect(help).toMatch(/--runtime <name> .*\(choices: "node", "bun", "deno", "workers", default: "node"\)/)
    expect(help).toMatch(/--auth <mode> .*\(choices: "none", "bearer", "apikey", "oidc", default: "none"\)/)
    expect(help).toMatch(/--oidc-issuer <url> with --auth oidc: /)
    expect(help).toMatch(/--oidc-audience <aud> with --auth oidc: /)
    expect(help).toContain('--package-name <name>')
    expect(help).not.toContain('default: []')
  })

  it('run from a clone before `npm run build`, says in one line to build first (exit 1, no stack)', async () => {
    // A copy of the bin with no dist/ beside it, as in a fresh clone; the repository's own dist/ is left alone.
    const unbuilt = join(cwd, 'unbuilt')
    mkdirSync(join(unbuilt, 'bin'), { recursive: true })
    writeFileSync(join(unbuilt, 'bin/create-a2a-agent.mjs'), read(bin))
    const child = spawn(process.execPath, [join(unbuilt, 'bin/create-a2a-agent.mjs'), '--yes'], {
      cwd,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    running.add(child)
    let stdout = ''
    let stderr = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
    running.delete(child)
    expect(code).toBe(1)
    expect(stdout).toBe('')
    expect(stderr.trim().split('\n')).toHaveLength(1)
    expect(stderr).toMatch(/create-a2a-agent is not built .*run `npm run build`/)
    expect(stderr).not.toContain('ERR_MODULE_NOT_FOUND')
  })
})

describe('a directory name of which no package name can be made', () => {
  it('with --yes names the package "agent", says so and how to choose another, and keeps the name on the card', async () => {
    const result = await create(['天气机器人', '--yes', '--no-install', '--no-git', '--json'])
    expect(result.code).toBe(0)
    expect((JSON.parse(result.stdout) as { packageName: string }).packageName).toBe('agent')
    expect(result.stderr).toMatch(/^Package name: agent \(.*--package-name sets another\)\.$/m)
    const dir = join(cwd, '天气机器人')
    expect((JSON.parse(read(dir, 'package.json')) as { name: string }).name).toBe('agent')
    expect(read(dir, 'src/agent.ts')).toMatch(/name: "天气机器人",/)
  })

  it('takes --package-name instead', async () => {
    const result = await create(['天气机器人', '--package-name', 'weather-bot', '--yes', '--no-install', '--no-git'])
    expect(result.code).toBe(0)
    expect((JSON.parse(read(cwd, '天气机器人', 'package.json')) as { name: string }).name).toBe('weather-bot')
  })

  it('refuses a package name npm refuses in one line naming --package-name, writing nothing', async () => {
    const result = await create(['node_modules', '--yes', '--no-install', '--no-git'])
    expect(result.code).toBe(2)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain('pass --package-name <name>')
    expect(readdirSync(cwd)).toEqual([])
  })
})

/** A fake package manager first on PATH: `script` is its body. Returns the environment that finds it. */
function fakePackageManager(name: string, script: string): NodeJS.ProcessEnv {
  const fakeBin = join(cwd, 'fake-bin')
  mkdirSync(fakeBin, { recursive: true })
  writeFileSync(join(fakeBin, name), `#!/bin/sh\n${script}\n`)
  chmodSync(join(fakeBin, name), 0o755)
  return { ...childEnv, PATH: `${fakeBin}${delimiter}${childEnv.PATH ?? ''}` }
}

describe('an earlier run with the same answers is continued, never written over', () => {
  it('continues into the directory an earlier run left, with what installing left there: files already in place stay, git runs', {
    timeout: 60_000,
  }, async () => {
    const args = ['agent', '--yes', '--no-install', '--auth', 'bearer', '--no-git']
    expect((await create(args)).code).toBe(0)
    const dir = join(cwd, 'agent')
    const secret = read(dir, '.env')
    // What an install stopped half-way leaves.
    mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true })
    writeFileSync(join(dir, 'package-lock.json'), '{}\n')
    const before = Object.fromEntries(filesOf(dir).map((path) => [path, statSync(join(dir, path)).mtimeMs]))

    const again = await create(args.filter((arg) => arg !== '--no-git'))
    expect(again.stderr).toBe('')
    expect(again.code).toBe(0)
    expect(again.stdout).toMatch(/^Continuing in .*agent: it holds this project from an earlier run/m)
    expect(again.stdout).toContain('Initialised a git repository with a first commit')
    // Nothing was rewritten; the credential the clients may have is the one made the first time.
    expect(read(dir, '.env')).toBe(secret)
    for (const [path, mtime] of Object.entries(before)) expect(statSync(join(dir, path)).mtimeMs, path).toBe(mtime)
    const committed = git(dir, ['ls-files']).split('\n')
    expect(committed).toContain('src/agent.ts')
    expect(committed).not.toContain('.env')
  })

  it('refuses as before a directory where one of the files differs from what this run writes, and changes nothing', {
    timeout: 60_000,
  }, async () => {
    const args = ['agent', '--yes', '--no-install', '--no-git']
    expect((await create(args)).code).toBe(0)
    const dir = join(cwd, 'agent')
    writeFileSync(join(dir, 'src/agent.ts'), `${read(dir, 'src/agent.ts')}// my change\n`)
    const before = tree(cwd).map((path) => [path, path.endsWith('/') ? '' : read(cwd, path)])

    const again = await create(args)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('is not empty')
    expect(tree(cwd).map((path) => [path, path.endsWith('/') ? '' : read(cwd, path)])).toEqual(before)

    // Beside them (--force) it still writes over nothing: the changed file is in the way.
    const forced = await create([...args, '--force'])
    expect(forced.code).toBe(1)
    expect(forced.stderr).toMatch(/^\s+src\/agent\.ts$/m)
    expect(tree(cwd).map((path) => [path, path.endsWith('/') ? '' : read(cwd, path)])).toEqual(before)
  })

  it("with --force, continues an earlier run written beside the user's files, keeping its credential and their files", {
    timeout: 60_000,
  }, async () => {
    const dir = join(cwd, 'agent')
    mkdirSync(dir)
    writeFileSync(join(dir, 'notes.txt'), 'mine\n')
    const args = ['agent', '--yes', '--no-install', '--no-git', '--force', '--auth', 'bearer']
    expect((await create(args)).code).toBe(0)
    const secret = read(dir, '.env')

    const again = await create(args)
    expect(again.stderr).toBe('')
    expect(again.code).toBe(0)
    expect(again.stdout).toMatch(/^Continuing in .*agent: it holds this project from an earlier run/m)
    expect(again.stdout).toContain("Kept the earlier run's .env (its credential).")
    expect(read(dir, '.env')).toBe(secret)
    expect(read(dir, 'notes.txt')).toBe('mine\n')
  })

  it('refuses an earlier run of other answers (another description)', { timeout: 60_000 }, async () => {
    expect((await create(['agent', '--yes', '--no-install', '--no-git'])).code).toBe(0)
    const again = await create(['agent', '--yes', '--no-install', '--no-git', '--description', 'Something else'])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('is not empty')
  })
})

describe('install interrupted', () => {
  it('Ctrl-C during install says how to finish and exits 130 without a stack; the same command again continues and finishes', {
    timeout: 60_000,
  }, async () => {
    // A pnpm that says it started and then waits, as a slow install does.
    const env = fakePackageManager('pnpm', 'echo "installing (fake)"\nexec sleep 300')
    const child = spawn(process.execPath, [bin, 'agent', '--yes', '--no-git', '--pm', 'pnpm'], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    running.add(child)
    let stdout = ''
    let stderr = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve))
    await waitFor(
      () => stdout.includes('installing (fake)'),
      30_000,
      () => `the install never started\nstdout: ${stdout}\nstderr: ${stderr}`,
    )
    // Ctrl-C at a terminal signals the whole foreground group: the generator and the package manager.
    process.kill(-child.pid!, 'SIGINT')
    const code = await exited
    running.delete(child)
    expect(code).toBe(130)
    expect(stderr).toContain('Installing was interrupted. The project is in place; to finish:')
    expect(stderr).toContain('  cd agent && pnpm install')
    expect(stderr).toContain('or run the same command again: it continues in that directory.')
    expect(stderr).not.toMatch(/\n\s+at /)
    expect(existsSync(join(cwd, 'agent/src/agent.ts'))).toBe(true)

    // The same command, with an install that works this time.
    const again = await create(['agent', '--yes', '--no-git', '--pm', 'pnpm'], {
      env: fakePackageManager('pnpm', 'echo "installed (fake)"'),
    })
    expect(again.stderr).toBe('')
    expect(again.code).toBe(0)
    expect(again.stdout).toMatch(/^Continuing in /m)
    expect(again.stdout).toContain('installed (fake)')
  })
})

/** Polls `done` every 50 ms; fails with `describe()` once `ms` have passed. */
async function waitFor(done: () => boolean, ms: number, describe: () => string): Promise<void> {
  const deadline = Date.now() + ms
  while (!done()) {
    if (Date.now() > deadline) throw new Error(describe())
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
