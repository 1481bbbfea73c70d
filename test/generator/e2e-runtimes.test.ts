import { type ChildProcess, execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type OidcIssuer, startOidcIssuer, TEST_AUDIENCE } from '../_oidc-issuer.ts'
import { answerText, send, startProject } from '../_served-project.ts'

/**
 * A project generated for each runtime besides Node, from this clone (the runtime packed into its vendor/), installed
 * by the generator with npm, then run as its README says on that runtime: its own type-check and tests, then its
 * server with PORT and HOST, answering one message/send with a JWT of the OpenID Connect issuer its .env names.
 * OpenID Connect covers most per runtime: .env read as the runtime reads it (as for a bearer token), and the
 * project's tests and server fetching an issuer's keys and verifying JWTs there (in workerd too). Bearer tokens
 * and API keys are installed and served on Node (e2e.test.ts) and type-checked on Workers (combinations.test.ts).
 */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const bin = join(repoRoot, 'generator/bin/create-a2a-agent.mjs')
const exec = promisify(execFile)
/** npm installs, and workerd's download with wrangler's: minutes on a loaded 2-core machine. */
const INSTALL_TIMEOUT = 300_000

/** The runtimes' binaries this repository installs (the root's devDependencies and test-runtimes/). */
const BINARIES = {
  bun: join(repoRoot, 'node_modules/.bin/bun'),
  deno: join(repoRoot, 'test-runtimes/node_modules/.bin/deno'),
  // Wrangler needs Node 22.12 or later, whatever Node runs the tests.
  node24: join(repoRoot, 'test-runtimes/node_modules/node24/bin/node'),
}

/**
 * The environment a runtime's commands run in: its binary's folder first on PATH, no colours, update checks nor
 * metrics.
 */
function runtimeEnv(binary: string): NodeJS.ProcessEnv {
  const { FORCE_COLOR: _colour, ...inherited } = process.env
  return {
    ...inherited,
    NO_COLOR: '1',
    PATH: `${dirname(binary)}${delimiter}${process.env.PATH ?? ''}`,
    DENO_NO_UPDATE_CHECK: '1',
    WRANGLER_SEND_METRICS: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  }
}

let workspace: string
let issuer: OidcIssuer
const running = new Set<ChildProcess>()

beforeAll(async () => {
  for (const [name, path] of Object.entries(BINARIES)) {
    // Never a silent skip: without the runtime the suite fails, saying how to get it.
    if (!existsSync(path))
      throw new Error(`${name} is not installed (${path} is missing): run \`npm install\` at the repository root`)
  }
  if (!existsSync(join(repoRoot, 'generator/dist/index.js')) || !existsSync(join(repoRoot, 'runtime/dist/index.js'))) {
    throw new Error('The generator and the runtime are not built: run `npm run build` first (the bin imports dist/).')
  }
  workspace = mkdtempSync(join(realpathSync(tmpdir()), 'create-a2a-agent-runtimes-'))
  issuer = await startOidcIssuer()
})

afterAll(async () => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL')
  await issuer?.stop()
  if (workspace) await rm(workspace, { recursive: true, force: true, maxRetries: 3 })
}, 600_000)

/** Generates and installs (npm) a project on `runtime` trusting the test's issuer (in its .env); its path. */
async function generate(runtime: string, env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await exec(
    process.execPath,
    [
      bin,
      `agent-on-${runtime}`,
      '--runtime',
      runtime,
      '--auth',
      'oidc',
      '--oidc-issuer',
      issuer.url,
      '--oidc-audience',
      TEST_AUDIENCE,
      '--pm',
      'npm',
      '--no-git',
      '--yes',
      '--json',
    ],
    {
      cwd: workspace,
      env,
      timeout: INSTALL_TIMEOUT,
    },
  )
  const summary = JSON.parse(stdout.trim().split('\n').at(-1)!)
  expect(summary).toMatchObject({ runtime, installed: true })
  return summary.dir as string
}

/** A test file that prints which runtime runs the tests, added beside the project's own once it has type-checked. */
const RUNTIME_PROBE = `import { expect, it } from 'vitest'

it('names the runtime it runs on', () => {
  const on = globalThis as { Bun?: unknown; Deno?: unknown }
  console.log(\`tests run on \${on.Bun ? 'bun' : on.Deno ? 'deno' : 'node'}\`)
  expect(true).toBe(true)
})
`

