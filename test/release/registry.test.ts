import { type ChildProcess, execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { packageManagersOnPath } from '../_package-managers.ts'
import { answerText, send, startProject } from '../_served-project.ts'
import { type Registry, startRegistry } from './_registry.ts'

// The README's first command, for real: both packages published to a registry as a release publishes them, then
// each package manager's `create` run by a user whose machine knows only that registry. The project must get the
// runtime from the registry (not from this clone), install, pass its own tests and serve a request.

const root = fileURLToPath(new URL('../..', import.meta.url))
const exec = promisify(execFile)
/** One create, install or script: generous, since a loaded 2-core machine slows installs many times over. */
const STEP = 300_000

interface Published {
  name: string
  version: string
  /** `sha512-…`, as every lockfile records it. */
  integrity: string
}

let workspace: string
let registry: Registry
let tools: string
const published = new Map<string, Published>()
const running = new Set<ChildProcess>()

beforeAll(async () => {
  workspace = mkdtempSync(join(realpathSync(tmpdir()), 'create-a2a-agent-registry-'))
  tools = packageManagersOnPath(join(workspace, 'package-managers'))
  registry = await startRegistry(join(workspace, 'registry'), ['a2a-runtime', 'create-a2a-agent'])
  // As a release does: pack each package (the build `npm test` ran first is what ships), then publish it. The
  // runtime goes first, so the generator is never on the registry without the runtime its projects ask for.
  // Provenance needs a CI provider's identity; this publish is the same without it.
  const packed = join(workspace, 'packed')
  mkdirSync(packed)
  for (const dir of [join(root, 'runtime'), join(root, 'generator')]) {
    const { stdout } = await exec('npm', ['pack', '--json', '--pack-destination', packed], { cwd: dir, timeout: STEP })
    const [{ name, version, filename, integrity }] = JSON.parse(stdout) as [Published & { filename: string }]
    await exec(
      'npm',
      [
        'publish',
        join(packed, filename),
        '--userconfig',
        registry.publisherNpmrc,
        '--registry',
        registry.url,
        '--provenance=false',
      ],
      {
        cwd: packed,
        timeout: STEP,
      },
    )
    published.set(name, { name, version, integrity })
  }
}, 2 * STEP)

afterAll(async () => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL')
  await registry?.stop()
  await rm(workspace, { recursive: true, force: true, maxRetries: 3 })
}, 600_000)

/**
 * A user's machine that knows only the test registry: a home of its own (an `.npmrc` naming the registry, empty
 * caches, so nothing from an earlier run or from this machine's caches is reused), a git identity, and on PATH
 * only node, npm, pnpm, yarn and bun. Nothing of the test runner's environment (its `npm_config_*`) leaks in.
 */
