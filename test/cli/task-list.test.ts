import { describe, expect, it } from 'vitest'
import { a2a, commandsAgent, field, oneDocument, startRuntimeAgent, taskOf } from './_agent-commands.ts'

/** `a2a task list`: a page at a time (--page-size, --page-token), filtered by --status and --context-id. */

describe.each(['JSONRPC', 'HTTP+JSON'])('a2a task list (over %s)', (binding) => {
  /** Three tasks: two completed in one context, one waiting for input in another. */
  const start = async () => {
    const url = await startRuntimeAgent(commandsAgent({ streaming: true }))
    const run = (...args: string[]) => a2a([...args, '-a', url, '--transport', binding])
    const first = taskOf((await run('send', 'hello', '-o', 'json')).stdout)
    const second = taskOf((await run('send', 'again', '--context-id', first.contextId, '-o', 'json')).stdout)
    const asked = taskOf((await run('send', 'ask', '-o', 'json')).stdout)
    return { run, first, second, asked }
  }
  const ids = (document: { tasks: Array<{ id: string }> }) => document.tasks.map((task) => task.id).sort()

  it('gives a page of --page-size tasks and the token of the next, which gives the rest', async () => {
    const { run, first, second, asked } = await start()
    const page = oneDocument((await run('task', 'list', '--page-size', '2', '-o', 'json')).stdout)
    expect(page.tasks).toHaveLength(2)
    expect(page.nextPageToken).toBeTruthy()
    const text = await run('task', 'list', '--page-size', '2')
    expect(text.code).toBe(0)
    expect(field(text.stdout, 'Next page')).toBe(page.nextPageToken)
    expect(text.stdout.match(/^Task: /gm)).toHaveLength(2)
    const rest = oneDocument(
      (await run('task', 'list', '--page-size', '2', '--page-token', page.nextPageToken, '-o', 'json')).stdout,
    )
    expect(rest.tasks).toHaveLength(1)
    expect(rest.nextPageToken || undefined).toBeUndefined()
    expect([...ids(page), ...ids(rest)].sort()).toEqual([first.id, second.id, asked.id].sort())
  })

  it('--status keeps the tasks in that state', async () => {
    const { run, asked, first, second } = await start()
    for (const status of ['input_required', 'INPUT_REQUIRED', 'TASK_STATE_INPUT_REQUIRED'])
      expect(ids(oneDocument((await run('task', 'list', '--status', status, '-o', 'json')).stdout))).toEqual([asked.id])
    expect(ids(oneDocument((await run('task', 'list', '--status', 'completed', '-o', 'json')).stdout))).toEqual(
      [first.id, second.id].sort(),
    )
    const wrong = await run('task', 'list', '--status', 'sleeping', '-o', 'json')
    expect(wrong.code).toBe(2)
    expect(oneDocument(wrong.stdout).error.message).toContain("--status: 'sleeping' is not a task state")
  })

  it('--context-id keeps the tasks of that context', async () => {
    const { run, first, second } = await start()
    const listed = oneDocument((await run('task', 'list', '--context-id', first.contextId, '-o', 'json')).stdout)
    expect(ids(listed)).toEqual([first.id, second.id].sort())
    expect(listed.tasks.every((task: { contextId: string }) => task.contextId === first.contextId)).toBe(true)
  })
})
