// What `a2a start` loads: a cold start pays for every module it reads and compiles (scale-from-zero platforms pay
// it on a request), so what the served agent does not use stays unloaded: the stores it is not configured with,
// jose (OpenID Connect and card signing), OpenTelemetry's instrumentation, gRPC and the other commands. The process
// runs with test/fixtures/module-log.mjs preloaded, which writes down every module it loads.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { type A2aOnProject, a2aOnProject } from '../_support.ts'

const moduleLog = fileURLToPath(new URL('../fixtures/module-log.mjs', import.meta.url))

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

/** The runtime's own modules among `modules`, as paths under its dist/ (`stores/memory.js`). */
const runtimeModules = (modules: string[]) =>
  modules.flatMap((module) => /\/runtime\/dist\/(.+)$/.exec(module)?.[1] ?? [])

const fromPackage = (modules: string[], name: string) =>
  modules.filter((module) => module.includes(`/node_modules/${name}/`))

describe('a2a start loads what it serves', () => {
  it('an agent on the memory store, without identity, telemetry or gRPC: none of their modules', async () => {
    const modules = await modulesOfStart()
    const ours = runtimeModules(modules)
    expect(ours).toContain('stores/memory.js') // the log sees the runtime's modules
    expect(fromPackage(modules, 'jose')).toEqual([])
  }, 60_000)
})
