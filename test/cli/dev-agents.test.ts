import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createFileStore } from 'a2a-runtime/file-store'
import { afterEach, describe, expect, it } from 'vitest'
import { a2aBin, freePort, runA2a } from '../_support.ts'
import { agentModule, answerOf, makeAgentsProject, sendText, sharedModule } from './_agents-project.ts'

/**
 * `a2a dev` of a folder of agents, as a process on a temporary project: each module of `src/agents/` served at its
 * name and reloaded on its own.
 */

let project: string | undefined
let child: ChildProcess | undefined

afterEach(() => {
  if (child?.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
  child = undefined
  if (project) rmSync(project, { recursive: true, force: true })
  project = undefined
})

async function startDev(modules: Record<string, string>, args: string[] = [], store = '') {
  project = makeAgentsProject('a2a-dev-agents-', modules)
  const port = await freePort()
  const started = spawn(process.execPath, [a2aBin, 'dev', ...args], {
    cwd: project,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', A2A_STORE: store },
  })
  child = started
  let output = ''
  started.stdout!.on('data', (chunk) => (output += chunk))
  started.stderr!.on('data', (chunk) => (output += chunk))
  const url = `http://127.0.0.1:${port}/`
  await expect.poll(() => output, { timeout: 15_000 }).toContain('Dev server at')
  return { url, output: () => output, dir: project }
}

const write = (dir: string, file: string, source: string) => writeFileSync(join(dir, 'src/agents', file), source)

describe('a2a dev of a folder of agents', () => {
  it('serves each module of src/agents/ at its name when the project has no src/agent.ts, and lists them', async () => {
    const { url, output } = await startDev({
      'planner.ts': agentModule({ name: 'planner' }),
      'writer.ts': agentModule({ name: 'writer' }),
    })
    expect(await answerOf(`${url}planner`)).toBe('v1 loads=1')
    expect(await answerOf(`${url}writer/`)).toBe('v1 loads=1')
    const card = await (await fetch(`${url}planner/.well-known/agent-card.json`)).json()
    expect(card.name).toBe('planner agent')
    const list = await (await fetch(`${url}.well-known/agents.json`)).json()
    expect(list.agents.map((agent: { name: string }) => agent.name)).toEqual(['planner', 'writer'])
    expect(output()).toContain('agents planner, writer from src/agents/')
  })

  it("reloads only the saved agent: the other's running task finishes and its module is not evaluated again", async () => {
    const gate = join(process.env.TMPDIR ?? '/tmp', `a2a-dev-agents-gate-${process.pid}-${Date.now()}`)
    const { url, output, dir } = await startDev({
      'planner.ts': agentModule({ name: 'planner', gate }),
      'writer.ts': agentModule({ name: 'writer' }),
    })
    try {
      // A planner task at work while the writer is saved.
      const running = sendText(`${url}planner`, 'long')
      write(dir, 'writer.ts', agentModule({ name: 'writer', answer: 'v2' }))
      await expect.poll(() => answerOf(`${url}writer`), { interval: 20, timeout: 8000 }).toBe('v2 loads=2')
      writeFileSync(gate, '')
      const finished = await running
      expect(finished.body.result.status.state).toBe('completed')
      expect(finished.body.result.artifacts[0].parts[0].text).toBe('v1 loads=1')
      // The planner's module was not evaluated again: the same instance answers.
      expect(await answerOf(`${url}planner`)).toBe('v1 loads=1')
      expect(output().match(/Loaded src\/agents\/planner\.ts/g)).toHaveLength(1)
      expect(output().match(/Loaded src\/agents\/writer\.ts/g)).toHaveLength(2)
    } finally {
      rmSync(gate, { force: true })
    }
  })

  it('reloads both agents when a module both import is saved', async () => {
    const { url, dir } = await startDev({
      'planner.ts': agentModule({ name: 'planner', importsShared: true }),
      'writer.ts': agentModule({ name: 'writer', importsShared: true }),
      'shared.ts': sharedModule('-a'),
    })
    expect(await answerOf(`${url}planner`)).toBe('v1-a loads=1')
    write(dir, 'shared.ts', sharedModule('-b'))
    await expect.poll(() => answerOf(`${url}planner`), { interval: 20, timeout: 8000 }).toBe('v1-b loads=2')
    await expect.poll(() => answerOf(`${url}writer`), { interval: 20, timeout: 8000 }).toBe('v1-b loads=2')
    // shared.ts exports no agent: it is no path of the server.
    const list = await (await fetch(`${url}.well-known/agents.json`)).json()
    expect(list.agents.map((agent: { name: string }) => agent.name)).toEqual(['planner', 'writer'])
  })

  it('keeps serving the version loaded before while a save does not load, and says why in one line', async () => {
    const { url, output, dir } = await startDev({
      'planner.ts': agentModule({ name: 'planner' }),
      'writer.ts': agentModule({ name: 'writer' }),
    })
    write(dir, 'writer.ts', agentModule({ name: 'writer', broken: true }))
    await expect
      .poll(output, { interval: 20, timeout: 8000 })
      .toMatch(/The agent writer failed to load: src\/agents\/writer\.ts:\d+:\d+ .*keeps serving the version loaded/)
    expect(await answerOf(`${url}writer`)).toBe('v1 loads=1')
    write(dir, 'writer.ts', agentModule({ name: 'writer', answer: 'fixed' }))
    await expect.poll(() => answerOf(`${url}writer`), { interval: 20, timeout: 8000 }).toBe('fixed loads=2')
  })

  it('adds an agent for a new module and removes the agent of a deleted one', async () => {
    const { url, output, dir } = await startDev({
      'planner.ts': agentModule({ name: 'planner' }),
      'writer.ts': agentModule({ name: 'writer' }),
    })
    write(dir, 'critic.ts', agentModule({ name: 'critic' }))
    await expect.poll(() => answerOf(`${url}critic`), { interval: 20, timeout: 8000 }).toBe('v1 loads=1')
    const names = async () =>
      ((await (await fetch(`${url}.well-known/agents.json`)).json()).agents as Array<{ name: string }>).map(
        ({ name }) => name,
      )
    expect(await names()).toEqual(['planner', 'writer', 'critic'])
    unlinkSync(join(dir, 'src/agents/writer.ts'))
    await expect.poll(names, { interval: 20, timeout: 8000 }).toEqual(['planner', 'critic'])
    const gone = await sendText(`${url}writer`)
    expect(gone.status).toBe(404)
    expect(gone.body.error!.message).toBe('No agent at /writer/: its module was removed')
    expect(output()).toContain('Agent writer removed')
    expect(await answerOf(`${url}planner`)).toBe('v1 loads=1')
  })

  it("saves a removed agent's running task as it ends at Ctrl-C before the store closes", async () => {
    const stored = mkdtempSync(join(tmpdir(), 'a2a-dev-agents-store-'))
    const gate = join(stored, 'gate')
    try {
      const { url, output, dir } = await startDev(
        { 'planner.ts': agentModule({ name: 'planner' }), 'writer.ts': agentModule({ name: 'writer', gate }) },
        [],
        `file:${join(stored, 'tasks')}`,
      )
      const started = await fetch(`${url}writer`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: {
            message: { role: 'ROLE_USER', messageId: 'long-1', parts: [{ text: 'long' }] },
            configuration: { returnImmediately: true },
          },
        }),
      })
      const id: string = (await started.json()).result.task.id
      unlinkSync(join(dir, 'src/agents/writer.ts'))
      await expect.poll(output, { interval: 20, timeout: 8000 }).toContain('Agent writer removed')
      const exited = new Promise((resolve) => child!.once('exit', resolve))
      process.kill(child!.pid!, 'SIGTERM')
      await expect.poll(output, { interval: 20, timeout: 8000 }).toContain('stopping the dev server')
      // The removed agent's task ends only now, while the shutdown waits for it.
      writeFileSync(gate, '')
      await exited
      const store = createFileStore({ dir: join(stored, 'tasks') })
      try {
        expect((await store.get(id))?.status.state).toBe('completed')
      } finally {
        await store.close?.()
      }
    } finally {
      rmSync(stored, { recursive: true, force: true })
    }
  })

  it("has a2a send in the project reach one agent with --agent, through the dev server's address file", async () => {
    const { dir } = await startDev({
      'planner.ts': agentModule({ name: 'planner' }),
      'writer.ts': agentModule({ name: 'writer', answer: 'w' }),
    })
    // No PORT: the command finds the dev server where it wrote its address (.a2a/dev.json).
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([key]) => !/^(PORT|HOST|A2A_|A2ACLI_|XDG_CONFIG_HOME$)/.test(key)),
    )
    const running = new Set<ChildProcess>()
    try {
      const sent = await runA2a(['send', '--agent', 'writer', '-o', 'json', 'which?'], { cwd: dir, env, running })
      expect(JSON.parse(sent.stdout).task.artifacts[0].parts[0].text).toBe('w loads=1')
      expect(sent.stderr).toMatch(/writer\/ \(this project's a2a dev; --agent writer\)/)
    } finally {
      for (const each of running) if (each.exitCode === null) process.kill(each.pid!, 'SIGKILL')
    }
  })

  it('serves the others when a module does not load at the start; that agent answers 503 with the reason', async () => {
    const { url, output } = await startDev({
      'planner.ts': agentModule({ name: 'planner' }),
      'writer.ts': agentModule({ name: 'writer', broken: true }),
      'bad name.ts': agentModule({ name: 'bad' }),
    })
    expect(await answerOf(`${url}planner`)).toBe('v1 loads=1')
    const broken = await sendText(`${url}writer`)
    expect(broken.status).toBe(503)
    expect(broken.body.error!.message).toMatch(/^The agent writer failed to load: src\/agents\/writer\.ts:\d+:\d+ /)
    expect(output()).toMatch(
      /The agent bad name failed to load: src\/agents\/bad name\.ts: agents: "bad name" cannot be/,
    )
    expect(output()).not.toMatch(/ at .*\.js:\d+:\d+\)/)
  })
})
