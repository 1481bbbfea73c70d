import { type ChildProcess, spawn } from 'node:child_process'
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeAgentProject } from '../_support.ts'

const runtimeDir = fileURLToPath(new URL('../../runtime', import.meta.url))
const a2aBin = join(runtimeDir, 'bin/a2a.mjs')

const AGENT_TS = `import { defineAgent } from 'a2a-runtime'

const greeting: string = process.env.GREETING ?? 'Hello'

export default defineAgent({
  card: { name: 'Start Fixture', description: 'Greets in TypeScript' },
  execute(ctx, task) {
    task.artifact(\`\${greeting}, \${ctx.text}\`)
    task.complete()
  },
})
`

let project: string
let child: ChildProcess | undefined

/** A project as a user has it: an agent in TypeScript and a2a-runtime in node_modules. */
beforeEach(() => {
  project = makeAgentProject('a2a-start-', AGENT_TS)
})

afterEach(() => {
  if (child?.exitCode === null) child.kill('SIGKILL')
  child = undefined
  rmSync(project, { recursive: true, force: true })
})

function start(args: string[] = [], env: Record<string, string> = {}) {
  child = spawn(process.execPath, [a2aBin, 'start', ...args], {
    cwd: project,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)))
  const url = new Promise<string>((resolve, reject) => {
    const look = () => {
      const match = /listening on (http:\/\/\S+\/)/.exec(output)
      if (match) resolve(match[1]!)
    }
    child!.stdout!.on('data', look)
    child!.stderr!.on('data', look)
    exited.then((code) => reject(new Error(`a2a start exited with ${code}: ${output}`)))
  })
  // Tests that expect an early exit never await the url.
  url.catch(() => {})
  return { url, exited, output: () => output }
}

describe('a2a start', () => {
  it('serves the TypeScript agent of src/agent.ts on PORT and HOST, with .env applied, and exits 0 on SIGTERM', async () => {
    writeFileSync(join(project, '.env'), 'GREETING=Bonjour\nA2A_PUBLIC_URL=https://agents.example.com/greeter/\n')
    const run = start()
    const url = await run.url
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
    const card = await (await fetch(`${url}.well-known/agent.json`)).json()
    expect(card.name).toBe('Start Fixture')
    expect(card.url).toBe('https://agents.example.com/greeter/')
    const reply = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { role: 'user', messageId: 'm', parts: [{ kind: 'text', text: 'Ada' }] } },
      }),
    })
    expect((await reply.json()).result.artifacts[0].parts[0].text).toBe('Bonjour, Ada')
    child!.kill('SIGTERM')
    expect(await run.exited).toBe(0)
  })

  it('lets the environment override .env', async () => {
    writeFileSync(join(project, '.env'), 'GREETING=Bonjour\n')
    const url = await start([], { GREETING: 'Hola' }).url
    const reply = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { role: 'user', messageId: 'm', parts: [{ kind: 'text', text: 'Bo' }] } },
      }),
    })
    expect((await reply.json()).result.artifacts[0].parts[0].text).toBe('Hola, Bo')
  })

  it('says plainly which module is missing and exits 1', async () => {
    const run = start(['src/missing.ts'])
    expect(await run.exited).toBe(1)
    expect(run.output()).toContain('a2a: Cannot find the agent module src/missing.ts')
    expect(run.output()).not.toMatch(/\n\s+at /)
  })

  it('refuses a module without a default agent, and a card the runtime cannot honour, in one line each', async () => {
    writeFileSync(join(project, 'src/plain.ts'), 'export const x = 1\n')
    const plain = start(['src/plain.ts'])
    expect(await plain.exited).toBe(1)
    expect(plain.output()).toContain('must `export default defineAgent')

    writeFileSync(join(project, 'src/bad-card.ts'), AGENT_TS.replace("name: 'Start Fixture'", "name: ''"))
    const badCard = start(['src/bad-card.ts'])
    expect(await badCard.exited).toBe(1)
    expect(badCard.output()).toContain('a2a: Agent card: `name` must be a non-empty string')
    expect(badCard.output()).not.toMatch(/\n\s+at /)
  })

  it('keeps tasks on disk with A2A_STORE=file:./.a2a from .env: a task answered before a restart is there after it', async () => {
    writeFileSync(join(project, '.env'), 'A2A_STORE=file:./.a2a\n')
    const send = (url: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: { message: { role: 'user', messageId: 'm', parts: [{ kind: 'text', text: 'Ada' }] } },
        }),
      })
    const first = start()
    const task = (await (await send(await first.url)).json()).result
    expect(task.status.state).toBe('completed')
    child!.kill('SIGTERM')
    expect(await first.exited).toBe(0)
    const segments = readdirSync(join(project, '.a2a', 'log')).map((name) =>
      readFileSync(join(project, '.a2a', 'log', name), 'utf8'),
    )
    expect(segments.join('')).toContain(`{"t":"${task.id}"`)

    const url = await start().url
    const get = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: task.id } }),
    })
    expect((await get.json()).result).toEqual(task)
  })

  it('refuses an A2A_STORE it does not know in one line, naming the forms it takes', async () => {
    const run = start([], { A2A_STORE: 'mongodb://db/tasks' })
    expect(await run.exited).toBe(1)
    expect(run.output()).toContain(
      'a2a: A2A_STORE must be "memory", "file:<directory>", "redis://host:port/db" or ' +
        '"postgres://user@host:port/database" (got "mongodb://db/tasks")',
    )
    expect(run.output()).not.toMatch(/\n\s+at /)
  })

  it('refuses, in one line naming it and the process that holds it, a second start on the same file store directory', async () => {
    writeFileSync(join(project, '.env'), 'A2A_STORE=file:./.a2a\n')
    await start().url
    const first = child!
    const second = start()
    expect(await second.exited).toBe(1)
    expect(second.output()).toMatch(
      new RegExp(`^a2a: Task store: \\S*\\.a2a is in use by another server process \\(pid ${first.pid}\\)`, 'm'),
    )
    expect(second.output()).not.toMatch(/\n\s+at /)
    first.kill('SIGKILL')
  })

  it('refuses a PORT (or --port) that is not a port in one line naming it and the value as given, and exits 1', async () => {
    const bad = start([], { PORT: 'abc' })
    expect(await bad.exited).toBe(1)
    expect(bad.output()).toBe('a2a: --port (PORT) must be a whole number from 0 to 65535 (got "abc")\n')
    const flag = start(['--port', '70000'])
    expect(await flag.exited).toBe(1)
    expect(flag.output()).toBe('a2a: --port (PORT) must be a whole number from 0 to 65535 (got "70000")\n')
  })

  it('names the busy port instead of crashing', async () => {
    const first = await start().url
    const port = new URL(first).port
    const firstChild = child
    const second = start([], { PORT: port })
    expect(await second.exited).toBe(1)
    expect(second.output()).toContain(`Port ${port} on 127.0.0.1 is already in use`)
    firstChild!.kill('SIGKILL')
  })
})
