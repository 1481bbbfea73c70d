import { describe, expect, it } from 'vitest'
import { startReceiver } from '../runtime/_webhook.ts'
import { a2a, commandsAgent, field, oneDocument, startRuntimeAgent, taskOf } from './_agent-commands.ts'

/**
 * `a2a task push-config create|get|list|delete` against this runtime's agent with push on (webhooks on 127.0.0.1
 * allowed, as a test's own server is), over both bindings: the config made is the one the agent posts to.
 */

describe.each(['JSONRPC', 'HTTP+JSON'])('a2a task push-config (over %s)', (binding) => {
  it("create, get, list and delete a task's webhook; the agent posts the task's updates to it", async () => {
    const agent = commandsAgent({ streaming: true })
    const url = await startRuntimeAgent(agent)
    const run = (...args: string[]) => a2a([...args, '-a', url, '--transport', binding])
    const webhook = await startReceiver()
    const task = taskOf((await run('send', 'gate', '--async', '-o', 'json')).stdout)

    const created = await run(
      'task',
      'push-config',
      'create',
      task.id,
      '--webhook',
      webhook.url,
      '--id',
      'hook-1',
      '--webhook-token',
      'webhook-token-31c9',
      '-o',
      'json',
    )
    expect(created.code).toBe(0)
    expect(oneDocument(created.stdout)).toMatchObject({ id: 'hook-1', taskId: task.id, url: webhook.url })

    const text = await run('task', 'push-config', 'get', task.id, 'hook-1')
    expect(text.code).toBe(0)
    expect(field(text.stdout, 'Task')).toBe(task.id)
    expect(field(text.stdout, 'Push config')).toBe('hook-1')
    expect(field(text.stdout, 'URL')).toBe(webhook.url)
    // The webhook's token is a secret the agent keeps: never printed.
    expect(text.stdout).not.toContain('webhook-token-31c9')

    await run('task', 'push-config', 'create', task.id, '--webhook', `${webhook.url}/second`, '--id', 'hook-2')
    const listed = oneDocument((await run('task', 'push-config', 'list', task.id, '-o', 'json')).stdout)
    expect(listed.configs.map((config: { id: string }) => config.id).sort()).toEqual(['hook-1', 'hook-2'])

    const deleted = await run('task', 'push-config', 'delete', task.id, 'hook-2', '-o', 'json')
    expect(deleted.code).toBe(0)
    expect(oneDocument(deleted.stdout)).toEqual({})
    const after = oneDocument((await run('task', 'push-config', 'list', task.id, '-o', 'json')).stdout)
    expect(after.configs.map((config: { id: string }) => config.id)).toEqual(['hook-1'])
    const gone = await run('task', 'push-config', 'get', task.id, 'hook-2', '-o', 'json')
    expect(gone.code).toBe(1)
    expect(oneDocument(gone.stdout).error.code).toMatch(/NotFound/)

    agent.openGate()
    await expect
      .poll(() => webhook.delivered.some((delivery) => delivery.raw.includes('TASK_STATE_COMPLETED')))
      .toBe(true)
    expect(webhook.delivered.every((delivery) => delivery.path === '/hook')).toBe(true)
    // Nine a2a processes one after another: seconds each on a loaded machine.
  }, 60_000)

  it('to an agent whose card declares no push: PushNotificationNotSupportedError, exit 1, the agent not asked', async () => {
    const url = await startRuntimeAgent(commandsAgent({ streaming: true, push: false }))
    const run = (...args: string[]) => a2a([...args, '-a', url, '--transport', binding])
    const task = taskOf((await run('send', 'hello', '-o', 'json')).stdout)
    const { code, stdout, stderr } = await run(
      'task',
      'push-config',
      'create',
      task.id,
      '--webhook',
      'https://hooks.example/a2a',
      '-o',
      'json',
      '--debug',
    )
    expect(code).toBe(1)
    expect(oneDocument(stdout).error.code).toBe('PushNotificationNotSupportedError')
    // No agent answered that error: it carries no binding code.
    expect(oneDocument(stdout).error.a2aCode).toBeNull()
    // The card read, and nothing more.
    expect(stderr).toMatch(/^debug: → GET \S+agent-card\.json/m)
    expect(stderr).not.toMatch(/^debug: → POST/m)
  })

  it('create without --webhook is a usage error, exit 2', async () => {
    const url = await startRuntimeAgent(commandsAgent({ streaming: true }))
    const { code, stderr } = await a2a(['task', 'push-config', 'create', 'some-task', '-a', url])
    expect(code).toBe(2)
    expect(stderr).toContain('--webhook')
  })
})

describe('a2a task push-config and its configured settings', () => {
  it('create takes its webhook and token from A2ACLI_WEBHOOK and A2ACLI_WEBHOOK_TOKEN; list its A2ACLI_PAGE_SIZE', async () => {
    const agent = commandsAgent({ streaming: true })
    const url = await startRuntimeAgent(agent)
    const webhook = await startReceiver()
    const task = taskOf((await a2a(['send', 'gate', '--async', '-o', 'json', '-a', url])).stdout)
    const env = { A2ACLI_WEBHOOK: webhook.url, A2ACLI_WEBHOOK_TOKEN: 'env-token-8a2f', A2ACLI_PAGE_SIZE: '1' }
    const created = await a2a(['task', 'push-config', 'create', task.id, '--id', 'hook-1', '-a', url, '-o', 'json'], {
      env,
    })
    expect(created.code).toBe(0)
    expect(oneDocument(created.stdout)).toMatchObject({ id: 'hook-1', url: webhook.url })
    await a2a(['task', 'push-config', 'create', task.id, '--id', 'hook-2', '-a', url], { env })
    const listed = await a2a(['task', 'push-config', 'list', task.id, '-a', url, '-o', 'json', '--debug'], { env })
    expect(listed.stderr).toMatch(/pageSize"?[:=]"?1\b/)
    agent.openGate()
    await expect
      .poll(() => webhook.delivered.find((delivery) => delivery.raw.includes('TASK_STATE_COMPLETED')))
      .toBeDefined()
    const delivery = webhook.delivered.find((each) => each.raw.includes('TASK_STATE_COMPLETED'))!
    expect(JSON.stringify(delivery.headers)).toContain('env-token-8a2f')
  })

  it('--page-size abc is a usage error naming the flag, exit 2, nothing sent', async () => {
    const url = await startRuntimeAgent(commandsAgent({ streaming: true }))
    const { code, stdout } = await a2a([
      'task',
      'push-config',
      'list',
      't',
      '--page-size',
      'abc',
      '-a',
      url,
      '-o',
      'json',
    ])
    expect(oneDocument(stdout).error).toMatchObject({
      code: 'A2ACLI_ERR_USAGE',
      message: expect.stringContaining('--page-size'),
    })
    expect(code).toBe(2)
  })
})
