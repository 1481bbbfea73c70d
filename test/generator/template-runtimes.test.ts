import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readmeBlocks } from './e2e-readme.ts'
import { assertBuilt, parseJsonc, type Workspace, workspace } from './template-support.ts'

/**
 * What `--runtime` writes, read without an install: each runtime's entry, configuration and scripts, the same agent
 * on every runtime, and a README that says how to run and deploy there. e2e-runtimes.test.ts installs and runs them.
 */

let space: Workspace
const projects = new Map<string, string>()
const RUNTIMES = ['node', 'bun', 'deno', 'workers'] as const

beforeAll(async () => {
  assertBuilt()
  space = workspace('a2a-template-runtimes-')
  for (const runtime of RUNTIMES)
    projects.set(runtime, await space.generate(`on-${runtime}`, ['--runtime', runtime, '--auth', 'bearer']))
  projects.set(
    'workers-llm',
    await space.generate('model-worker', ['--runtime', 'workers', '--template', 'ai-sdk', '--auth', 'apikey']),
  )
  for (const template of ['mastra', 'langgraph'])
    projects.set(
      `workers-${template}`,
      await space.generate(`${template}-worker`, ['--runtime', 'workers', '--template', template]),
    )
}, 300_000)

afterAll(() => space?.remove())

const read = (runtime: string, path: string) => space.read(projects.get(runtime)!, path)
const has = (runtime: string, path: string) => existsSync(join(projects.get(runtime)!, path))
const manifest = (runtime: string) => JSON.parse(read(runtime, 'package.json'))

describe('every runtime', () => {
  it('has the same agent (src/agent.ts) and in-process tests, only the name on the card differing', () => {
    const unnamed = (runtime: string, path: string) => read(runtime, path).replaceAll(/On (Node|Bun|Deno|Workers)/g, '')
    for (const runtime of RUNTIMES) {
      expect(unnamed(runtime, 'src/agent.ts'), runtime).toBe(unnamed('node', 'src/agent.ts'))
      expect(unnamed(runtime, 'test/agent.test.ts'), runtime).toBe(unnamed('node', 'test/agent.test.ts'))
    }
  })

  it.each(RUNTIMES)(
    '%s: a README with a Deploy section, and commands that name only scripts or tasks the project has',
    (runtime) => {
      const readme = read(runtime, 'README.md')
      expect(readme).toContain('## Deploy')
      const scripts = Object.keys(manifest(runtime).scripts ?? {})
      const tasks = runtime === 'deno' ? Object.keys(parseJsonc(read(runtime, 'deno.json')).tasks) : []
      for (const [, script] of readme.matchAll(/`npm run ([\w:-]+)/g)) expect(scripts, script).toContain(script)
      for (const [, task] of readme.matchAll(/`deno task ([\w:-]+)/g)) expect(tasks, task).toContain(task)
      for (const { line } of readmeBlocks(readme).flat()) {
        for (const [, script] of line.matchAll(/\bnpm run ([\w:-]+)/g)) expect(scripts, line).toContain(script)
        for (const [, task] of line.matchAll(/\bdeno task ([\w:-]+)/g)) expect(tasks, line).toContain(task)
      }
    },
  )

  it('only the node project has a Dockerfile (it runs `a2a start` on Node); the others say how to deploy instead', () => {
    expect(has('node', 'Dockerfile')).toBe(true)
    expect(has('node', '.dockerignore')).toBe(true)
    for (const runtime of ['bun', 'deno', 'workers']) {
      expect(has(runtime, 'Dockerfile'), runtime).toBe(false)
      expect(has(runtime, '.dockerignore'), runtime).toBe(false)
      expect(read(runtime, 'README.md'), runtime).toMatch(/there is no Dockerfile/i)
    }
  })
})

describe('node', () => {
  it('keeps the scripts of a2a dev and a2a start, and no entry file of its own', () => {
    expect(manifest('node').scripts).toEqual({
      dev: 'a2a dev',
      start: 'a2a start',
      test: 'vitest run',
      typecheck: 'tsc --noEmit',
      card: 'a2a card validate',
    })
    expect(has('node', 'src/server.ts')).toBe(false)
  })
})

describe('bun', () => {
  it('serves src/server.ts with Bun (watching in dev) and runs vitest on Bun, since bun test lacks expect.poll', () => {
    expect(manifest('bun').scripts).toMatchObject({
      dev: 'bun --watch src/server.ts',
      start: 'bun src/server.ts',
      test: 'bun --bun vitest run',
      typecheck: 'tsc --noEmit',
      card: 'a2a card validate',
    })
    expect(read('bun', 'src/server.ts')).toMatch(/import agent from '\.\/agent\.ts'\n\nawait serveAgent\(agent\)\n$/)
    expect(read('bun', 'README.md')).toContain('oven/bun')
  })
})

