import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net'
import { createA2AApp, createMemoryStore } from 'a2a-runtime'
import type { PushConfig, PushConfigStore, TaskStore } from 'a2a-runtime/store'
import { describe, expect, it } from 'vitest'
import type { PushOptions } from '../../runtime/src/push/push-options.ts'
import { agent, deferred, echoAgent } from './_agents.ts'
import { captureLogger } from './_logger.ts'
import { readEvents } from './_sse.ts'
import { transports } from './_transports.ts'
import { startReceiver } from './_webhook.ts'

/** The guard's development allowance: receivers on this machine, over http. */
// A loaded machine may take a while to answer on loopback: only the tests about slow webhooks time out.
const LOOPBACK: PushOptions = { allow: ['127.0.0.1'], allowHttp: true, retryDelayMs: 10, timeoutMs: 10_000 }
const V1 = { 'a2a-version': '1.0' }
const V03 = { 'a2a-version': '0.3' }
const withPush = { card: { capabilities: { pushNotifications: true } } }

const pushEcho = agent((ctx, task) => {
  task.working('on it')
  task.artifact(`Echo: ${ctx.text}`)
  task.complete()
}, withPush)

/** Asks for input on the first turn, completes on the second. */
const twoTurns = agent((ctx, task) => {
  if (ctx.history.filter((m) => m.role === 'user').length < 2) task.inputRequired('Which one?')
  else {
    task.artifact(`Chose ${ctx.text}`)
    task.complete()
  }
}, withPush)

const v1Message = (text: string, extra: object = {}) => ({
  message: { role: 'ROLE_USER', messageId: `m-${Math.random()}`, parts: [{ text }], ...extra },
})
const slashMessage = (text: string) => ({
  message: { role: 'user', messageId: `m-${Math.random()}`, parts: [{ kind: 'text', text }] },
})

