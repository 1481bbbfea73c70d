import { describe, expect, it } from 'vitest'
import {
  a2a,
  commandsAgent,
  expectNoStack,
  field,
  oneDocument,
  startCommand,
  startRuntimeAgent,
  taskOf,
} from './_agent-commands.ts'

/** `a2a task get` (--history, --wait) and `a2a task cancel` against this runtime's agent, over both bindings. */

describe.each(['JSONRPC', 'HTTP+JSON'])('over %s', (binding) => {
  const start = async () => {
    const agent = commandsAgent({ streaming: true })
    const url = await startRuntimeAgent(agent)
    const run = (...args: string[]) => a2a([...args, '-a', url, '--transport', binding])
    return { agent, url, run }
  }

  it('task get prints the task: Task, Context, State and its artifact; -o json the bare Task', async () => {
    const { run } = await start()
    const sent = taskOf((await run('send', 'hello', '-o', 'json')).stdout)
    const text = await run('task', 'get', sent.id)
    expect(text.code).toBe(0)
    expect(field(text.stdout, 'Task')).toBe(sent.id)
    expect(field(text.stdout, 'Context')).toBe(sent.contextId)
    expect(field(text.stdout, 'State')).toBe('COMPLETED')
    expect(text.stdout).toMatch(/^Artifact: .*\n {2}Echo: hello\n/m)
    const json = await run('task', 'get', sent.id, '-o', 'json')
    const task = oneDocument(json.stdout)
    expect(task.id).toBe(sent.id)
    expect(task.status.state).toBe('TASK_STATE_COMPLETED')
  })

  it('task get --history <n> includes the last n messages of its history', async () => {
    const { run } = await start()
    const asked = taskOf((await run('send', 'ask', '-o', 'json')).stdout)
    await run('send', 'Oslo', '--task-id', asked.id)
    const whole = oneDocument((await run('task', 'get', asked.id, '-o', 'json')).stdout)
    expect(whole.history.length).toBeGreaterThan(1)
    const one = oneDocument((await run('task', 'get', asked.id, '--history', '1', '-o', 'json')).stdout)
    expect(one.history).toEqual([whole.history.at(-1)])
    const text = await run('task', 'get', asked.id, '--history', '1')
    expect(text.stdout.match(/^History: /gm)).toHaveLength(1)
  })

  it('task get --wait reads the task until it completes', async () => {
    const { agent, url, run } = await start()
    const sent = taskOf((await run('send', 'gate', '--async', '-o', 'json')).stdout)
    const waiting = startCommand(['task', 'get', sent.id, '--wait', '--poll-interval', '200ms', '-a', url])
    // Read at least once while it works, then let it end.
    await expect.poll(async () => field((await run('task', 'get', sent.id)).stdout, 'State')).toBe('WORKING')
    agent.openGate()
    const { code, stdout } = await waiting.done
    expect(code).toBe(0)
    expect(field(stdout, 'State')).toBe('COMPLETED')
    expect(stdout).toContain('through the gate')
  })

  it('task get --wait stops at INPUT_REQUIRED with the resume command', async () => {
    const { run } = await start()
    const asked = taskOf((await run('send', 'ask', '--async', '-o', 'json')).stdout)
    const { code, stdout, stderr } = await run('task', 'get', asked.id, '--wait', '--poll-interval', '200ms')
    expect(code).toBe(0)
    expect(field(stdout, 'State')).toBe('INPUT_REQUIRED')
    expect(field(stdout, 'Resume')).toContain(`--task-id ${asked.id}`)
    expect(stderr).toMatch(/^Warning: .*INPUT_REQUIRED/m)
  })

  it('task get of an unknown task: TaskNotFoundError, exit 1, no stack', async () => {
    const { run } = await start()
    const json = await run('task', 'get', 'no-such-task', '-o', 'json')
    expect(json.code).toBe(1)
    expect(oneDocument(json.stdout).error.code).toBe('TaskNotFoundError')
    const text = await run('task', 'get', 'no-such-task')
    expect(text.stderr).toMatch(/^Code: TaskNotFoundError$/m)
    expectNoStack(text.stderr)
  })

  it('task cancel ends a working task CANCELED; again, TaskNotCancelableError exit 1 with a hint naming it', async () => {
    const { url, run } = await start()
    const sent = taskOf((await run('send', 'wait', '--async', '-o', 'json')).stdout)
    const canceled = await run('task', 'cancel', sent.id)
    expect(canceled.code).toBe(0)
    expect(field(canceled.stdout, 'Task')).toBe(sent.id)
    expect(field(canceled.stdout, 'State')).toBe('CANCELED')
    const json = await run('task', 'cancel', sent.id, '-o', 'json')
    expect(json.code).toBe(1)
    const { error } = oneDocument(json.stdout)
    expect(error.code).toBe('TaskNotCancelableError')
    expect(error.hint).toBe(`the task has already ended: a2a task get --agent-card ${url} ${sent.id} shows its state`)
    const text = await run('task', 'cancel', sent.id)
    expect(text.code).toBe(1)
    expect(text.stderr).toMatch(/^Code: TaskNotCancelableError$/m)
    expectNoStack(text.stderr)
  })
})