describe('deno', () => {
  it('has a deno.json with start, dev (--watch), test and check tasks, the server allowed net, env and read only, .env read first', () => {
    const deno = parseJsonc(read('deno', 'deno.json'))
    expect(Object.keys(deno.tasks)).toEqual(expect.arrayContaining(['start', 'dev', 'test', 'check']))
    // No --env-file, which warns on every start without a .env: the server reads one itself, before its other modules.
    expect(deno.tasks.start).toBe('deno run --allow-net --allow-env --allow-read src/server.ts')
    expect(deno.tasks.dev).toBe('deno run --watch --allow-net --allow-env --allow-read src/server.ts')
    expect(read('deno', 'src/server.ts')).toMatch(/^import '\.\/load-env\.ts'\nimport .* from 'a2a-runtime'$/m)
    expect(deno.tasks.test).toMatch(/npm:vitest run$/)
    expect(deno.tasks.check).toBe('deno check src test')
  })

  it('keeps its dependencies in package.json, read from node_modules ("manual"), with nothing from jsr: or deno.land', () => {
    const deno = parseJsonc(read('deno', 'deno.json'))
    expect(deno.nodeModulesDir).toBe('manual')
    expect(read('deno', 'deno.json')).toMatch(/\/\/ The dependencies stay in package\.json/)
    expect(manifest('deno').dependencies['a2a-runtime']).toMatch(/^file:\.\/vendor\//)
    expect(manifest('deno').scripts).toBeUndefined()
    for (const path of ['deno.json', 'src/server.ts', 'test/agent.test.ts'])
      expect(read('deno', path)).not.toMatch(/jsr:|deno\.land/)
    // Deno reads its compiler options from deno.json: no tsconfig.json to disagree.
    expect(has('deno', 'tsconfig.json')).toBe(false)
  })

  it('says to install with npm and run with deno task, and how to deploy on Deno', () => {
    const readme = read('deno', 'README.md')
    expect(readme).toContain('deno task dev')
    expect(readme).toContain('npm install')
    expect(readme).toContain('Deno Deploy')
  })
})

describe('workers', () => {
  it('configures the Worker: nodejs_compat, the AGENT Durable Object of class AgentObject and its SQLite migration', () => {
    const wrangler = parseJsonc(read('workers', 'wrangler.jsonc'))
    expect(wrangler).toMatchObject({
      name: 'on-workers',
      main: 'src/worker.ts',
      compatibility_flags: ['nodejs_compat'],
      durable_objects: { bindings: [{ name: 'AGENT', class_name: 'AgentObject' }] },
      migrations: [{ tag: 'v1', new_sqlite_classes: ['AgentObject'] }],
    })
    expect(wrangler.compatibility_date).toMatch(/^\d{4}-\d{2}-\d{2}$/)
  })

  it('exports the Worker and its Durable Object class from src/worker.ts', () => {
    const worker = read('workers', 'src/worker.ts')
    expect(worker).toContain("import { agentWorker } from 'a2a-runtime/workers'")
    expect(worker).toContain("import agent from './agent.ts'")
    expect(worker).toContain('const { worker, AgentObject } = agentWorker(agent)')
    expect(worker).toMatch(/export \{ AgentObject \}\nexport default worker\n$/)
  })

  it('runs wrangler dev through a script on PORT and HOST, deploys with wrangler deploy, and asks Node 22.12 for wrangler', () => {
    const { scripts, engines, devDependencies, pnpm } = manifest('workers')
    expect(scripts).toMatchObject({
      dev: 'node scripts/wrangler-dev.mjs',
      start: 'node scripts/wrangler-dev.mjs',
      deploy: 'wrangler deploy',
      test: 'vitest run',
    })
    expect(engines.node).toBe('>=22.12.0')
    expect(devDependencies.wrangler).toMatch(/^\^4\./)
    // workerd (and esbuild) have install scripts; pnpm runs only those it is told to.
    expect(pnpm.onlyBuiltDependencies).toEqual(['esbuild', 'workerd'])
    const script = read('workers', 'scripts/wrangler-dev.mjs')
    expect(script).toContain("process.env.PORT || '3000'")
    expect(script).toContain("process.env.HOST || '127.0.0.1'")
    expect(read('workers', '.gitignore')).toMatch(/^\.wrangler\/$/m)
  })

  it('its README says what installing runs and needs (workerd, Node 22.12) and how to deploy, with the credential as a secret', () => {
    const readme = read('workers', 'README.md')
    expect(readme).toContain('Node.js ≥ 22.12')
    expect(readme).toMatch(/install script, workerd's/)
    expect(readme).toContain('`npm run deploy` publishes the Worker')
    expect(readme).toContain('npx wrangler secret put A2A_BEARER_TOKEN')
    expect(read('workers-llm', 'README.md')).toContain('npx wrangler secret put A2A_API_KEY')
    expect(read('workers-llm', 'README.md')).toContain('npx wrangler secret put OPENAI_API_KEY')
  })

  it('tests the Worker in workerd with its Durable Object: send on one request, tasks/get on the next, the credential as a test secret', () => {
    const test = read('workers', 'test/worker.test.ts')
    expect(test).toContain("from 'wrangler'")
    expect(test).toContain("rpc('message/send'")
    expect(test).toContain("rpc('tasks/get'")
    expect(test).toContain('secrets.A2A_BEARER_TOKEN = CREDENTIAL')
    for (const project of ['workers-llm', 'workers-mastra', 'workers-langgraph'])
      expect(read(project, 'test/worker.test.ts')).toContain('secrets.OPENAI_BASE_URL = llm.url')
  })
})