describe.each(transports)('push notifications ($name)', (transport) => {
  it('posts each update of a v1.0 task as a StreamResponse, in order, with the token and Authorization headers', async () => {
    const receiver = await startReceiver()
    const target = await transport.start(pushEcho, { push: LOOPBACK })
    const webhook = {
      url: receiver.url,
      token: 'task-token-1',
      authentication: { scheme: 'Bearer', credentials: 'webhook-secret' },
    }
    const reply = await target.rpc(
      'SendMessage',
      { ...v1Message('hi'), configuration: { taskPushNotificationConfig: webhook } },
      { headers: V1 },
    )
    const taskId = reply.body.result.task.id
    await expect.poll(() => receiver.delivered.length).toBe(4)
    const [working, progress, artifact, completed] = receiver.delivered.map((d) => d.body)
    expect(working.statusUpdate).toMatchObject({ taskId, status: { state: 'TASK_STATE_WORKING' } })
    expect(progress.statusUpdate.status.message.parts[0].text).toBe('on it')
    expect(artifact.artifactUpdate).toMatchObject({ taskId, artifact: { parts: [{ text: 'Echo: hi' }] } })
    expect(completed.statusUpdate).toMatchObject({ taskId, status: { state: 'TASK_STATE_COMPLETED' } })
    for (const { headers } of receiver.delivered) {
      expect(headers['content-type']).toBe('application/a2a+json')
      expect(headers['x-a2a-notification-token']).toBe('task-token-1')
      expect(headers.authorization).toBe('Bearer webhook-secret')
    }
  })

  it('posts the whole v0.3 Task on each change of a task configured with message/send, ending with its final state', async () => {
    const receiver = await startReceiver()
    const target = await transport.start(pushEcho, { push: LOOPBACK })
    const params = {
      ...slashMessage('hi'),
      configuration: { pushNotificationConfig: { url: receiver.url, token: 'tok' } },
    }
    const task = (await target.rpc('message/send', params, { headers: V03 })).body.result
    await expect.poll(() => receiver.delivered.at(-1)?.body.status.state).toBe('completed')
    const last = receiver.delivered.at(-1)!
    expect(last.body).toMatchObject({
      kind: 'task',
      id: task.id,
      artifacts: [{ parts: [{ kind: 'text', text: 'Echo: hi' }] }],
    })
    expect(last.headers['content-type']).toBe('application/json')
    expect(last.headers['x-a2a-notification-token']).toBe('tok')
    // Whole tasks: a later one carries every earlier change, so queued ones may be folded into it.
    const states = receiver.delivered.map((d) => d.body.status.state)
    expect(states.indexOf('completed')).toBe(states.length - 1)
  })

  it('posts platform-shaped tasks for a webhook given with a platform message/stream', async () => {
    const receiver = await startReceiver()
    const target = await transport.start(pushEcho, { push: LOOPBACK })
    const body = {
      jsonrpc: '2.0',
      id: 1,
      method: 'message/stream',
      params: { ...slashMessage('hi'), configuration: { pushNotificationConfig: { url: receiver.url } } },
    }
    const { events } = await readEvents(await target.post(JSON.stringify(body)))
    expect(events.at(-1).params.status.state).toBe('completed')
    await expect.poll(() => receiver.delivered.at(-1)?.body.status.state).toBe('completed')
    expect(receiver.delivered.at(-1)!.body.id).toBe(events[0].params.taskId)
  })

  it('creates, reads, lists and deletes v1.0 configs; credentials are never sent back; deleting twice is no error', async () => {
    const receiver = await startReceiver()
    const target = await transport.start(twoTurns, { push: LOOPBACK })
    const taskId = (await target.rpc('SendMessage', v1Message('start'), { headers: V1 })).body.result.task.id
    const created = (
      await target.rpc(
        'CreateTaskPushNotificationConfig',
        { taskId, url: receiver.url, token: 't', authentication: { scheme: 'Bearer', credentials: 'never-echoed' } },
        { headers: V1 },
      )
    ).body.result
    expect(created).toMatchObject({ taskId, url: receiver.url, token: 't', authentication: { scheme: 'Bearer' } })
    expect(typeof created.id).toBe('string')
    expect(JSON.stringify(created)).not.toContain('never-echoed')
    const named = (
      await target.rpc('CreateTaskPushNotificationConfig', { taskId, id: 'second', url: receiver.url }, { headers: V1 })
    ).body.result
    expect(named.id).toBe('second')

    expect(
      (await target.rpc('GetTaskPushNotificationConfig', { taskId, id: created.id }, { headers: V1 })).body.result,
    ).toEqual(created)
    const listed = (await target.rpc('ListTaskPushNotificationConfigs', { taskId }, { headers: V1 })).body.result
    expect(listed.nextPageToken).toBe('')
    expect(listed.configs.map((c: { id: string }) => c.id).sort()).toEqual([created.id, 'second'].sort())

    // Both webhooks hear the follow-up turn.
    await target.rpc('SendMessage', v1Message('blue', { taskId }), { headers: V1 })
    await expect
      .poll(() => receiver.delivered.filter((d) => d.body.statusUpdate?.status.state === 'TASK_STATE_COMPLETED').length)
      .toBe(2)

    expect(
      (await target.rpc('DeleteTaskPushNotificationConfig', { taskId, id: 'second' }, { headers: V1 })).body.result,
    ).toEqual({})
    expect(
      (await target.rpc('DeleteTaskPushNotificationConfig', { taskId, id: 'second' }, { headers: V1 })).body.result,
    ).toEqual({})
    const gone = (await target.rpc('GetTaskPushNotificationConfig', { taskId, id: 'second' }, { headers: V1 })).body
      .error
    expect(gone).toMatchObject({ code: -32001, message: expect.stringContaining('"second"') })
    expect(
      (await target.rpc('ListTaskPushNotificationConfigs', { taskId }, { headers: V1 })).body.result.configs,
    ).toHaveLength(1)
  })

  it('sets, gets, lists and deletes v0.3 configs, a config without an id being named after its task', async () => {
    const receiver = await startReceiver()
    const target = await transport.start(twoTurns, { push: LOOPBACK })
    const taskId = (await target.rpc('message/send', slashMessage('start'), { headers: V03 })).body.result.id
    const set = (
      await target.rpc(
        'tasks/pushNotificationConfig/set',
        {
          taskId,
          pushNotificationConfig: {
            url: receiver.url,
            authentication: { schemes: ['Bearer'], credentials: 'secret-0.3' },
          },
        },
        { headers: V03 },
      )
    ).body.result
    expect(set).toEqual({
      taskId,
      pushNotificationConfig: { id: taskId, url: receiver.url, authentication: { schemes: ['Bearer'] } },
    })
    expect(
      (await target.rpc('tasks/pushNotificationConfig/get', { id: taskId }, { headers: V03 })).body.result,
    ).toEqual(set)
    expect(
      (await target.rpc('tasks/pushNotificationConfig/list', { id: taskId }, { headers: V03 })).body.result,
    ).toEqual([set])

    await target.rpc('message/send', { message: { ...slashMessage('red').message, taskId } }, { headers: V03 })
    await expect.poll(() => receiver.delivered.at(-1)?.body.status.state).toBe('completed')
    expect(receiver.delivered.at(-1)!.headers.authorization).toBe('Bearer secret-0.3')

    expect(
      (
        await target.rpc(
          'tasks/pushNotificationConfig/delete',
          { id: taskId, pushNotificationConfigId: taskId },
          { headers: V03 },
        )
      ).body.result,
    ).toBeNull()
    expect(
      (await target.rpc('tasks/pushNotificationConfig/list', { id: taskId }, { headers: V03 })).body.result,
    ).toEqual([])
  })

  it('answers -32001 for configs of an unknown task, and refuses more than 10 webhooks per task', async () => {
    const receiver = await startReceiver()
    const target = await transport.start(twoTurns, { push: LOOPBACK })
    const unknown = await target.rpc(
      'CreateTaskPushNotificationConfig',
      { taskId: 'no-such-task', url: receiver.url },
      { headers: V1 },
    )
    expect(unknown.body.error.code).toBe(-32001)
    expect(
      (await target.rpc('tasks/pushNotificationConfig/list', { id: 'no-such-task' }, { headers: V03 })).body.error.code,
    ).toBe(-32001)
    const taskId = (await target.rpc('SendMessage', v1Message('start'), { headers: V1 })).body.result.task.id
    for (let i = 0; i < 10; i++)
      await target.rpc('CreateTaskPushNotificationConfig', { taskId, id: `c${i}`, url: receiver.url }, { headers: V1 })
    const eleventh = await target.rpc(
      'CreateTaskPushNotificationConfig',
      { taskId, id: 'c10', url: receiver.url },
      { headers: V1 },
    )
    expect(eleventh.body.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('10 push notification configs'),
    })
    // Replacing one that exists is still fine.
    expect(
      (
        await target.rpc(
          'CreateTaskPushNotificationConfig',
          { taskId, id: 'c3', url: `${receiver.url}?v=2` },
          { headers: V1 },
        )
      ).body.result.url,
    ).toBe(`${receiver.url}?v=2`)
  })

  it('takes a webhook given with a follow-up before the task resumes; one too many is refused and the task waits on', async () => {
    const receiver = await startReceiver()
    const target = await transport.start(twoTurns, { push: { ...LOOPBACK, maxConfigsPerTask: 1 } })
    const first = {
      ...v1Message('start'),
      configuration: { taskPushNotificationConfig: { url: receiver.url, id: 'first' } },
    }
    const taskId = (await target.rpc('SendMessage', first, { headers: V1 })).body.result.task.id
    const tooMany = {
      ...v1Message('blue', { taskId }),
      configuration: { taskPushNotificationConfig: { url: receiver.url, id: 'second' } },
    }
    expect((await target.rpc('SendMessage', tooMany, { headers: V1 })).body.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('1 push notification configs'),
    })
    expect((await target.rpc('GetTask', { id: taskId }, { headers: V1 })).body.result.status.state).toBe(
      'TASK_STATE_INPUT_REQUIRED',
    )
    const replacing = {
      ...v1Message('blue', { taskId }),
      configuration: { taskPushNotificationConfig: { url: `${receiver.url}?turn=2`, id: 'first' } },
    }
    expect((await target.rpc('SendMessage', replacing, { headers: V1 })).body.result.task.status.state).toBe(
      'TASK_STATE_COMPLETED',
    )
    // The second turn's updates (working, artifact, completed) all go to the replaced URL, the last one last.
    const last = () => receiver.delivered.at(-1)
    await expect
      .poll(() => [last()?.path, last()?.body.statusUpdate?.status.state])
      .toEqual(['/hook?turn=2', 'TASK_STATE_COMPLETED'])
    expect(receiver.delivered.slice(-3).map((d) => d.path)).toEqual(['/hook?turn=2', '/hook?turn=2', '/hook?turn=2'])
    // A follow-up the task refuses (it has ended) leaves no webhook behind.
    await target.rpc('DeleteTaskPushNotificationConfig', { taskId, id: 'first' }, { headers: V1 })
    const late = {
      ...v1Message('again', { taskId }),
      configuration: { taskPushNotificationConfig: { url: receiver.url, id: 'late' } },
    }
    expect((await target.rpc('SendMessage', late, { headers: V1 })).body.error.code).toBe(-32004)
    expect(
      (await target.rpc('ListTaskPushNotificationConfigs', { taskId }, { headers: V1 })).body.result.configs,
    ).toEqual([])
  })

  it('retries a webhook that answers 503 with backoff, and still delivers in order', async () => {
    const receiver = await startReceiver((n) => (n < 2 ? 503 : 200))
    const target = await transport.start(pushEcho, { push: LOOPBACK })
    await target.rpc(
      'SendMessage',
      { ...v1Message('x'), configuration: { taskPushNotificationConfig: { url: receiver.url } } },
      { headers: V1 },
    )
    await expect.poll(() => receiver.delivered.length).toBe(4)
    expect(receiver.attempts.length).toBe(6)
    expect(receiver.delivered.map((d) => Object.keys(d.body)[0])).toEqual([
      'statusUpdate',
      'statusUpdate',
      'artifactUpdate',
      'statusUpdate',
    ])
    expect(receiver.delivered[0]!.body.statusUpdate.status.state).toBe('TASK_STATE_WORKING')
  })

  it('does not retry a 4xx answer, logs the failure without the secrets or the path, and goes on with the next update', async () => {
    const receiver = await startReceiver((n) => (n === 0 ? 400 : 200))
    const target = await transport.start(pushEcho, { push: LOOPBACK })
    const url = `${receiver.url}/secret-path-segment?key=query-secret`
    const webhook = {
      url,
      token: 'token-secret',
      authentication: { scheme: 'Bearer', credentials: 'credential-secret' },
    }
    await target.rpc(
      'SendMessage',
      { ...v1Message('x'), configuration: { taskPushNotificationConfig: webhook } },
      { headers: V1 },
    )
    await expect.poll(() => receiver.delivered.length).toBe(3)
    expect(receiver.attempts.length).toBe(4)
    const warnings = target.logger.text('warn')
    expect(warnings).toMatch(/not delivered after 1 attempt: HTTP 400/)
    for (const secret of ['secret-path-segment', 'query-secret', 'token-secret', 'credential-secret'])
      expect(JSON.stringify(target.logger.lines)).not.toContain(secret)
  })

  it('never lets a webhook that does not answer hold up its task or other tasks', async () => {
    const stuck = await startReceiver(() => 'hang')
    const healthy = await startReceiver()
    // The stuck webhook's attempt outlives the test: everything below happens while it still holds it.
    const target = await transport.start(pushEcho, { push: { ...LOOPBACK, timeoutMs: 120_000, retries: 0 } })
    const slow = await target.rpc(
      'SendMessage',
      { ...v1Message('a'), configuration: { taskPushNotificationConfig: { url: stuck.url } } },
      { headers: V1 },
    )
    expect(slow.body.result.task.status.state).toBe('TASK_STATE_COMPLETED')
    const fast = await target.rpc(
      'SendMessage',
      { ...v1Message('b'), configuration: { taskPushNotificationConfig: { url: healthy.url } } },
      { headers: V1 },
    )
    expect(fast.body.result.task.status.state).toBe('TASK_STATE_COMPLETED')
    await expect.poll(() => healthy.delivered.length).toBe(4)
    expect(stuck.attempts.length).toBe(1)
    expect(stuck.delivered).toEqual([])
  })

  it("never lets a task's slow webhook hold up its other webhooks", async () => {
    const stuck = await startReceiver(() => 'hang')
    const healthy = await startReceiver()
    // The stuck webhook's attempt outlives the test: everything below happens while it still holds it.
    const target = await transport.start(twoTurns, { push: { ...LOOPBACK, timeoutMs: 120_000, retries: 0 } })
    const taskId = (await target.rpc('SendMessage', v1Message('start'), { headers: V1 })).body.result.task.id
    await target.rpc('CreateTaskPushNotificationConfig', { taskId, id: 'stuck', url: stuck.url }, { headers: V1 })
    await target.rpc('CreateTaskPushNotificationConfig', { taskId, id: 'healthy', url: healthy.url }, { headers: V1 })
    await target.rpc('SendMessage', v1Message('blue', { taskId }), { headers: V1 })
    await expect.poll(() => healthy.delivered.at(-1)?.body.statusUpdate?.status.state).toBe('TASK_STATE_COMPLETED')
    expect(healthy.delivered.map((d) => Object.keys(d.body)[0])).toEqual([
      'statusUpdate',
      'artifactUpdate',
      'statusUpdate',
    ])
    expect(stuck.attempts.length).toBe(1)
    expect(stuck.delivered).toEqual([])
  })

  it('starts the task only once its webhook is saved, so the webhook hears the first update', async () => {
    const receiver = await startReceiver()
    const gate = deferred()
    const gated = agent(async (_ctx, task) => {
      await gate.promise
      task.complete()
    }, withPush)
    const target = await transport.start(gated, { push: LOOPBACK })
    const params = {
      ...v1Message('x'),
      configuration: { taskPushNotificationConfig: { url: receiver.url }, returnImmediately: true },
    }
    const taskId = (await target.rpc('SendMessage', params, { headers: V1 })).body.result.task.id
    await expect.poll(() => receiver.delivered.length).toBe(1)
    expect(receiver.delivered[0]!.body.statusUpdate).toMatchObject({ taskId, status: { state: 'TASK_STATE_WORKING' } })
    gate.resolve()
    await expect.poll(() => receiver.delivered.length).toBe(2)
  })
})

