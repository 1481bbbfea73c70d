import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import prompts from 'prompts'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type CliIo, type Skill, parseSkill, run, tsString } from '../../src/index.ts'
import { tsValue } from '../../src/_render.ts'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const bin = join(repoRoot, 'bin/create-a2a-agent.mjs')
const runtimeVersion = (JSON.parse(readFileSync(join(repoRoot, 'runtime/package.json'), 'utf8')) as { version: string }).version
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
  /** From spawn to exit. */
  ms: number
}

let cwd: string
const running = new Set<ChildProcess>()

beforeAll(() => {
  if (!existsSync(join(repoRoot, 'dist/index.js')) || !existsSync(join(repoRoot, 'runtime/dist/index.js'))) {
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
function create(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Outcome> {
  const started = performance.now()
  const child = spawn(process.execPath, [bin, ...args], { cwd: options.cwd ?? cwd, env: options.env ?? childEnv, stdio: ['pipe', 'pipe', 'pipe'], detached: true })
  running.add(child)
  child.stdin!.end()
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  let ms = 0
  child.once('exit', () => (ms = performance.now() - started))
  const timeoutMs = options.timeoutMs ?? 10_000
  return new Promise<Outcome>((resolve, reject) => {
    const timer = setTimeout(() => {
      end(child)
      reject(new Error(`create-a2a-agent ${args.join(' ')} did not exit within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, timeoutMs)
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      running.delete(child)
      resolve({ code, signal, stdout, stderr, ms })
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

const git = (dir: string, args: string[]) => execFileSync('git', args, { cwd: dir, env: childEnv, encoding: 'utf8', timeout: 5_000 }).trim()

/** What `prompts.inject` queued and no question has taken yet. */
const injected = prompts as unknown as { _injected?: unknown[] }

const USAGE = 'Usage: create-a2a-agent [options] [dir]'

describe('without a terminal', () => {
  it('exits 2 within a second naming [dir], --name and --description with the usage, and writes nothing', async () => {
    const result = await create([], { timeoutMs: 5_000 })
    expect(result.code).toBe(2)
    expect(result.ms).toBeLessThan(1_000)
    const [firstLine] = result.stderr.split('\n')
    expect(firstLine).toMatch(/^Missing \[dir\], --name, --description: /)
    expect(result.stderr).toContain(USAGE)
    expect(result.stdout).toBe('')
    expect(readdirSync(cwd)).toEqual([])
  })

  it('names only --description when the directory and the name are given', async () => {
    const result = await create(['weather', '--name', 'Weather'], { timeoutMs: 5_000 })
    expect(result.code).toBe(2)
    const [firstLine] = result.stderr.split('\n')
    expect(firstLine).toMatch(/^Missing --description: /)
    expect(firstLine).not.toMatch(/\[dir\]|--name/)
    expect(result.stderr).toContain(USAGE)
    expect(readdirSync(cwd)).toEqual([])
  })

  it('asks nothing when stdin is an open pipe that never ends', async () => {
    const started = performance.now()
    const child = spawn(process.execPath, [bin], { cwd, env: childEnv, stdio: ['pipe', 'ignore', 'pipe'], detached: true })
    running.add(child)
    let stderr = ''
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        end(child)
        resolve(null)
      }, 5_000)
      child.once('exit', (exitCode) => {
        clearTimeout(timer)
        resolve(exitCode)
      })
    })
    running.delete(child)
    expect(code).toBe(2)
    expect(performance.now() - started).toBeLessThan(1_000)
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
    expect(result.stderr).toMatch(/Allowed choices are echo, streaming, multi-turn, llm/)
    expect(result.stderr).toContain(USAGE)
    expect(readdirSync(cwd)).toEqual([])
  })

  it('declares push notifications on the card with --push-notifications, and documents the guard in .env.example', async () => {
    const result = await create(['--push-notifications', '--yes', '--no-install', '--no-git', 'pushy'])
    expect(result.code).toBe(0)
    expect(read(join(cwd, 'pushy'), 'src/agent.ts')).toContain('capabilities: { streaming: true, pushNotifications: true }')
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
      files: expect.arrayContaining(['package.json', 'src/agent.ts', 'test/agent.test.ts', 'tsconfig.json', '.gitignore', '.env.example', 'README.md', 'AGENTS.md', 'Dockerfile', tarball]),
      installed: false,
      git: 'skipped',
      commands: ['cd my-agent', 'npm install', 'npm run dev'],
    })
    // The summary lists exactly what is on disk.
    expect([...(summary.files as string[])].sort()).toEqual(filesOf(dir))

    const manifest = JSON.parse(read(dir, 'package.json')) as { name: string; dependencies: Record<string, string>; scripts: Record<string, string> }
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
    expect(read(dir, '.gitignore').split('\n').map((line) => line.trim())).toContain('.env')
    expect(read(dir, 'src/agent.ts')).toContain("authentication: { schemes: ['bearer'] }")
    expect((JSON.parse(result.stdout) as { files: string[] }).files).toContain('.env')
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

  it('with --force leaves the user\'s other files out of the first commit', async () => {
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
    const skill: Skill = { id: 'find-flight', name: 'Find a flight', description: 'Searches flights: any airline', tags: ['travel', 'flights'], examples: ['Fly to Oslo', 'Cheapest to Rome'] }
    prompts.inject([
      'trip-desk', // dir
      name,
      description,
      'multi-turn', // template
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
    expect(err).toEqual([])
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
    const words = execFileSync('/bin/sh', ['-c', `npx() { printf '%s\\0' "$@"; }\n${command}`], { encoding: 'utf8', timeout: 5_000 }).split('\0').slice(0, -1)
    const value = (flag: string) => words[words.indexOf(flag) + 1]
    expect(words.slice(0, 2)).toEqual(['create-a2a-agent', 'trip-desk'])
    expect(value('--name')).toBe(name)
    expect(value('--description')).toBe(description)
    expect(parseSkill(value('--skill')!)).toEqual(skill)
    expect(value('--template')).toBe('multi-turn')
    expect(words).toContain('--push-notifications')
    expect(value('--auth')).toBe('apikey')
    expect(words).toEqual(expect.arrayContaining(['--no-streaming', '--no-install', '--no-git', '--yes']))

    // Run again without questions elsewhere, it makes the same project (the generated secret aside).
    const again = mkdtempSync(join(realpathSync(tmpdir()), 'a2a-create-again-'))
    try {
      const repeatIo: CliIo = { cwd: again, interactive: true, out: () => {}, err: (text) => err.push(text) }
      expect(await run(words.slice(1), repeatIo)).toBe(0)
      expect(err).toEqual([])
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
