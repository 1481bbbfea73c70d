import { describe, expect, it } from 'vitest'
import { a2a, field, jsonLines, oneDocument, startCommand, startSdkAgent, taskOf } from './_agent-commands.ts'

/**
 * The commands against "any v1.0-only agent": the official SDK's own server (JSON-RPC and HTTP+JSON), with a card
 * listing either first. The same command lines and the same output as against this runtime's agent.
 */

const artifactText = (task: { artifacts?: Array<{ parts: Array<{ text?: string }> }> }) =>
  (task.artifacts ?? []).flatMap((artifact) => artifact.parts.map((part) => part.text ?? '')).join('')

describe('the interface a2a chooses on the SDK server', () => {
  it.each([
    [['JSONRPC', 'HTTP+JSON'] as const, [], 'jsonRpcUrl'],
    [['HTTP+JSON', 'JSONRPC'] as const, [], 'restUrl'],
    [['HTTP+JSON', 'JSONRPC'] as const, ['--transport', 'JSONRPC'], 'jsonRpcUrl'],
    [['JSONRPC', 'HTTP+JSON'] as const, ['--transport', 'HTTP+JSON'], 'restUrl'],
  ] as const)('card %j with %j: %s', async (bindings, flags, expected) => {
    const sdk = await startSdkAgent({ bindings: [...bindings] })
    const { code, stdout, stderr } = await a2a(['send', '-a', sdk.url, 'hello', '--debug', ...flags])
    expect(code).toBe(0)
    expect(field(stdout, 'State')).toBe('COMPLETED')
    const posts = stderr.match(/^debug: → POST (\S+)/gm) ?? []
    expect(posts.length).toBeGreaterThan(0)
    for (const post of posts) expect(post).toContain(sdk[expected])
  })
})

describe.each(['JSONRPC', 'HTTP+JSON'])('a2a against the SDK server (over %s)', (binding) => {
  const start = async () => {
    const sdk = await startSdkAgent({ waitMs: 60_000 })
    const run = (...args: string[]) => a2a([...args, '-a', sdk.url, '--transport', binding])
    return { sdk, run }
  }

  it('send waits: COMPLETED with the answer; -o json one SendMessageResponse', async () => {
    const { run } = await start()
    const text = await run('send', 'hello', 'there')
    expect(text.code).toBe(0)
    expect(field(text.stdout, 'State')).toBe('COMPLETED')
    // The SDK keeps each appended chunk as a part of its own: the text shows them in order.
    expect(text.stdout).toMatch(/^ {2}Echo:\n {3}hello\n {3}there\n/m)
    const json = await run('send', 'hello', '-o', 'json')
    expect(json.code).toBe(0)
    const { task } = oneDocument(json.stdout)
    expect(task.status.state).toBe('TASK_STATE_COMPLETED')
    expect(artifactText(task)).toBe('Echo: hello')
  })

  it('send --stream -o json: the Task first, one chunk a word, the last line COMPLETED', async () => {
    const { run } = await start()
    const { code, stdout } = await run('send', 'three little words', '--stream', '-o', 'json')
    expect(code).toBe(0)
    const events = jsonLines(stdout)
    expect(events[0]).toHaveProperty('task')
    expect(events.filter((event) => event.artifactUpdate)).toHaveLength(4)
    expect(events.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED')
  })

  it('send stops at INPUT_REQUIRED with the command that answers it', async () => {
    const { sdk, run } = await start()
    const asked = await run('send', 'ask')
    expect(asked.code).toBe(0)
    expect(field(asked.stdout, 'State')).toBe('INPUT_REQUIRED')
    expect(asked.stdout).toContain('Which city?')
    expect(field(asked.stdout, 'Resume')).toBe(
      `a2a send --agent-card ${sdk.url} --task-id ${field(asked.stdout, 'Task')} --text "<reply>"`,
    )
  })

  it('send --task-id of an unknown task: TaskNotFoundError, exit 1', async () => {
    const { run } = await start()
    const { code, stdout } = await run('send', 'hello', '--task-id', 'no-such-task', '-o', 'json')
    expect(code).toBe(1)
    expect(oneDocument(stdout).error.code).toBe('TaskNotFoundError')
  })

  it('task get, task list, task cancel', async () => {
    const { run } = await start()
    const done = taskOf((await run('send', 'hello', '-o', 'json')).stdout)
    const working = taskOf((await run('send', 'wait', '--async', '-o', 'json')).stdout)
    const got = oneDocument((await run('task', 'get', done.id, '-o', 'json')).stdout)
    expect(got.id).toBe(done.id)
    expect(got.status.state).toBe('TASK_STATE_COMPLETED')
    const listed = await run('task', 'list', '-o', 'json')
    expect(listed.code).toBe(0)
    expect(
      oneDocument(listed.stdout)
        .tasks.map((task: { id: string }) => task.id)
        .sort(),
    ).toEqual([done.id, working.id].sort())
    const canceled = await run('task', 'cancel', working.id)
    expect(canceled.code).toBe(0)
    expect(field(canceled.stdout, 'State')).toBe('CANCELED')
    // Canceling again is idempotent for this agent: the canceled task again, or its TaskNotCancelableError.
    const again = await run('task', 'cancel', working.id, '-o', 'json')
    const answer = oneDocument(again.stdout)
    if (again.code === 0) expect(answer.status.state).toBe('TASK_STATE_CANCELED')
    else expect([again.code, answer.error.code]).toEqual([1, 'TaskNotCancelableError'])
  })

  it('task subscribe follows a running task to its end', async () => {
    const { sdk, run } = await start()
    const working = taskOf((await run('send', 'wait', '--async', '-o', 'json')).stdout)
    const following = startCommand([
      'task',
      'subscribe',
      working.id,
      '-a',
      sdk.url,
      '--transport',
      binding,
      '--stream',
      '-o',
      'json',
    ])
    await expect.poll(() => following.stdout()).toMatch(/^\{"task":/)
    // Canceling ends it: the subscription sees the end and stops.
    expect((await run('task', 'cancel', working.id)).code).toBe(0)
    const { code, stdout } = await following.done
    expect(code).toBe(0)
    expect(jsonLines(stdout).at(-1).statusUpdate?.status.state ?? jsonLines(stdout).at(-1).task?.status.state).toBe(
      'TASK_STATE_CANCELED',
    )
  })
})
