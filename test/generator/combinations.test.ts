import { execFile } from 'node:child_process'
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RuntimeName, resolveOptions, TEMPLATES } from '../../generator/src/options.ts'
import { renderProject } from '../../generator/src/render.ts'
import { assertBuilt } from './template-support.ts'

// Every project the generator can make — each template with each authentication, with and without streaming,
// with and without push notifications (6 × 4 × 2 × 2 = 96, and the team's 12 without oidc) — type-checks as
// written: its agent, its tests and its helpers against the runtime's published types. The install-and-run suites
// cover a few of these; this one covers them all with one install (the projects share the packed runtime, the model
// templates' frameworks and this repository's typescript, @types/node and vitest). The runtime changes only the
// files around the agent: Bun's entry is the same whatever the options, a Worker's test differs by template and
// authentication (6 × 4 = 24 more, against the wrangler of test-runtimes/), and a Deno project is checked by
// `deno check` in e2e-runtimes.test.ts (it has no tsconfig.json).

const root = fileURLToPath(new URL('../..', import.meta.url))
const tsc = join(root, 'node_modules/typescript/bin/tsc')
const exec = promisify(execFile)
const AUTH_MODES = ['none', 'bearer', 'apikey', 'oidc'] as const

// The team template refuses --auth oidc and --runtime workers (its planner has no token to call the writer with; a
// Worker serves one agent).
const authModesOf = (template: string) => AUTH_MODES.filter((auth) => template !== 'team' || auth !== 'oidc')

const combinations = TEMPLATES.flatMap((template) =>
  authModesOf(template).flatMap((auth) =>
    [true, false].flatMap((streaming) =>
      [true, false].map((pushNotifications) => ({
        template,
        auth,
        streaming,
        pushNotifications,
        runtime: 'node' as RuntimeName,
      })),
    ),
  ),
)

const onOtherRuntimes: Array<(typeof combinations)[number]> = [
  { template: 'echo', auth: 'none', streaming: true, pushNotifications: false, runtime: 'bun' },
  ...TEMPLATES.filter((template) => template !== 'team').flatMap((template) =>
    AUTH_MODES.map((auth) => ({
      template,
      auth,
      streaming: true,
      pushNotifications: false,
      runtime: 'workers' as const,
    })),
  ),
]

let workspace: string

/** Renders the project for `combination` into the workspace (the generator's own rendering, no install); its path. */
function generate(combination: (typeof combinations)[number], suffix = ''): string {
  const { template, auth, streaming, pushNotifications, runtime } = combination
  const dir = `${template}-${auth}-${streaming ? 'streaming' : 'send'}-${pushNotifications ? 'push' : 'nopush'}-${runtime}${suffix && `-${suffix}`}`
  const options = resolveOptions({ dir, yes: true, install: false, git: false, pm: 'npm', ...combination }, workspace)
  for (const file of renderProject(join(root, 'generator/templates'), options, '*')) {
    const path = join(options.dir, file.path)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, file.content)
  }
  return options.dir
}

/** `tsc --noEmit` on the project's own tsconfig.json: its exit code and what it printed. */
async function typecheck(project: string): Promise<{ code: number; output: string }> {
  const result = await exec(process.execPath, [tsc, '--noEmit', '-p', project], {
    cwd: project,
    timeout: 120_000,
  }).then(
    (done) => ({ code: 0, stdout: done.stdout, stderr: done.stderr }),
    (failure) => ({ code: failure.code as number, stdout: failure.stdout as string, stderr: failure.stderr as string }),
  )
  return { code: result.code, output: `${result.stdout}${result.stderr}` }
}

/**
 * What the templates that call a model add to package.json (their frameworks), and what `--auth oidc` adds (jose,
 * for the tests' issuer), as the generator writes it.
 */
function frameworkDependencies(): Record<string, string> {
  const dependencies: Record<string, string> = {}
  for (const template of TEMPLATES.filter((template) => template !== 'team')) {
    const options = resolveOptions(
      { dir: `manifest-${template}`, yes: true, install: false, git: false, pm: 'npm', template, auth: 'oidc' },
      workspace,
    )
    const manifest = renderProject(join(root, 'generator/templates'), options, '*').find(
      (file) => file.path === 'package.json',
    )!
    const written = JSON.parse(String(manifest.content)) as {
      dependencies: Record<string, string>
      devDependencies: Record<string, string>
    }
    Object.assign(dependencies, written.dependencies, { jose: written.devDependencies.jose! })
  }
  delete dependencies['a2a-runtime']
  return dependencies
}

beforeAll(async () => {
  assertBuilt()
  workspace = mkdtempSync(join(realpathSync(tmpdir()), 'create-a2a-agent-combinations-'))
  // One node_modules above every project, as an install would lay it out for what the projects import: the
  // frameworks of the model templates installed from the registry beside the packed runtime (whose adapters import
  // them: one copy of each, as in a generated project), then this repository's tools.
  await exec('npm', ['pack', '--pack-destination', workspace], { cwd: join(root, 'runtime'), timeout: 120_000 })
  const tarball = readdirSync(workspace).find((name) => name.endsWith('.tgz'))!
  const manifest = {
    name: 'combinations',
    private: true,
    dependencies: { ...frameworkDependencies(), 'a2a-runtime': `file:./${tarball}` },
  }
  writeFileSync(join(workspace, 'package.json'), JSON.stringify(manifest))
  await exec(
    'npm',
    ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error'],
    { cwd: workspace, timeout: 300_000 },
  )
  const modules = join(workspace, 'node_modules')
  for (const name of ['@types/node', 'vitest', 'typescript', '@vitest', 'vite']) {
    rmSync(join(modules, name), { recursive: true, force: true })
    symlinkSync(realpathSync(join(root, 'node_modules', name)), join(modules, name), 'dir')
  }
  // A Worker's test imports wrangler's test harness.
  const wrangler = join(root, 'test-runtimes/node_modules/wrangler')
  if (!existsSync(wrangler))
    throw new Error(
      `${wrangler} is missing: run \`npm install\` at the repository root (its postinstall installs test-runtimes/)`,
    )
  symlinkSync(realpathSync(wrangler), join(modules, 'wrangler'), 'dir')
}, 360_000)

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true, maxRetries: 3 })
}, 120_000)

describe('every combination of template, authentication, streaming and push notifications', () => {
  it("counts 108 combinations (96, and the team's 12)", () => {
    expect(combinations).toHaveLength(108)
  })

  it.each(combinations)(
    '$template, auth $auth, streaming $streaming, push $pushNotifications: type-checks as generated',
    async (combination) => {
      const project = generate(combination)
      expect(await typecheck(project)).toEqual({ code: 0, output: '' })
    },
    180_000,
  )

  it.each(onOtherRuntimes)(
    '$template, auth $auth, on $runtime: its entry and tests type-check as generated',
    async (combination) => {
      const project = generate(combination)
      expect(await typecheck(project)).toEqual({ code: 0, output: '' })
    },
    180_000,
  )

  it('reports a type error in a generated project (the check itself)', async () => {
    const project = generate(
      { template: 'echo', auth: 'apikey', streaming: true, pushNotifications: false, runtime: 'node' },
      'broken',
    )
    appendFileSync(join(project, 'src/agent.ts'), "\nexport const notANumber: number = 'text'\n")
    const { code, output } = await typecheck(project)
    expect(code).not.toBe(0)
    expect(output).toMatch(/src\/agent\.ts.*error TS2322/)
  }, 180_000)
})