describe.each(transports)('push notifications not declared ($name)', (transport) => {
  it('answers -32003 to every config method and to a webhook given with a message, in each dialect', async () => {
    const target = await transport.start(echoAgent)
    const calls: Array<[string, object, Record<string, string>]> = [
      ['CreateTaskPushNotificationConfig', { taskId: 't', url: 'https://example.com/hook' }, V1],
      ['GetTaskPushNotificationConfig', { taskId: 't', id: 'c' }, V1],
      ['ListTaskPushNotificationConfigs', { taskId: 't' }, V1],
      ['DeleteTaskPushNotificationConfig', { taskId: 't', id: 'c' }, V1],
      [
        'SendMessage',
        { ...v1Message('x'), configuration: { taskPushNotificationConfig: { url: 'https://example.com/hook' } } },
        V1,
      ],
      [
        'tasks/pushNotificationConfig/set',
        { taskId: 't', pushNotificationConfig: { url: 'https://example.com/hook' } },
        V03,
      ],
      ['tasks/pushNotificationConfig/get', { id: 't' }, V03],
      [
        'message/send',
        { ...slashMessage('x'), configuration: { pushNotificationConfig: { url: 'https://example.com/hook' } } },
        V03,
      ],
      [
        'message/send',
        { ...slashMessage('x'), configuration: { pushNotificationConfig: { url: 'https://example.com/hook' } } },
        {},
      ],
    ]
    for (const [method, params, headers] of calls) {
      expect((await target.rpc(method, params, { headers })).body.error?.code, method).toBe(-32003)
    }
    expect((await target.rpc('ListTasks', {}, { headers: V1 })).body.result.tasks).toEqual([])
  })
})

