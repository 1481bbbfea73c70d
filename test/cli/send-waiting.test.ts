import { describe, expect, it } from 'vitest'
import {
  a2a,
  commandsAgent,
  cuttingProxy,
  field,
  jsonLines,
  oneDocument,
  startCommand,
  startRuntimeAgent,
} from './_agent-commands.ts'
import { scriptedTask, startScriptedAgent } from './_scripted-agent.ts'

/**
 * How `a2a send` waits: until --timeout (exit 5), until Ctrl-C (exit 130, the task's id already said), through a
 * stream cut midway (the task read instead, still ending COMPLETED), and never on a prompt when stdin is no terminal.
 * --timeout bounds every command that talks to an agent, not only the waits; a stream left open after the task
 * settles ends the wait all the same.
 */

describe('a2a send --timeout', () => {
  it.each([
    ['streaming', true],
    ['no streaming', false],
  ])('on a long task (%s) gives up with A2ACLI_ERR_TIMEOUT and exit 5', async (_, streaming) => {
    const url = await startRuntimeAgent(commandsAgent({ streaming }))
    const json = await a2a(['send', '-a', url, 'wait', '--timeout', '1s', '-o', 'json'])
    expect(json.code).toBe(5)
    expect(oneDocument(json.stdout).error.code).toBe('A2ACLI_ERR_TIMEOUT')
    const text = await a2a(['send', '-a', url, 'wait', '--timeout', '1s'])
    expect(text.code).toBe(5)
    expect(text.stdout).toBe('')
    expect(text.stderr).toMatch(/^Code: A2ACLI_ERR_TIMEOUT$/m)
  })

  it('over a stream, the timeout hint names the task it waited for and how to wait again', async () => {
    const url = await startRuntimeAgent(commandsAgent({ streaming: true }))
    const { code, stdout } = await a2a(['send', '-a', url, 'wait', '--timeout', '1s', '-o', 'json'])
    expect(code).toBe(5)
    const list = oneDocument((await a2a(['task', 'list', '-a', url, '-o', 'json'])).stdout)
    const [task] = list.tasks
    expect(oneDocument(stdout).error.hint).toBe(
      `raise --timeout, or wait again with a2a task get --agent-card ${url} --wait ${task.id}`,
    )
  })
})

describe('a2a send interrupted (SIGINT)', () => {
  it('exits 130 and has said the id of the task it waited for, even when interrupted at once', async () => {
    const agent = commandsAgent({ streaming: true })
    const url = await startRuntimeAgent(agent)
    // --debug says when the first event (the Task) has come: interrupt then, well before the notice a long wait earns.
    const running = startCommand(['send', '-a', url, 'gate', '--debug'])
    await agent.started
    await expect.poll(() => running.stderr()).toMatch(/^debug: ← event/m)
    process.kill(running.child.pid!, 'SIGINT')
    const { code, stdout, stderr } = await running.done
    expect(code).toBe(130)
    expect(stdout).toBe('')
    const list = oneDocument((await a2a(['task', 'list', '-a', url, '-o', 'json'])).stdout)
    expect(list.tasks).toHaveLength(1)
    expect(stderr).toContain(`Waiting for task ${list.tasks[0].id} (context ${list.tasks[0].contextId})`)
    // Ctrl-C stops the waiting, not the task.
    expect(list.tasks[0].status.state).toBe('TASK_STATE_WORKING')
    agent.openGate()
  })
})

describe('a2a send when the stream is cut midway', () => {
  it('falls back to reading the task and still ends COMPLETED, saying so in a warning', async () => {
    const agent = commandsAgent({ streaming: true })
    // Both the message's stream and the one resuming it are cut after their first event.
    const proxy = await cuttingProxy(await startRuntimeAgent(agent), 2)
    const running = startCommand(['send', '-a', proxy.url, 'gate', '--poll-interval', '200ms'])
    await expect.poll(() => running.stderr(), { timeout: 15_000 }).toContain('reading the task instead')
    agent.openGate()
    const { code, stdout, stderr } = await running.done
    expect(code).toBe(0)
    expect(proxy.cuts()).toBe(2)
    expect(stderr).toMatch(/^Warning: the stream broke .*resuming after event/m)
    expect(field(stdout, 'State')).toBe('COMPLETED')
    expect(stdout).toContain('through the gate')
  })

  it('--stream -o json: the last line is the task read after the cut, COMPLETED', async () => {
    const agent = commandsAgent({ streaming: true })
    const proxy = await cuttingProxy(await startRuntimeAgent(agent), 2)
    const running = startCommand([
      'send',
      '-a',
      proxy.url,
      'gate',
      '--stream',
      '-o',
      'json',
      '--poll-interval',
      '200ms',
    ])
    await expect.poll(() => running.stderr(), { timeout: 15_000 }).toContain('reading the task instead')
    agent.openGate()
    const { code, stdout } = await running.done
    expect(code).toBe(0)
    const events = jsonLines(stdout)
    expect(events[0]).toHaveProperty('task')
    expect(events.at(-1).task.status.state).toBe('TASK_STATE_COMPLETED')
  })

  it('a task that ended while the stream was cut is read, not an error: COMPLETED, exit 0', async () => {
    const agent = commandsAgent({ streaming: true })
    agent.openGate()
    // The task ends at once, so the stream resuming it finds it ended (the agent's UnsupportedOperationError).
    const proxy = await cuttingProxy(await startRuntimeAgent(agent), 1)
    const { code, stdout, stderr } = await a2a(['send', '-a', proxy.url, 'gate', '--poll-interval', '200ms'])
    expect(stderr).toContain('resuming after event')
    expect(field(stdout, 'State')).toBe('COMPLETED')
    expect(stdout).toContain('through the gate')
    expect(code).toBe(0)
  })

  it('resumes with Last-Event-ID when only the first stream is cut, and ends COMPLETED', async () => {
    const agent = commandsAgent({ streaming: true })
    const proxy = await cuttingProxy(await startRuntimeAgent(agent), 1)
    const running = startCommand(['send', '-a', proxy.url, 'gate'])
    await expect.poll(() => running.stderr(), { timeout: 15_000 }).toContain('resuming after event')
    agent.openGate()
    const { code, stdout } = await running.done
    expect(code).toBe(0)
    expect(proxy.lastEventIds).toHaveLength(1)
    expect(field(stdout, 'State')).toBe('COMPLETED')
  })
})

