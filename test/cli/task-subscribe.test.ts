import { describe, expect, it } from 'vitest'
import {
  commandsAgent,
  cuttingProxy,
  field,
  jsonLines,
  startCommand,
  startRuntimeAgent,
  taskOf,
} from './_agent-commands.ts'

/** `a2a task subscribe`: the events of a task still at work, to its end, resumed with Last-Event-ID when cut. */

describe.each(['JSONRPC', 'HTTP+JSON'])('a2a task subscribe (over %s)', (binding) => {
  const gatedTask = async (base?: (url: string) => Promise<string>) => {
    const agent = commandsAgent({ streaming: true })
    const direct = await startRuntimeAgent(agent)
    const url = base ? await base(direct) : direct
    const sent = startCommand(['send', '-a', url, 'gate', '--async', '-o', 'json'])
    const task = taskOf((await sent.done).stdout)
    const subscribe = (...args: string[]) =>
      startCommand(['task', 'subscribe', task.id, '-a', url, '--transport', binding, ...args])
    return { agent, task, subscribe }
  }

  it('--stream -o json prints each event of the running task as it comes, ending COMPLETED', async () => {
    const { agent, task, subscribe } = await gatedTask()
    const running = subscribe('--stream', '-o', 'json')
    // The Task comes first, while it still works.
    await expect.poll(() => running.stdout()).toMatch(/^\{"task":/)
    expect(running.child.exitCode).toBe(null)
    agent.openGate()
    const { code, stdout } = await running.done
    expect(code).toBe(0)
    const events = jsonLines(stdout)
    expect(events[0].task.id).toBe(task.id)
    expect(events.some((event) => event.artifactUpdate?.artifact.parts[0].text === 'through the gate')).toBe(true)
    expect(events.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED')
  })

  it('a task that has already ended prints the task itself and exits 0 (the agent refuses to follow it)', async () => {
    const { agent, task, subscribe } = await gatedTask()
    agent.openGate()
    await expect
      .poll(async () => field((await subscribe().done).stdout, 'State'), { timeout: 15_000 })
      .toBe('COMPLETED')
    const ended = await subscribe('-o', 'json').done
    expect(ended.code).toBe(0)
    expect(JSON.parse(ended.stdout).id).toBe(task.id)
    expect(JSON.parse(ended.stdout).status.state).toBe('TASK_STATE_COMPLETED')
  })

  it('without --stream prints the task once it ends', async () => {
    const { agent, task, subscribe } = await gatedTask()
    const running = subscribe('--debug')
    await expect.poll(() => running.stderr()).toMatch(/^debug: ← event/m)
    agent.openGate()
    const { code, stdout } = await running.done
    expect(code).toBe(0)
    expect(field(stdout, 'Task')).toBe(task.id)
    expect(field(stdout, 'State')).toBe('COMPLETED')
    expect(stdout).toContain('through the gate')
  })

  it('a cut connection is resumed with Last-Event-ID, and ends COMPLETED with each event once', async () => {
    let proxy!: Awaited<ReturnType<typeof cuttingProxy>>
    const { agent, subscribe } = await gatedTask(async (url) => {
      proxy = await cuttingProxy(url, 1)
      return proxy.url
    })
    const running = subscribe('--stream', '-o', 'json')
    await expect.poll(() => running.stderr(), { timeout: 15_000 }).toContain('resuming after event')
    expect(proxy.lastEventIds).toHaveLength(0)
    agent.openGate()
    const { code, stdout, stderr } = await running.done
    expect(code).toBe(0)
    expect(stderr).toMatch(/^Warning: the stream broke .*resuming after event (\d+)$/m)
    const resumedAfter = /resuming after event (\d+)$/m.exec(stderr)![1]
    expect(proxy.lastEventIds).toEqual([resumedAfter])
    const events = jsonLines(stdout)
    const chunks = events.filter((event) => event.artifactUpdate)
    expect(chunks).toHaveLength(1)
    expect(events.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED')
  })
})
