import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { parseEnv } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { dockerProblems, readmeBlocks, variablesRead, variablesSet } from './e2e-readme.ts'
import { assertBuilt, parseJsonc, type Workspace, workspace } from './template-support.ts'

/**
 * Generated READMEs and .env.example, read without an install, for every auth mode, the templates whose README
 * differs and each runtime besides Node. e2e.test.ts runs the README commands against installed projects.
 */

const variants = [
  { dir: 'plain', flags: [] },
  { dir: 'bearer', flags: ['--auth', 'bearer'] },
  { dir: 'apikey', flags: ['--auth', 'apikey'] },
  { dir: 'oidc', flags: ['--auth', 'oidc'] },
  {
    dir: 'oidc-asks-on-workers',
    flags: [
      ...['--runtime', 'workers', '--template', 'multi-turn'],
      ...['--oidc-issuer', 'https://login.example.com/', '--oidc-audience', 'api://agent'],
    ],
  },
  { dir: 'streaming', flags: ['--template', 'streaming', '--push-notifications'] },
  { dir: 'asks', flags: ['--template', 'multi-turn', '--auth', 'apikey', '--no-streaming'] },
  { dir: 'model', flags: ['--template', 'ai-sdk', '--auth', 'bearer'] },
  { dir: 'mastra', flags: ['--template', 'mastra', '--auth', 'apikey'] },
  { dir: 'langgraph', flags: ['--template', 'langgraph', '--push-notifications'] },
  { dir: 'on-bun', flags: ['--runtime', 'bun', '--push-notifications'] },
  { dir: 'on-deno', flags: ['--runtime', 'deno', '--template', 'multi-turn', '--auth', 'bearer'] },
  {
    dir: 'on-workers',
    flags: ['--runtime', 'workers', '--template', 'ai-sdk', '--auth', 'apikey', '--push-notifications'],
  },
] as const

let space: Workspace
const projects = new Map<string, string>()

beforeAll(async () => {
  assertBuilt()
  space = workspace('a2a-template-readme-')
  for (const { dir, flags } of variants) projects.set(dir, await space.generate(dir, [...flags]))
  projects.set(
    'forecast',
    await space.generate('forecast', ['--template', 'multi-turn', '--skill', 'forecast:Forecast:Weather for a city']),
  )
  projects.set(
    'symbols',
    await space.generate('symbols', [
      '--name',
      'Weather <Bot> & "Co"',
      '--description',
      'Tells the weather &copy; <b>Co</b>',
    ]),
  )
}, 300_000)

afterAll(() => space?.remove())