describe('a2a send without a terminal never prompts', () => {
  it.each([
    ['stdin from /dev/null', 'null'],
    ['stdin an open pipe never written', 'open-pipe'],
  ] as const)('with %s it stops at INPUT_REQUIRED and ends', async (_, stdin) => {
    const url = await startRuntimeAgent(commandsAgent({ streaming: true }))
    const { code, stdout } = await a2a(['send', '-a', url, 'ask'], { stdin })
    expect(code).toBe(0)
    expect(field(stdout, 'State')).toBe('INPUT_REQUIRED')
    expect(field(stdout, 'Resume')).toMatch(/--task-id/)
  })
})

describe('--timeout bounds the whole command', () => {
  it('a deadline that runs out while send waits to resume a cut stream: A2ACLI_ERR_TIMEOUT, exit 5', async () => {
    // The stream is cut after the Task (WORKING): send pauses before resuming it, and the deadline falls in the pause.
    const agent = await startScriptedAgent(
      (call) =>
        call.method === 'SendStreamingMessage'
          ? { events: [{ task: scriptedTask('t1', 'TASK_STATE_WORKING') }], cut: true }
          : { result: scriptedTask('t1', 'TASK_STATE_WORKING') },
      { capabilities: { streaming: true } },
    )
    const { code, stdout } = await a2a(['send', '-a', agent.url, 'hi', '--timeout', '300ms', '-o', 'json'])
    expect(oneDocument(stdout).error.code).toBe('A2ACLI_ERR_TIMEOUT')
    expect(code).toBe(5)
  })

  it.each([
    ['task get', ['task', 'get', 't1']],
    ['task get --wait', ['task', 'get', 't1', '--wait']],
    ['task cancel', ['task', 'cancel', 't1']],
    ['task list', ['task', 'list']],
    ['send --async', ['send', 'hi', '--async']],
    ['send', ['send', 'hi']],
  ])('%s to an agent that never answers: A2ACLI_ERR_TIMEOUT, exit 5', async (_, args) => {
    const agent = await startScriptedAgent(() => ({ hang: true }))
    const { code, stdout } = await a2a([...args, '-a', agent.url, '--timeout', '500ms', '-o', 'json'], {
      limitMs: 15_000,
    })
    expect(oneDocument(stdout).error.code).toBe('A2ACLI_ERR_TIMEOUT')
    expect(code).toBe(5)
  })

  it('a card that never comes: A2ACLI_ERR_TIMEOUT, exit 5, well before the card timer of 30 s', async () => {
    const agent = await startScriptedAgent(() => ({ hang: true }), { hangCard: true })
    const { code, stdout } = await a2a(['card', 'get', '-a', agent.url, '--timeout', '500ms', '-o', 'json'], {
      limitMs: 15_000,
    })
    expect(oneDocument(stdout).error.code).toBe('A2ACLI_ERR_TIMEOUT')
    expect(code).toBe(5)
  })
})

describe('a stream the agent leaves open after the task settles', () => {
  // WORKING, then INPUT_REQUIRED, then only keep-alive comments: the stream never closes.
  const pausedAgent = () =>
    startScriptedAgent(
      (call) =>
        call.method === 'SendStreamingMessage'
          ? {
              events: [
                { task: scriptedTask('t1', 'TASK_STATE_WORKING') },
                {
                  statusUpdate: {
                    taskId: 't1',
                    contextId: 'ctx-t1',
                    status: { state: 'TASK_STATE_INPUT_REQUIRED', timestamp: '2026-01-01T00:00:01Z' },
                  },
                },
              ],
              open: true,
            }
          : { result: scriptedTask('t1', 'TASK_STATE_INPUT_REQUIRED') },
      { capabilities: { streaming: true } },
    )

  it('send ends at INPUT_REQUIRED without waiting for the agent to close it', async () => {
    const agent = await pausedAgent()
    const { code, stdout } = await a2a(['send', '-a', agent.url, 'hi'], { limitMs: 10_000 })
    expect(field(stdout, 'State')).toBe('INPUT_REQUIRED')
    expect(code).toBe(0)
  })

  it('send --stream -o json ends with the INPUT_REQUIRED event', async () => {
    const agent = await pausedAgent()
    const { code, stdout } = await a2a(['send', '-a', agent.url, 'hi', '--stream', '-o', 'json'], { limitMs: 10_000 })
    expect(jsonLines(stdout).at(-1).statusUpdate.status.state).toBe('TASK_STATE_INPUT_REQUIRED')
    expect(code).toBe(0)
  })
})