function userMachine(name: string): { env: NodeJS.ProcessEnv; home: string; work: string } {
  const home = join(workspace, name, 'home')
  const work = join(workspace, name, 'work')
  mkdirSync(join(home, 'tmp'), { recursive: true })
  mkdirSync(work)
  writeFileSync(join(home, '.npmrc'), `registry=${registry.url}\n`)
  return {
    home,
    work,
    env: {
      PATH: `${tools}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
      HOME: home,
      TMPDIR: join(home, 'tmp'),
      LANG: 'C.UTF-8',
      GIT_AUTHOR_NAME: 'Release Test',
      GIT_AUTHOR_EMAIL: 'release@example.com',
      GIT_COMMITTER_NAME: 'Release Test',
      GIT_COMMITTER_EMAIL: 'release@example.com',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CEILING_DIRECTORIES: workspace,
      // A yarn user names the registry in yarn's own settings: `yarn create` exports its registry to the
      // generator, whose `yarn` install then uses it over the .npmrc. Run as root, yarn keeps its global
      // folder (where `yarn create` installs the generator) under /usr/local, not in the home: kept here too.
      YARN_REGISTRY: registry.url,
      YARN_GLOBAL_FOLDER: join(home, '.yarn-global'),
      YARN_PREFIX: join(home, '.yarn-prefix'),
      YARN_CACHE_FOLDER: join(home, '.yarn-cache'),
    },
  }
}

const CREATES = [
  {
    how: 'npm create a2a-agent@latest',
    machine: 'npm-create',
    pm: 'npm',
    command: ['npm', 'create', 'a2a-agent@latest', 'my-agent', '--', '--yes'],
  },
  { how: 'npx create-a2a-agent', machine: 'npx', pm: 'npm', command: ['npx', 'create-a2a-agent', 'my-agent', '--yes'] },
  {
    how: 'pnpm create a2a-agent',
    machine: 'pnpm',
    pm: 'pnpm',
    command: ['pnpm', 'create', 'a2a-agent', 'my-agent', '--yes'],
  },
  {
    how: 'yarn create a2a-agent',
    machine: 'yarn',
    pm: 'yarn',
    command: ['yarn', 'create', 'a2a-agent', 'my-agent', '--yes'],
  },
  {
    how: 'bun create a2a-agent',
    machine: 'bun',
    pm: 'bun',
    command: ['bun', 'create', 'a2a-agent', 'my-agent', '--yes'],
  },
] as const

/**
 * Every npm page `text` links to (`https://www.npmjs.com/package/<name>`) is one the release publishes, and what
 * it shows, the package's README as the registry holds it, is that package's documentation.
 */
async function expectNpmPagesPublished(text: string) {
  const names = [...text.matchAll(/https:\/\/www\.npmjs\.com\/package\/([a-z0-9-]+)/g)].map((match) => match[1]!)
  expect(names.length).toBeGreaterThan(0)
  for (const name of names) {
    expect(published.has(name), `${name} is published by the release`).toBe(true)
    const { readme } = (await (await fetch(`${registry.url}${name}`)).json()) as { readme?: string }
    expect(readme).toMatch(new RegExp(`^# ${name}\n`))
  }
}

/** The lockfile the package manager wrote in the project. */
function lockfileOf(project: string): string {
  const found = readdirSync(project).filter((file) =>
    ['package-lock.json', 'pnpm-lock.yaml', 'yarn.lock', 'bun.lock'].includes(file),
  )
  expect(found).toHaveLength(1)
  return readFileSync(join(project, found[0]!), 'utf8')
}

describe('npm create a2a-agent, against a registry the packages were published to', () => {
  it('publishes the runtime and the generator with one version', () => {
    expect(published.get('a2a-runtime')?.version).toBe(published.get('create-a2a-agent')?.version)
  })

  it(
    "the generator's --help, run from the registry, points to its npm page, and the runtime's page is its full documentation",
    async () => {
      const machine = userMachine('help')
      await expectNpmPagesPublished(
        (
          await exec('npx', ['create-a2a-agent@latest', '--help'], {
            cwd: machine.work,
            env: machine.env,
            timeout: STEP,
          })
        ).stdout,
      )
      const { readme } = (await (await fetch(`${registry.url}a2a-runtime`)).json()) as { readme: string }
      for (const section of [
        '## Writing an agent',
        '## The `a2a` command',
        '## The wire (platform dialect)',
        '## Authentication',
        '## Options',
        '### Where tasks are kept',
        '### Agent frameworks in one line',
        '## Security',
      ]) {
        expect(readme).toContain(`\n${section}\n`)
      }
    },
    2 * STEP,
  )

  it.each(CREATES)(
    '$how: a project with the published runtime, which installs, passes its own tests and serves a request',
    async ({ machine: name, pm, command: [command, ...args] }) => {
      const machine = userMachine(name)
      const created = await exec(command!, args, { cwd: machine.work, env: machine.env, timeout: STEP })
      const said = created.stdout + created.stderr
      expect(said).toContain(`Installing dependencies with ${pm}`)
      expect(said).toContain('Initialised a git repository with a first commit')
      // The generator is published as a package of its own, not as the repository's workspace root (yarn warns
      // about a published `workspaces` field while it installs the generator).
      expect(said).not.toMatch(/workspaces/i)
      const project = join(machine.work, 'my-agent')

      // The runtime came from the registry: the version the generator was published with, the tarball the
      // registry holds (its integrity in the lockfile), and no copy of this clone's runtime in the project.
      const runtime = published.get('a2a-runtime')!
      const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'))
      expect(manifest.dependencies['a2a-runtime']).toBe(`^${runtime.version}`)
      expect(lockfileOf(project)).toContain(runtime.integrity)
      expect(JSON.parse(readFileSync(join(project, 'node_modules/a2a-runtime/package.json'), 'utf8')).version).toBe(
        runtime.version,
      )
      expect(existsSync(join(project, 'vendor'))).toBe(false)
      // The framework adapters' frameworks are optional peers: the runtime installs none of them.
      for (const framework of ['ai', '@mastra/core', '@langchain/core', '@langchain/langgraph']) {
        expect(existsSync(join(project, 'node_modules', framework)), `${framework} installed with a2a-runtime`).toBe(
          false,
        )
      }

      // The pages its README and `a2a --help` send a user to exist once published.
      await expectNpmPagesPublished(readFileSync(join(project, 'README.md'), 'utf8'))
      const installed = join(project, 'node_modules/a2a-runtime')
      const a2a = join(installed, JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).bin.a2a)
      await expectNpmPagesPublished(
        (await exec(process.execPath, [a2a, '--help'], { env: machine.env, timeout: STEP })).stdout,
      )

      const run = (script: string) => exec(pm, ['run', script], { cwd: project, env: machine.env, timeout: STEP })
      await run('typecheck')
      await run('test')
      const server = await startProject(project, running, {}, [pm, 'run', 'start'], machine.env)
      expect(answerText((await send(server.url, 'ping')).body.result)).toBe('Echo: ping')
      expect(await server.stop()).toBe(true)
    },
    4 * STEP,
  )
})