const run = async (project: string, env: NodeJS.ProcessEnv, [command, ...args]: string[]) => {
  const { stdout, stderr } = await exec(command!, args, { cwd: project, env, timeout: INSTALL_TIMEOUT }).catch(
    (error) => {
      throw new Error(`${[command, ...args].join(' ')} failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`)
    },
  )
  return `${stdout}${stderr}`
}

/**
 * Serves the project with its start command and checks it answers message/send with a token of the issuer its .env
 * names, and not without one or with an expired one.
 */
async function expectServed(project: string, env: NodeJS.ProcessEnv, start: string[]) {
  expect(readFileSync(join(project, '.env'), 'utf8')).toContain(`\nA2A_OIDC_ISSUER=${issuer.url}\n`)
  const server = await startProject(project, running, {}, start, env)
  try {
    expect((await send(server.url, 'ping')).status).toBe(401)
    const hourAgo = Math.floor(Date.now() / 1000) - 3600
    const expired = await issuer.mint({ iat: hourAgo - 60, exp: hourAgo })
    expect((await send(server.url, 'ping', { authorization: `Bearer ${expired}` })).status).toBe(401)
    const reply = await send(server.url, 'ping', { authorization: `Bearer ${await issuer.mint()}` })
    expect(reply.body.result.status.state).toBe('completed')
    expect(answerText(reply.body.result)).toBe('Echo: ping')
  } finally {
    expect(await server.stop()).toBe(true)
  }
}

describe('a project generated for another runtime', { timeout: 900_000 }, () => {
  it('bun: installs with npm, type-checks, runs its tests on Bun, validates its card, and npm start serves it on Bun with PORT, HOST and the OpenID Connect issuer of .env', async () => {
    const env = runtimeEnv(BINARIES.bun)
    const project = await generate('bun', env)
    await run(project, env, ['npm', 'run', 'typecheck'])
    writeFileSync(join(project, 'test/runtime-probe.test.ts'), RUNTIME_PROBE)
    const tested = await run(project, env, ['npm', 'test'])
    expect(tested).toContain('tests run on bun')
    expect(tested).toMatch(/Test Files\s+\S*2 passed/)
    expect(await run(project, env, ['npm', 'run', 'card'])).toMatch(/\(as served\): valid/)
    await expectServed(project, env, ['npm', 'start'])
  })

  it('deno: installs with npm, deno task check passes, deno task test runs its tests on Deno, deno task card validates, and deno task start serves it with PORT, HOST and the OpenID Connect issuer of .env', async () => {
    const env = runtimeEnv(BINARIES.deno)
    const project = await generate('deno', env)
    await run(project, env, ['deno', 'task', 'check'])
    writeFileSync(join(project, 'test/runtime-probe.test.ts'), RUNTIME_PROBE)
    const tested = await run(project, env, ['deno', 'task', 'test'])
    expect(tested).toContain('tests run on deno')
    expect(tested).toMatch(/Test Files\s+\S*2 passed/)
    expect(await run(project, env, ['deno', 'task', 'card'])).toMatch(/\(as served\): valid/)
    await expectServed(project, env, ['deno', 'task', 'start'])
  })

  it('workers: installs with npm on Node 24, type-checks, its tests run the Worker in workerd, deploy bundles it, and npm start (wrangler dev) serves it with PORT, HOST and the OpenID Connect issuer of .env', async () => {
    const env = runtimeEnv(BINARIES.node24)
    const project = await generate('workers', env)
    await run(project, env, ['npm', 'run', 'typecheck'])
    const tested = await run(project, env, ['npm', 'test'])
    expect(tested).toMatch(/✓ test\/worker\.test\.ts/)
    expect(tested).toMatch(/Test Files\s+\S*2 passed/)
    // What `npm run deploy` would upload, bundled without reaching Cloudflare: the Worker with its Durable Object.
    const bundled = await run(project, env, [
      'npm',
      'run',
      'deploy',
      '--',
      '--dry-run',
      '--outdir',
      join(workspace, 'worker-bundle'),
    ])
    expect(bundled).toMatch(/env\.AGENT \(AgentObject\)\s+Durable Object/)
    await expectServed(project, env, ['npm', 'start'])
  })
})