/**
 * Webhooks kept apart from the tasks, as a store that instances share keeps them (so the runtime reads them
 * afresh for a task's final update); once a webhook is saved, each read waits until the test lets it through.
 */
class HeldConfigs implements PushConfigStore {
  readonly #configs = new Map<string, PushConfig>()
  readonly waiting: Array<() => void> = []
  #holding = false

  save(config: PushConfig): void {
    this.#configs.set(`${config.taskId} ${config.id}`, config)
    this.#holding = true
  }

  async list(taskId: string): Promise<PushConfig[]> {
    if (this.#holding) await new Promise<void>((resolve) => this.waiting.push(resolve))
    return [...this.#configs.values()].filter((config) => config.taskId === taskId)
  }

  delete(taskId: string, id: string): boolean {
    return this.#configs.delete(`${taskId} ${id}`)
  }

  release(): void {
    this.waiting.shift()!()
  }
}

function sharingWebhooks(tasks: TaskStore, pushConfigs: PushConfigStore): TaskStore {
  return {
    get: (taskId) => tasks.get(taskId),
    create: (task) => tasks.create(task),
    append: (task, event) => tasks.append(task, event),
    events: (taskId, afterSeq) => tasks.events(taskId, afterSeq),
    list: (query) => tasks.list(query),
    close: () => tasks.close?.(),
    pushConfigs,
  }
}

/**
 * A webhook, in plain TCP, that answers each request `Connection: close` and counts the answers the runtime
 * has read to their end. The runtime's HTTP client shuts its side of such a connection when the answer ends,
 * in the same turn as the delivery sees that end (the rest of the delivery, and of its lane, runs as
 * microtasks right after): so once this side hears the shutdown, that delivery and its lane are over. (An
 * HTTP server would close its own side first, which proves nothing about the runtime.)
 */
async function startClosingReceiver() {
  const states: string[] = []
  let answersRead = 0
  const sockets = new Set<Socket>()
  const server = createNetServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    let received = Buffer.alloc(0)
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      const headEnd = received.indexOf('\r\n\r\n')
      if (headEnd === -1) return
      const length = Number(/content-length:\s*(\d+)/i.exec(received.subarray(0, headEnd).toString('latin1'))?.[1] ?? 0)
      const body = received.subarray(headEnd + 4)
      if (body.length < length) return
      states.push(JSON.parse(body.subarray(0, length).toString('utf8')).status.state)
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')
    })
    socket.on('end', () => {
      answersRead++
      socket.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    states,
    answersRead: () => answersRead,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

describe('push notifications with webhooks in a shared store', () => {
  it('posts an ended task once to a whole-Task webhook when its final update arrives after an earlier post carried it', async () => {
    const receiver = await startClosingReceiver()
    const configs = new HeldConfigs()
    const app = createA2AApp(pushEcho, {
      store: sharingWebhooks(createMemoryStore(), configs),
      push: LOOPBACK,
      logger: captureLogger(),
    })
    try {
      const params = { ...slashMessage('hi'), configuration: { pushNotificationConfig: { url: receiver.url } } }
      const request = { jsonrpc: '2.0', id: 1, method: 'message/send', params }
      const answer = await app.fetch(
        new Request('http://agent.test/', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...V03 },
          body: JSON.stringify(request),
        }),
      )
      expect((await answer.json()).result.status.state).toBe('completed')
      // The first update's read of the webhooks: by now the task has ended, so its Task post shows it completed.
      await expect.poll(() => configs.waiting.length).toBe(1)
      configs.release()
      await expect.poll(() => receiver.states).toEqual(['completed'])
      // The final update's fresh read, let through only once the runtime has read the webhook's whole answer,
      // so the webhook's lane has run dry by then and the final update starts a new one.
      await expect.poll(() => configs.waiting.length).toBe(1)
      await expect.poll(() => receiver.answersRead()).toBe(1)
      configs.release()
    } finally {
      // Waits for every queued notification.
      await app.close()
      await receiver.close()
    }
    expect(receiver.states).toEqual(['completed'])
  })
})
