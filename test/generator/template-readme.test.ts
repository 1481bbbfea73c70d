import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { parseEnv } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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
  { dir: 'streaming', flags: ['--template', 'streaming', '--push-notifications'] },
  { dir: 'asks', flags: ['--template', 'multi-turn', '--auth', 'apikey', '--no-streaming'] },
  { dir: 'model', flags: ['--template', 'ai-sdk', '--auth', 'bearer'] },
  { dir: 'mastra', flags: ['--template', 'mastra', '--auth', 'apikey'] },
  { dir: 'langgraph', flags: ['--template', 'langgraph', '--push-notifications'] },
  { dir: 'on-bun', flags: ['--runtime', 'bun', '--push-notifications'] },
  { dir: 'on-deno', flags: ['--runtime', 'deno', '--template', 'multi-turn', '--auth', 'bearer'] },
  { dir: 'on-workers', flags: ['--runtime', 'workers', '--template', 'ai-sdk', '--auth', 'apikey', '--push-notifications'] },
] as const

let space: Workspace
const projects = new Map<string, string>()

beforeAll(async () => {
  assertBuilt()
  space = workspace('a2a-template-readme-')
  for (const { dir, flags } of variants) projects.set(dir, await space.generate(dir, [...flags]))
  projects.set('forecast', await space.generate('forecast', ['--template', 'multi-turn', '--skill', 'forecast:Forecast:Weather for a city']))
  projects.set('symbols', await space.generate('symbols', ['--name', 'Weather <Bot> & "Co"', '--description', 'Tells the weather &copy; <b>Co</b>']))
}, 300_000)

afterAll(() => space?.remove())

describe.each(variants)('$dir project', ({ dir }) => {
  const project = () => projects.get(dir)!
  const readme = () => space.read(project(), 'README.md')

  it('README: every command works as pasted: scripts that exist, variables set in the same block, docker flags on files that exist', () => {
    const scripts = Object.keys((JSON.parse(space.read(project(), 'package.json')) as { scripts?: Record<string, string> }).scripts ?? {})
    // A Deno project's commands are the tasks of its deno.json.
    const tasks = existsSync(join(project(), 'deno.json')) ? Object.keys(parseJsonc(space.read(project(), 'deno.json')).tasks) : []
    const blocks = readmeBlocks(readme())
    expect(blocks.length).toBeGreaterThan(3)
    for (const block of blocks) {
      const assigned = new Set<string>()
      for (const { line, kind } of block) {
        for (const script of [...line.matchAll(/\bnpm run ([\w:-]+)/g)].map((match) => match[1]!)) expect(scripts, line).toContain(script)
        for (const task of [...line.matchAll(/\bdeno task ([\w:-]+)/g)].map((match) => match[1]!)) expect(tasks, line).toContain(task)
        // A variable read must be set earlier in the block: a credential in .env is not in the shell.
        for (const name of variablesRead(line)) expect(assigned.has(name), `${line}\nreads $${name}, which nothing in its block sets`).toBe(true)
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
    expect(text).toMatch(/npx a2a send "<answer>" --task <id>/)
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
    const generated = parseEnv(space.read(project(), '.env'))
    const credential = Object.keys(generated).find((name) => /^A2A_(BEARER_TOKEN|API_KEY)$/.test(name))!
    expect(generated[credential]).toMatch(/\S{16,}/)
    // Both ways a user may follow "add the lines you need": append the example, or copy it over .env.
    expect(parseEnv(`${space.read(project(), '.env')}\n${space.read(project(), '.env.example')}`)[credential]).toBe(generated[credential])
    expect(example[credential]).toBeUndefined()
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
  { dir: 'model', adapter: 'fromAiSdk', framework: 'ai', others: ['fromMastra', 'fromLangGraph'], mock: "the AI SDK's mock model" },
  { dir: 'mastra', adapter: 'fromMastra', framework: '@mastra/core', others: ['fromAiSdk', 'fromLangGraph'], mock: "the AI SDK's mock model" },
  {
    dir: 'langgraph',
    adapter: 'fromLangGraph',
    framework: '@langchain/langgraph',
    others: ['fromAiSdk', 'fromMastra'],
    mock: 'a scripted LangChain chat model',
  },
])('$dir: a template that calls a model', ({ dir, adapter, framework, others, mock }) => {
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
    expect(Object.keys(parseEnv(read('.env.example')))).toEqual(expect.arrayContaining(['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'OPENAI_MODEL']))
    expect(read('test/llm-stand-in.ts')).toContain('export async function startStandInLlm')
    expect(read('test/agent.test.ts')).toContain('startStandInLlm()')
  })
})
