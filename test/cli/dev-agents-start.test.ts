import { type ChildProcess, spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { a2aBin, freePort, runA2a } from '../_support.ts'
import { agentModule, answerOf, makeAgentsProject } from './_agents-project.ts'

/**
 * `a2a start` of a folder of agents, as a process on a temporary project, and the client commands that address one
 * of its agents: by the agent's URL, or by `--agent` on the project's server.
 */

const running = new Set<ChildProcess>()
let project: string | undefined

afterEach(() => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
  running.clear()
  if (project) rmSync(project, { recursive: true, force: true })
  project = undefined
})

/** The environment without anything that would choose the agent, the credentials or the configuration. */
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(PORT|HOST|A2A_|A2ACLI_|XDG_CONFIG_HOME$)/.test(key)),
) as NodeJS.ProcessEnv

async function start(modules: Record<string, string>) {
  project = makeAgentsProject('a2a-start-agents-', modules)
  const port = await freePort()
  const env = { ...cleanEnv, PORT: String(port) }
  const child = spawn(process.execPath, [a2aBin, 'start'], { cwd: project, env })
  running.add(child)
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  return { url: `http://127.0.0.1:${port}/`, env, dir: project, output: () => output, exited }
}

const twoAgents = () => ({
  'planner.ts': agentModule({ name: 'planner' }),
  'writer.ts': agentModule({ name: 'writer' }),
})

describe('a2a start of a folder of agents', () => {
  it('serves each module of src/agents/ at its name, with the list at the root', async () => {
    const { url, output } = await start(twoAgents())
    await expect.poll(output, { timeout: 15_000 }).toContain('listening on')
    expect(await answerOf(`${url}planner`)).toBe('v1 loads=1')
    expect(await answerOf(`${url}writer`)).toBe('v1 loads=1')
    const list = await (await fetch(`${url}.well-known/agents.json`)).json()
    expect(list.agents.map((agent: { name: string }) => agent.name)).toEqual(['planner', 'writer'])
  })

  it('refuses to start in one line naming a module that does not load', async () => {
    const { exited, output } = await start({
      'planner.ts': agentModule({ name: 'planner' }),
      'writer.ts': agentModule({ name: 'writer', broken: true }),
    })
    expect(await exited).not.toBe(0)
    expect(output()).toMatch(/src\/agents\/writer\.ts:\d+:\d+ .*\(a2a start serves src\/agents\/ only when each/)
    expect(output().trim().split('\n')).toHaveLength(1)
  })

  it("refuses to start in one line naming a module whose name cannot be an agent's path", async () => {
    const { exited, output } = await start({
      'planner.ts': agentModule({ name: 'planner' }),
      'healthz.ts': agentModule({ name: 'healthz' }),
    })
    expect(await exited).not.toBe(0)
    expect(output()).toMatch(
      /^a2a: src\/agents\/healthz\.ts: agents: "healthz" cannot be an agent's name: it is its path/,
    )
    expect(output().trim().split('\n')).toHaveLength(1)
  })

  it('refuses to start in one line naming both modules that would be one agent (writer.js, writer.ts)', async () => {
    const { exited, output } = await start({
      'planner.ts': agentModule({ name: 'planner' }),
      'writer.js': 'export {}\n',
      'writer.ts': agentModule({ name: 'writer' }),
    })
    expect(await exited).not.toBe(0)
    expect(output()).toMatch(
      /^a2a: src\/agents\/writer\.js and src\/agents\/writer\.ts would both be the agent writer \(\/writer\/\)/,
    )
    expect(output().trim().split('\n')).toHaveLength(1)
  })
})

describe('the client commands and a server of several agents', () => {
  it('discovers the card from the URL naming the agent, without a trailing slash', async () => {
    const { url, env, dir, output } = await start(twoAgents())
    await expect.poll(output, { timeout: 15_000 }).toContain('listening on')
    const sent = await runA2a(['send', '--agent-card', `${url}writer`, '-o', 'json', 'which?'], {
      cwd: dir,
      env,
      running,
    })
    expect(sent.stderr).toBe('')
    expect(JSON.parse(sent.stdout).task.artifacts[0].parts[0].text).toBe('v1 loads=1')
  })

  it('picks one agent of the project server with --agent, and stops listing the names when none is named', async () => {
    const { env, dir, output } = await start(twoAgents())
    await expect.poll(output, { timeout: 15_000 }).toContain('listening on')
    const sent = await runA2a(['send', '--agent', 'planner', '-o', 'json', 'which?'], { cwd: dir, env, running })
    expect(JSON.parse(sent.stdout).task.artifacts[0].parts[0].text).toBe('v1 loads=1')
    const unnamed = await runA2a(['send', '-o', 'json', 'which?'], { cwd: dir, env, running })
    expect(unnamed.code).toBe(2)
    const error = JSON.parse(unnamed.stdout).error
    expect(error.message).toMatch(/serves several agents \(planner, writer\): name one with --agent$/)
  })

  it('says an --agent that is not one of the server’s agents, listing them', async () => {
    const { env, dir, output } = await start(twoAgents())
    await expect.poll(output, { timeout: 15_000 }).toContain('listening on')
    const sent = await runA2a(['send', '--agent', 'nosuch', '-o', 'json', 'which?'], { cwd: dir, env, running })
    expect(sent.code).toBe(2)
    expect(JSON.parse(sent.stdout).error.message).toMatch(
      /^--agent nosuch: http:\/\/localhost:\d+\/ serves no agent of that name; its agents: planner, writer$/,
    )
  })
})