describe.each(variants)('$dir project', ({ dir }) => {
  const project = () => projects.get(dir)!
  const readme = () => space.read(project(), 'README.md')

  it('README: every command works as pasted: scripts that exist, variables set in the same block, docker flags on files that exist', () => {
    const scripts = Object.keys(
      (JSON.parse(space.read(project(), 'package.json')) as { scripts?: Record<string, string> }).scripts ?? {},
    )
    // A Deno project's commands are the tasks of its deno.json.
    const tasks = existsSync(join(project(), 'deno.json'))
      ? Object.keys(parseJsonc(space.read(project(), 'deno.json')).tasks)
      : []
    const blocks = readmeBlocks(readme())
    expect(blocks.length).toBeGreaterThan(3)
    for (const block of blocks) {
      const assigned = new Set<string>()
      for (const { line, kind } of block) {
        for (const script of [...line.matchAll(/\bnpm run ([\w:-]+)/g)].map((match) => match[1]!))
          expect(scripts, line).toContain(script)
        for (const task of [...line.matchAll(/\bdeno task ([\w:-]+)/g)].map((match) => match[1]!))
          expect(tasks, line).toContain(task)
        // A variable read must be set earlier in the block: a credential in .env is not in the shell.
        for (const name of variablesRead(line))
          expect(assigned.has(name), `${line}\nreads $${name}, which nothing in its block sets`).toBe(true)
        for (const name of variablesSet(line)) assigned.add(name)
        if (kind === 'docker')
          expect(
            dockerProblems(line, (path) => existsSync(join(project(), path))),
            line,
          ).toEqual([])
      }
    }
  })

  it('README: explains how to answer a question the agent asks (taskId), with npx a2a send', () => {
    const text = readme()
    expect(text).toContain('## When the agent asks a question')
    expect(text).toMatch(/"taskId"/)
    expect(text).toMatch(/npx a2a send --task-id <id> "<answer>"/)
    expect(
      readmeBlocks(text)
        .flat()
        .some(({ line }) => line.startsWith('npx a2a send ')),
    ).toBe(true)
  })

  it('README and .env.example: adding the example to .env keeps the generated credential and leaves HOST to the container', () => {
    expect(readme()).not.toMatch(/copy `?\.env\.example`? to `?\.env/i)
    const example = parseEnv(space.read(project(), '.env.example'))
    // Uncommented, HOST=127.0.0.1 would override the image's 0.0.0.0 through `docker run --env-file .env`.
    expect(example.HOST).toBeUndefined()
    expect(example.PORT).toBeUndefined()
    const envFile = join(project(), '.env')
    if (!existsSync(envFile)) return
    // The .env as the user has it: the credential generated, the model's key filled in.
    const env = space.read(project(), '.env').replace(/^OPENAI_API_KEY=$/m, 'OPENAI_API_KEY=sk-mine')
    const generated = parseEnv(env)
    const kept = Object.keys(generated).filter((name) =>
      /^(A2A_BEARER_TOKEN|A2A_API_KEY|A2A_OIDC_ISSUER|A2A_OIDC_AUDIENCE|OPENAI_API_KEY)$/.test(name),
    )
    // Only OpenID Connect without an issuer or audience leaves .env all comments (the placeholders to fill in).
    if (dir === 'oidc') expect(generated).toEqual({})
    else expect(kept.length).toBeGreaterThan(0)
    // Appending the example, one way a user may follow "add the lines you need", keeps every one.
    const appended = parseEnv(`${env}\n${space.read(project(), '.env.example')}`)
    for (const name of kept) {
      expect(generated[name]).toMatch(/\S{6,}/)
      expect(appended[name]).toBe(generated[name])
      expect(example[name]).toBeUndefined()
    }
  })
})

describe('a name and description with <, & and "', () => {
  const readme = () => space.read(projects.get('symbols')!, 'README.md')

  it('README: the heading shows the name as typed, only the < that would open an HTML tag backslash-escaped (no &lt; or &amp;)', () => {
    expect(readme().split('\n')[0]).toBe('# Weather \\<Bot> & "Co"')
  })

  it('README: the description shows as typed, HTML and entities escaped only by backslashes', () => {
    expect(readme().split('\n')[2]).toBe('Tells the weather \\&copy; \\<b>Co\\</b>')
  })
})

describe('multi-turn template', () => {
  it('asks a question that fits any skill, and says to reply to the task', () => {
    const agent = space.read(projects.get('forecast')!, 'src/agent.ts')
    const question = /task\.inputRequired\(`([^`]*)`\)/.exec(agent)?.[1]
    expect(question).toBeDefined()
    expect(question).not.toMatch(/where would you like to go/i)
    expect(question).toMatch(/reply to this task/i)
    expect(agent).not.toMatch(/a plan for/)
  })
})

// Each template that calls a model says which framework runs it, and only that one; the rest of what they share
// (.env's OPENAI_* settings, the stand-in server of the tests) is the same.
describe.each([
  {
    dir: 'model',
    adapter: 'fromAiSdk',
    framework: 'ai',
    others: ['fromMastra', 'fromLangGraph'],
    mock: "the AI SDK's mock model",
    node: '22',
  },
  {
    dir: 'mastra',
    adapter: 'fromMastra',
    framework: '@mastra/core',
    others: ['fromAiSdk', 'fromLangGraph'],
    mock: "the AI SDK's mock model",
    node: '22.22',
  },
  {
    dir: 'langgraph',
    adapter: 'fromLangGraph',
    framework: '@langchain/langgraph',
    others: ['fromAiSdk', 'fromMastra'],
    mock: 'a scripted LangChain chat model',
    node: '22',
  },
])('$dir: a template that calls a model', ({ dir, adapter, framework, others, mock, node }) => {
  const read = (path: string) => space.read(projects.get(dir)!, path)

  it('README: "## The model" names its framework and adapter, none of the others, and the mock model its tests run on', () => {
    const model = read('README.md').split('## The model')[1]!.split('\n## ')[0]!
    expect(model).toContain(adapter)
    for (const other of others) expect(model).not.toContain(other)
    expect(model).toContain(mock)
    expect(read('AGENTS.md')).toContain(mock)
    expect(read('src/agent.ts')).toContain(adapter)
  })

  it('package.json: its framework pinned to a major, .env.example the OPENAI_* settings, the stand-in server in its tests', () => {
    const { dependencies } = JSON.parse(read('package.json')) as { dependencies: Record<string, string> }
    expect(dependencies[framework]).toMatch(/^\^\d+\.\d+\.\d+$/)
    // Set in .env, where the key goes; documented with their defaults in .env.example.
    expect(Object.keys(parseEnv(read('.env')))).toEqual(
      expect.arrayContaining(['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'OPENAI_MODEL']),
    )
    for (const name of ['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'OPENAI_MODEL'])
      expect(read('.env.example')).toMatch(new RegExp(`^# ${name}=`, 'm'))
    expect(read('test/llm-stand-in.ts')).toContain('export async function startStandInLlm')
    expect(read('test/agent.test.ts')).toContain('startStandInLlm()')
  })

  it('package.json: engines asks for the Node.js its dependencies declare (the AI SDK and LangChain 22, Mastra 22.22), and the README says it', () => {
    const manifest = JSON.parse(read('package.json')) as {
      engines: { node: string }
      devDependencies: Record<string, string>
    }
    expect(manifest.engines.node).toBe(`>=${node}${'.0'.repeat(3 - node.split('.').length)}`)
    expect(manifest.devDependencies['@types/node']).toBe('^22.12.0')
    expect(read('README.md').split('## The model')[1]).toContain(
      `It needs Node.js ≥ ${node}, the oldest its dependencies declare`,
    )
  })

  it("the key goes in .env, and the README's docker run passes that .env (--env-file), not variables of the shell", () => {
    expect(parseEnv(read('.env'))).toMatchObject({ OPENAI_API_KEY: '', OPENAI_MODEL: 'gpt-4o-mini' })
    const docker = readmeBlocks(read('README.md'))
      .flat()
      .find(({ kind }) => kind === 'docker')!.line
    expect(docker).toContain(' --env-file .env ')
    expect(docker).not.toContain('-e OPENAI_API_KEY')
    expect(read('README.md')).toContain("the model's settings (your key); `.env` itself stays out of the image")
  })
})

/** The one `compose.yaml` of a README's store section, parsed. */
function composeOf(readme: string): ComposeFile {
  const section = readme.split('## Where tasks are kept')[1]!.split('\n## ')[0]!
  const blocks = [...section.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((match) => match[1]!)
  expect(blocks).toHaveLength(1)
  return parseYaml(blocks[0]!) as ComposeFile
}

interface ComposeService {
  image?: string
  build?: string
  env_file?: string
  environment?: Record<string, string>
  volumes?: string[]
  ports?: string[]
  depends_on?: Record<string, { condition: string }>
}
interface ComposeFile {
  services: Record<string, ComposeService>
  volumes: Record<string, unknown>
}

// The store section of the README a Node, Bun or Deno project gets: A2A_STORE's forms, PostgreSQL's schema and
// migrations, and a compose.yaml whose PostgreSQL keeps its data in a volume and whose URL matches its credentials.
describe.each([
  { dir: 'plain', agent: true },
  { dir: 'bearer', agent: true },
  { dir: 'on-bun', agent: false },
  { dir: 'on-deno', agent: false },
])('$dir project: where tasks are kept', ({ dir, agent }) => {
  const project = () => projects.get(dir)!
  const readme = () => space.read(project(), 'README.md')

  it('README: names every A2A_STORE form, pg as the package to add, store migrate and A2A_PUSH_CONFIG_KEY', () => {
    const section = readme().split('## Where tasks are kept')[1]!.split('\n## ')[0]!
    for (const form of [
      '`memory`',
      '`file:./.a2a`',
      '`redis://host:6379/0`',
      '`postgres://user:password@host:5432/database`',
    ])
      expect(section).toContain(form)
    expect(section).toMatch(/`(npm|pnpm|yarn|bun) add pg`/)
    expect(section).toContain('`npx a2a store migrate`')
    expect(section).toContain('`A2A_PUSH_CONFIG_KEY`')
  })

  it('README: a compose.yaml with postgres:17, its data in a named volume, and the A2A_STORE that reaches it', () => {
    const compose = composeOf(readme())
    const postgres = compose.services.postgres!
    expect(postgres.image).toBe('postgres:17')
    const [volume, path] = postgres.volumes![0]!.split(':')
    expect(path).toBe('/var/lib/postgresql/data')
    expect(Object.keys(compose.volumes)).toEqual([volume])
    const { POSTGRES_USER: user, POSTGRES_PASSWORD: password, POSTGRES_DB: db } = postgres.environment!
    if (agent) {
      // The agent built from the project's Dockerfile, on the compose network, once PostgreSQL answers.
      const service = compose.services.agent!
      expect(service.build).toBe('.')
      expect(existsSync(join(project(), 'Dockerfile'))).toBe(true)
      expect(service.environment!.A2A_STORE).toBe(`postgres://${user}:${password}@postgres:5432/${db}`)
      expect(service.depends_on).toEqual({ postgres: { condition: 'service_healthy' } })
      if (service.env_file !== undefined) expect(existsSync(join(project(), service.env_file))).toBe(true)
    } else {
      // No Dockerfile: PostgreSQL alone, on this machine's loopback, and the .env line that reaches it.
      expect(Object.keys(compose.services)).toEqual(['postgres'])
      expect(postgres.ports).toEqual(['127.0.0.1:5432:5432'])
      expect(readme()).toContain(`\`A2A_STORE=postgres://${user}:${password}@127.0.0.1:5432/${db}\``)
    }
  })
})

describe('on-workers project', () => {
  it('README: no store section (tasks live in the Durable Object)', () => {
    expect(space.read(projects.get('on-workers')!, 'README.md')).not.toContain('## Where tasks are kept')
  })
})
