// What `a2a start` loads: a cold start pays for every module it reads and compiles (scale-from-zero platforms pay
// it on a request), so what the served agent does not use stays unloaded: the stores it is not configured with,
// jose (OpenID Connect and card signing), OpenTelemetry's instrumentation, gRPC and the other commands. The process
// runs with test/fixtures/module-log.mjs preloaded, which writes down every module it loads.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { type A2aOnProject, a2aBin, a2aOnProject } from '../_support.ts'

const moduleLog = fileURLToPath(new URL('../fixtures/module-log.mjs', import.meta.url))
// Node 24 of test-runtimes/ (the root's postinstall): the compile cache needs Node 22.1 or later.
const node24 = fileURLToPath(new URL('../../test-runtimes/node_modules/node24/bin/node', import.meta.url))

const AGENT = `import { defineAgent } from 'a2a-runtime'

export default defineAgent({
  card: { name: 'Modules Fixture', description: 'Echoes' },
  execute(ctx, task) {
    task.artifact(ctx.text)
    task.complete()
  },
})
`

let started: A2aOnProject | undefined
let logDir: string | undefined

afterEach(async () => {
  await started?.dispose()
  started = undefined
  if (logDir) rmSync(logDir, { recursive: true, force: true })
  logDir = undefined
})

/** The modules `a2a start` loaded by the time its card answered, with `env` set; paths inside the runtime. */
async function modulesOfStart(env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  logDir = mkdtempSync(join(tmpdir(), 'a2a-start-modules-'))
  const log = join(logDir, 'modules.txt')
  started = a2aOnProject('a2a-start-modules-', AGENT, ['start'], {
    PORT: '0',
    NODE_OPTIONS: `--import ${moduleLog}`,
    MODULE_LOG: log,
    ...env,
  })
  const { output } = started
  await expect.poll(() => /listening on (http:\/\/\S+\/)/.exec(output.all)?.[1], { timeout: 30_000 }).toBeTruthy()
  const url = /listening on (http:\/\/\S+\/)/.exec(output.all)![1]!
  const card = await fetch(new URL('.well-known/agent-card.json', url))
  expect(card.status).toBe(200)
  await started.dispose()
  started = undefined
  return readFileSync(log, 'utf8').split('\n').filter(Boolean)
}

/** The runtime's own files among `modules`: the bundled entries and chunks under its dist/. */
const runtimeFiles = (modules: string[]) => modules.filter((module) => /\/runtime\/dist\/.+\.js$/.test(module))

/**
 * The runtime's own modules among `modules`, as paths under its dist/ (`stores/memory.js`): the build bundles them
 * into entries and chunks, in which each module's code starts with a comment naming it (`// dist/stores/memory.js`).
 */
const runtimeModules = (modules: string[]) =>
  runtimeFiles(modules).flatMap((file) =>
    [
      ...readFileSync(file.startsWith('file:') ? fileURLToPath(file) : file, 'utf8').matchAll(
        /^\/\/ dist\/(\S+\.js)$/gm,
      ),
    ].map((match) => match[1]!),
  )

const fromPackage = (modules: string[], name: string) =>
  modules.filter((module) => module.includes(`/node_modules/${name}/`))

describe('a2a start loads what it serves', () => {
  it('an agent on the memory store, without identity, telemetry or gRPC: none of their modules', async () => {
    const modules = await modulesOfStart()
    const ours = runtimeModules(modules)
    expect(ours).toContain('stores/memory.js') // the log sees the runtime's modules
    expect(fromPackage(modules, 'jose')).toEqual([])
    // The commands' output renderers, and what explains an agent module that fails to load.
    expect(ours.filter((path) => path.startsWith('cli/output/_output') || path === 'dev/_load-failure.js')).toEqual([])
  }, 60_000)

  // The file, Redis and PostgreSQL stores are some 200 KB that the memory store's start compiled for nothing.
  const otherStores = (ours: string[]) => ours.filter((path) => /^stores\/(?:file|redis|postgres)\//.test(path))

  it('an agent on the memory store: no module of the file, Redis or PostgreSQL store', async () => {
    const ours = runtimeModules(await modulesOfStart())
    expect(ours).toContain('stores/memory.js')
    expect(otherStores(ours)).toEqual([])
  }, 60_000)

  it('an agent on the store A2A_STORE names (file:): that store’s modules, no other store’s', async () => {
    const ours = runtimeModules(await modulesOfStart({ A2A_STORE: 'file:.a2a-tasks' }))
    expect(ours).toContain('stores/file/store.js')
    expect(otherStores(ours).filter((path) => !path.startsWith('stores/file/'))).toEqual([])
  }, 60_000)

  it("reads the runtime's modules from a few bundled files, not one file each", async () => {
    const modules = await modulesOfStart()
    // 171 of the runtime's modules in as many files before the build bundled them: 33 files then.
    expect(runtimeModules(modules).length).toBeGreaterThan(100)
    expect(runtimeFiles(modules).length).toBeLessThan(45)
  }, 60_000)
})

// V8's compile cache: on Node 22.1 and later the CLI turns it on before it loads its modules, so a later start reads
// their compiled code instead of compiling it again. Kept in the system's temporary folder (TMPDIR here); Node would
// turn it on itself for NODE_COMPILE_CACHE, so that is left out.
it('the a2a command keeps its compiled code in the compile cache (Node 24)', () => {
  logDir = mkdtempSync(join(tmpdir(), 'a2a-compile-cache-'))
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: logDir }
  delete env.NODE_COMPILE_CACHE
  delete env.NODE_DISABLE_COMPILE_CACHE
  const run = spawnSync(node24, [a2aBin, '--version'], { env, encoding: 'utf8' })
  expect(run.status, run.stderr).toBe(0)
  const cache = join(logDir, 'node-compile-cache')
  const cached = readdirSync(cache, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile())
  expect(cached.length).toBeGreaterThan(4) // the CLI's files (bundled), one cache file each
}, 60_000)
