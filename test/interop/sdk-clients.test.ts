import { Role, TaskState } from '@a2a-js/sdk'
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client'
import { TaskNotCancelableError, TaskNotFoundError } from '@a2a-js/sdk/errors'
import { type A2AAppOptions, type Agent, defineAgent } from 'a2a-runtime'
import { A2AClient as A2AClientV03, ClientFactory as ClientFactoryV03 } from 'a2a-sdk-v03/client'
import { describe, expect, it } from 'vitest'
import { expectFollowUp, expectSendAndStream, pause, sdkTestAgent, v1Message, v1Text } from '../_sdk-v1.ts'
import { nodeServer } from '../runtime/_transports.ts'
import { startReceiver } from '../runtime/_webhook.ts'

/**
 * The official @a2a-js/sdk clients (1.x speaking A2A v1.0, 0.3.x speaking v0.3) against the runtime over real
 * HTTP, each finding the agent through its own card discovery — while the platform dialect keeps answering on
 * the same server.
 */

/** Like a generated agent: progress, an answer in chunks, a question on "ask", long work on "wait". */
const agent = (card: Partial<Agent['card']> = {}): Agent =>
  sdkTestAgent(
    { name: 'Interop Agent', description: 'Talks to the official A2A SDK clients', ...card },
    { waitMs: 10_000, chunkPauseMs: 5 },
  )

const start = (options: A2AAppOptions = {}, card?: Partial<Agent['card']>) => nodeServer.start(agent(card), options)

// --- A2A v1.0 (@a2a-js/sdk 1.x) ---------------------------------------------------------------------------

const v1Client = (url: string) =>
  new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory()] }),
  ).createFromUrl(url)

describe('@a2a-js/sdk 1.x (A2A v1.0)', () => {
  it('discovers the card, sends, streams, gets and lists', async () => {
    const target = await start()
    const client = await v1Client(target.url)
    const sent = await expectSendAndStream(client)

    const got: any = await client.getTask({ tenant: '', id: sent.id, historyLength: 5 })
    expect(got.id).toBe(sent.id)
    const listed: any = await client.listTasks({
      tenant: '',
      contextId: '',
      status: 0,
      pageSize: 10,
      pageToken: '',
      historyLength: 0,
      statusTimestampAfter: undefined,
      includeArtifacts: false,
    } as any)
    expect(listed.tasks.map((task: any) => task.id)).toContain(sent.id)
  })

  it('cancels a running task, and gets TaskNotCancelable for a finished one', async () => {
    const target = await start()
    const client = await v1Client(target.url)
    const running: any = await client.sendMessage({
      ...v1Message('wait'),
      configuration: {
        acceptedOutputModes: [],
        historyLength: undefined,
        returnImmediately: true,
        taskPushNotificationConfig: undefined,
      } as any,
    })
    const canceled: any = await client.cancelTask({ tenant: '', id: running.id, metadata: {} })
    expect(canceled.status.state).toBe(TaskState.TASK_STATE_CANCELED)
    await expect(client.cancelTask({ tenant: '', id: running.id, metadata: {} })).rejects.toThrow(/cannot be canceled/)
  })

  it('sets a push config with authentication, and the webhook gets each update with its Authorization and token', async () => {
    // Closed after the test by the receiver's own hook.
    const receiver = await startReceiver()
    const target = await start(
      { push: { allow: ['127.0.0.1'], allowHttp: true } },
      { capabilities: { streaming: true, pushNotifications: true } },
    )
    const client = await v1Client(target.url)
    const running: any = await client.sendMessage({
      ...v1Message('wait'),
      configuration: {
        acceptedOutputModes: [],
        historyLength: undefined,
        returnImmediately: true,
        taskPushNotificationConfig: undefined,
      } as any,
    })
    const config = await client.createTaskPushNotificationConfig({
      tenant: '',
      id: 'sdk-hook',
      taskId: running.id,
      url: receiver.url,
      token: 'sdk-token',
      authentication: { scheme: 'Bearer', credentials: 'sdk-secret' },
    })
    expect(config).toMatchObject({ id: 'sdk-hook', taskId: running.id, url: receiver.url })
    await client.cancelTask({ tenant: '', id: running.id, metadata: {} })
    await expect
      .poll(
        () => receiver.delivered.some((delivery) => JSON.stringify(delivery.body).includes('TASK_STATE_CANCELED')),
        { timeout: 10_000 },
      )
      .toBe(true)
    for (const delivery of receiver.delivered) {
      expect(delivery.headers.authorization).toBe('Bearer sdk-secret')
      expect(delivery.headers['x-a2a-notification-token']).toBe('sdk-token')
    }
  })

  it('gets TaskNotCancelable from an agent without cancel, and the task runs on', async () => {
    const stubborn = defineAgent({
      card: { name: 'No Cancel', description: 'Cannot be stopped once started' },
      async execute(ctx, task) {
        await pause(150)
        task.artifact(`done ${ctx.text}`)
        task.complete()
      },
    })
    const target = await nodeServer.start(stubborn)
    const client = await v1Client(target.url)
    const running: any = await client.sendMessage({
      ...v1Message('x'),
      configuration: { acceptedOutputModes: [], returnImmediately: true } as any,
    })
    await expect(client.cancelTask({ tenant: '', id: running.id, metadata: {} })).rejects.toThrow(
      /does not support cancellation/,
    )
    await expect
      .poll(async () => ((await client.getTask({ tenant: '', id: running.id })) as any).status.state)
      .toBe(TaskState.TASK_STATE_COMPLETED)
  })

  it('resumes an input-required task with a follow-up naming it', async () => {
    const target = await start()
    const client = await v1Client(target.url)
    await expectFollowUp(client)
  })

  it('resubscribes to a running task and follows it to the end', async () => {
    const target = await start()
    const client = await v1Client(target.url)
    const running: any = await client.sendMessage({
      ...v1Message('wait'),
      configuration: { acceptedOutputModes: [], returnImmediately: true } as any,
    })
    const events: any[] = []
    const following = (async () => {
      for await (const event of client.resubscribeTask({ tenant: '', id: running.id })) events.push(event)
    })()
    await expect.poll(() => events.length).toBeGreaterThan(0)
    await client.cancelTask({ tenant: '', id: running.id, metadata: {} })
    await following
    expect(events[0].payload.$case).toBe('task')
    expect(events.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_CANCELED)
  })

  it('resubscribes to an input-required task and follows it through the follow-up another client sends, to completion', async () => {
    const target = await start()
    const client = await v1Client(target.url)
    const question: any = await client.sendMessage(v1Message('ask'))
    expect(question.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    const events: any[] = []
    const following = (async () => {
      for await (const event of client.resubscribeTask({ tenant: '', id: question.id })) events.push(event)
    })()
    await expect.poll(() => events.length).toBeGreaterThan(0)
    const answer: any = await (await v1Client(target.url)).sendMessage(v1Message('Oslo', question.id))
    expect(answer.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
    await following
    const seen = events.map(({ payload }) =>
      payload.$case === 'artifactUpdate' ? 'artifact' : `${payload.$case}:${payload.value.status.state}`,
    )
    expect(seen).toEqual([
      `task:${TaskState.TASK_STATE_INPUT_REQUIRED}`,
      `statusUpdate:${TaskState.TASK_STATE_WORKING}`,
      `statusUpdate:${TaskState.TASK_STATE_WORKING}`,
      'artifact',
      'artifact',
      `statusUpdate:${TaskState.TASK_STATE_COMPLETED}`,
    ])
    expect(
      events
        .filter(({ payload }) => payload.$case === 'artifactUpdate')
        .map(({ payload }) => payload.value.artifact.parts[0].content.value)
        .join(''),
    ).toBe('Echo: Oslo')
  })

  it('sends the bearer token it is given, and is refused without it', async () => {
    const target = await start(
      { auth: { bearerTokens: ['interop-token'] } },
      { authentication: { schemes: ['bearer'] } },
    )
    const client = await v1Client(target.url)
    await expect(client.sendMessage(v1Message('hi'))).rejects.toThrow()
    const sent: any = await client.sendMessage(v1Message('hi'), {
      serviceParameters: { Authorization: 'Bearer interop-token' },
    })
    expect(sent.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
  })
})

// --- A2A v1.0 over HTTP+JSON (@a2a-js/sdk 1.x, RestTransportFactory) ------------------------------------------

const restClient = (url: string) =>
  new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new RestTransportFactory()],
      preferredTransports: ['HTTP+JSON'],
    }),
  )
    .createFromUrl(url)
    .then((client) => {
      // Over HTTP+JSON, not the card's first interface (JSON-RPC), which the default options also take.
      expect((client as any).transport.protocolName).toBe('HTTP+JSON')
      return client
    })

const returningAtOnce = { acceptedOutputModes: [], returnImmediately: true } as any

describe('@a2a-js/sdk 1.x over HTTP+JSON (A2A v1.0 REST)', () => {
  it("picks the card's HTTP+JSON interface, then sends, streams, gets, lists, resumes and cancels", async () => {
    const target = await start()
    const client = await restClient(target.url)
    const sent = await expectSendAndStream(client)

    const got: any = await client.getTask({ tenant: '', id: sent.id, historyLength: 1 })
    expect(got.id).toBe(sent.id)
    expect(got.history).toHaveLength(1)
    await expect(client.getTask({ tenant: '', id: 'no-such-task' })).rejects.toBeInstanceOf(TaskNotFoundError)
    const listed: any = await client.listTasks({
      tenant: '',
      contextId: sent.contextId,
      status: TaskState.TASK_STATE_COMPLETED,
      pageSize: 10,
      pageToken: '',
      historyLength: 0,
      statusTimestampAfter: undefined,
      includeArtifacts: true,
    } as any)
    expect(listed.tasks.map((task: any) => task.id)).toEqual([sent.id])
    expect(v1Text(listed.tasks[0])).toBe('Echo: hello')

    const question: any = await client.sendMessage(v1Message('ask'))
    expect(question.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    const answer: any = await client.sendMessage(v1Message('Oslo', question.id))
    expect(v1Text(answer)).toBe('Echo: Oslo')

    const running: any = await client.sendMessage({ ...v1Message('wait'), configuration: returningAtOnce })
    const followed: any[] = []
    const following = (async () => {
      for await (const event of client.resubscribeTask({ tenant: '', id: running.id })) followed.push(event)
    })()
    await expect.poll(() => followed.length).toBeGreaterThan(0)
    const canceled: any = await client.cancelTask({ tenant: '', id: running.id, metadata: {} })
    expect(canceled.status.state).toBe(TaskState.TASK_STATE_CANCELED)
    await following
    expect(followed[0].payload.$case).toBe('task')
    expect(followed.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_CANCELED)
    await expect(client.cancelTask({ tenant: '', id: running.id, metadata: {} })).rejects.toBeInstanceOf(
      TaskNotCancelableError,
    )
  })

  it('creates, gets, lists and deletes push configs, and the webhook receives the updates', async () => {
    const receiver = await startReceiver()
    const target = await start(
      { push: { allow: ['127.0.0.1'], allowHttp: true } },
      { capabilities: { streaming: true, pushNotifications: true } },
    )
    const client = await restClient(target.url)
    const running: any = await client.sendMessage({ ...v1Message('wait'), configuration: returningAtOnce })
    const config = await client.createTaskPushNotificationConfig({
      tenant: '',
      id: 'rest-hook',
      taskId: running.id,
      url: receiver.url,
      token: 'rest-token',
      authentication: undefined,
    })
    expect(config).toMatchObject({ id: 'rest-hook', taskId: running.id, url: receiver.url, token: 'rest-token' })
    const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: running.id, id: 'rest-hook' })
    expect(got).toMatchObject({ id: 'rest-hook', url: receiver.url })
    const listed = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: running.id,
      pageSize: 0,
      pageToken: '',
    })
    expect(listed.configs.map((entry) => entry.id)).toEqual(['rest-hook'])
    await client.cancelTask({ tenant: '', id: running.id, metadata: {} })
    await expect
      .poll(() => receiver.delivered.some((delivery) => JSON.stringify(delivery.body).includes('TASK_STATE_CANCELED')))
      .toBe(true)
    expect(receiver.delivered[0]!.headers['x-a2a-notification-token']).toBe('rest-token')
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: running.id, id: 'rest-hook' })
    const after = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: running.id,
      pageSize: 0,
      pageToken: '',
    })
    expect(after.configs).toEqual([])
  })

  it('fetches the extended card with its credential, reaches the agent under a tenant, and is refused without one', async () => {
    const target = await start(
      { auth: { apiKeys: ['rest-interop-key'] } },
      {
        authentication: { schemes: ['apiKey'] },
        extendedCard: { skills: [{ id: 'bulk', name: 'Bulk', description: 'Many at once', tags: ['bulk'] }] },
      },
    )
    const client = await restClient(target.url)
    const key = { serviceParameters: { 'X-API-Key': 'rest-interop-key' } }
    await expect(client.sendMessage(v1Message('hi'))).rejects.toThrow()
    const card: any = await client.getAgentCard(key)
    expect(card.skills.map((skill: any) => skill.id)).toEqual(['echo', 'bulk'])
    const tenanted: any = await client.sendMessage({ ...v1Message('hi'), tenant: 'acme' }, key)
    expect(v1Text(tenanted)).toBe('Echo: hi')
    const got: any = await client.getTask({ tenant: 'acme', id: tenanted.id }, key)
    expect(got.id).toBe(tenanted.id)
  })
})

// --- A2A v0.3 (@a2a-js/sdk 0.3.x) -------------------------------------------------------------------------

const v03Message = (text: string, taskId?: string) => ({
  message: {
    kind: 'message' as const,
    messageId: crypto.randomUUID(),
    role: 'user' as const,
    parts: [{ kind: 'text' as const, text }],
    ...(taskId && { taskId }),
  },
})
const v03Text = (task: any) =>
  task.artifacts.flatMap((artifact: any) => artifact.parts.map((part: any) => part.text)).join('')

/** A 0.3 client whose requests say A2A-Version: 0.3, as the server needs when its default dialect is the platform's. */
const declaringFetch: typeof fetch = (input, init) =>
  fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'A2A-Version': '0.3' } })

describe.each([
  ['an agent in the a2a-0.3 dialect', { dialect: 'a2a-0.3' } as A2AAppOptions, fetch],
  ['a platform-dialect agent, the client saying A2A-Version: 0.3', {} as A2AAppOptions, declaringFetch],
])('@a2a-js/sdk 0.3.x against %s', (_label, options, fetchImpl) => {
  const client = (url: string) => A2AClientV03.fromCardUrl(`${url}.well-known/agent-card.json`, { fetchImpl })

  it('sends, streams, gets, cancels and resubscribes', async () => {
    const target = await start(options)
    const a2a = await client(target.url)
    const sent: any = await a2a.sendMessage(v03Message('hello'))
    expect(sent.result.kind).toBe('task')
    expect(sent.result.status.state).toBe('completed')
    expect(v03Text(sent.result)).toBe('Echo: hello')

    const events: any[] = []
    for await (const event of a2a.sendMessageStream(v03Message('streamed words'))) events.push(event)
    expect(events[0].kind).toBe('task')
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } })

    const got: any = await a2a.getTask({ id: sent.result.id })
    expect(got.result.id).toBe(sent.result.id)
    const missing: any = await a2a.getTask({ id: 'no-such-task' })
    expect(missing.error.code).toBe(-32001)

    const running: any = await a2a.sendMessage({ ...v03Message('wait'), configuration: { blocking: false } } as any)
    const followed: any[] = []
    const following = (async () => {
      for await (const event of a2a.resubscribeTask({ id: running.result.id })) followed.push(event)
    })()
    await expect.poll(() => followed.length).toBeGreaterThan(0)
    const canceled: any = await a2a.cancelTask({ id: running.result.id })
    expect(canceled.result.status.state).toBe('canceled')
    await following
    expect(followed.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'canceled' } })
    const late: any = await a2a.cancelTask({ id: running.result.id })
    expect(late.error.code).toBe(-32002)
  })

  it('sends a bearer token through its fetch, and is refused without it', async () => {
    const target = await start(
      { ...options, auth: { bearerTokens: ['v03-token'] } },
      { authentication: { schemes: ['bearer'] } },
    )
    const withToken: typeof fetch = (input, init) =>
      fetchImpl(input, {
        ...init,
        headers: { ...(init?.headers as Record<string, string>), Authorization: 'Bearer v03-token' },
      })
    const refused = await A2AClientV03.fromCardUrl(`${target.url}.well-known/agent-card.json`, { fetchImpl })
    const denied: any = await refused.sendMessage(v03Message('hi'))
    expect(denied.error).toMatchObject({ code: -32000, message: expect.stringMatching(/Unauthorized/) })
    const allowed = await A2AClientV03.fromCardUrl(`${target.url}.well-known/agent-card.json`, { fetchImpl: withToken })
    const sent: any = await allowed.sendMessage(v03Message('hi'))
    expect(sent.result.status.state).toBe('completed')
  })

  it('resubscribes to an input-required task and follows it through the follow-up another client sends, to completion', async () => {
    const target = await start(options)
    const a2a = await client(target.url)
    const question: any = await a2a.sendMessage(v03Message('ask'))
    expect(question.result.status.state).toBe('input-required')
    const followed: any[] = []
    const following = (async () => {
      for await (const event of a2a.resubscribeTask({ id: question.result.id })) followed.push(event)
    })()
    await expect.poll(() => followed.length).toBeGreaterThan(0)
    const answer: any = await (await client(target.url)).sendMessage(v03Message('Lima', question.result.id))
    expect(answer.result.status.state).toBe('completed')
    await following
    expect(
      followed.map((event) => (event.kind === 'artifact-update' ? 'artifact' : `${event.kind}:${event.status.state}`)),
    ).toEqual([
      'task:input-required',
      'status-update:working',
      'status-update:working',
      'artifact',
      'artifact',
      'status-update:completed',
    ])
    expect(followed.at(-1)).toMatchObject({ final: true })
  })

  it('resumes an input-required task through message.taskId', async () => {
    const target = await start(options)
    const a2a = await client(target.url)
    const question: any = await a2a.sendMessage(v03Message('ask'))
    expect(question.result.status.state).toBe('input-required')
    const answer: any = await a2a.sendMessage(v03Message('Lima', question.result.id))
    expect(answer.result.status.state).toBe('completed')
    expect(v03Text(answer.result)).toBe('Echo: Lima')
  })
})

/**
 * A default agent's slash-named methods speak the platform dialect, whose streams are notifications: a v0.3 client
 * that does not say A2A-Version: 0.3 would get them and fail ("JSON-RPC response ID mismatch in SSE event"). The
 * card it reads there claims only what it is served: v0.3 without streaming.
 */
describe('@a2a-js/sdk 0.3.x against a default agent, without A2A-Version', () => {
  const cardUrl = (url: string) => `${url}.well-known/agent-card.json`

  it("follows the card's url to POST /v0.3, where it sends, gets, cancels, streams and resubscribes", async () => {
    const target = await start()
    const a2a = await A2AClientV03.fromCardUrl(cardUrl(target.url))
    const card: any = await a2a.getAgentCard()
    expect(card).toMatchObject({
      protocolVersion: '0.3.0',
      url: `${target.url}v0.3`,
      capabilities: { streaming: true },
    })

    const sent: any = await a2a.sendMessage(v03Message('hello'))
    expect(sent.result).toMatchObject({ kind: 'task', status: { state: 'completed' } })
    expect(v03Text(sent.result)).toBe('Echo: hello')
    expect(((await a2a.getTask({ id: sent.result.id })) as any).result.id).toBe(sent.result.id)

    const running: any = await a2a.sendMessage({ ...v03Message('wait'), configuration: { blocking: false } } as any)
    expect(((await a2a.cancelTask({ id: running.result.id })) as any).result.status.state).toBe('canceled')

    const events: any[] = []
    for await (const event of a2a.sendMessageStream(v03Message('streamed words'))) events.push(event)
    expect(events[0]).toMatchObject({ kind: 'task' })
    expect(events.filter((event) => event.kind === 'artifact-update').length).toBeGreaterThan(1)
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } })

    const asked: any = await a2a.sendMessage(v03Message('ask'))
    expect(asked.result.status.state).toBe('input-required')
    const followed: any[] = []
    const following = (async () => {
      for await (const event of a2a.resubscribeTask({ id: asked.result.id })) followed.push(event)
    })()
    await expect.poll(() => followed.length).toBeGreaterThan(0)
    await a2a.sendMessage(v03Message('Paris', asked.result.id))
    await following
    expect(followed.at(-1)).toMatchObject({ kind: 'status-update', status: { state: 'completed' } })
  })

  it("the 0.3 ClientFactory's sendMessageStream gets the task, its chunks and the end", async () => {
    const target = await start()
    const client = await new ClientFactoryV03().createFromUrl(target.url)
    const events: any[] = []
    for await (const event of client.sendMessageStream(v03Message('streamed words'))) events.push(event)
    expect(events[0]).toMatchObject({ kind: 'task' })
    const text = events
      .filter((event) => event.kind === 'artifact-update')
      .flatMap((event) => event.artifact.parts.map((part: any) => part.text))
      .join('')
    expect(text).toBe('Echo: streamed words')
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } })
  })

  it('POST / keeps the platform dialect for the same method names (its notifications on a stream)', async () => {
    const target = await start()
    const response = await target.fetch('/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/stream', params: v03Message('hi') }),
    })
    const text = await response.text()
    expect(text).toContain('"method":"tasks/statusUpdate"')
    expect(text).not.toContain('"kind":"task"')
  })

  it('an agent whose slash-named methods speak v0.3 gives its root as the v0.3 address', async () => {
    const target = await start({ dialect: 'a2a-0.3' })
    const card = await (await target.fetch('/.well-known/agent-card.json')).json()
    expect(card).toMatchObject({ url: target.url, capabilities: { streaming: true } })
  })
})

describe('one server, three dialects', () => {
  it('answers the platform dialect, v1.0 and v0.3 at the same time', async () => {
    const target = await start()
    const platform = await target.rpc('message/send', {
      message: { role: 'user', messageId: 'm', parts: [{ kind: 'text', text: 'platform' }] },
    })
    expect(platform.body.result).toMatchObject({ kind: 'task', status: { state: 'completed' } })
    const v1: any = await (await v1Client(target.url)).sendMessage(v1Message('v1'))
    expect(v1Text(v1)).toBe('Echo: v1')
    const v03: any = await (
      await A2AClientV03.fromCardUrl(`${target.url}.well-known/agent-card.json`, { fetchImpl: declaringFetch })
    ).sendMessage(v03Message('v03'))
    expect(v03Text(v03.result)).toBe('Echo: v03')
    const notFound = await target.rpc('tasks/get', { id: 'nope' })
    expect(notFound.body.error).toEqual({ code: -32602, message: 'Task not found' })
  })
})

describe('an agent that answers with a message (task.reply), to the official clients', () => {
  const replier = defineAgent({
    card: {
      name: 'Replier',
      description: 'Answers with a message',
      skills: [{ id: 'hi', name: 'Hi', description: 'Says hello', tags: ['hi'] }],
    },
    messageReplies: true,
    execute: (ctx, task) => task.reply(`Hello, ${ctx.text}`),
  })

  it('@a2a-js/sdk 1.x: sendMessage resolves to the Message, and sendMessageStream yields it as its one event', async () => {
    const target = await nodeServer.start(replier)
    const client = await v1Client(target.url)
    const sent: any = await client.sendMessage(v1Message('Ada'))
    expect(sent.role).toBe(Role.ROLE_AGENT)
    expect(sent.parts.map((part: any) => part.content.value)).toEqual(['Hello, Ada'])
    expect(sent.status).toBeUndefined()

    const events: any[] = []
    for await (const event of client.sendMessageStream(v1Message('Bo'))) events.push(event)
    expect(events.map((event) => event.payload.$case)).toEqual(['message'])
    expect(events[0].payload.value.parts[0].content.value).toBe('Hello, Bo')
  })

  it('@a2a-js/sdk 0.3.x: sendMessage answers with a message result, and sendMessageStream yields it as its one event', async () => {
    const target = await nodeServer.start(replier, { dialect: 'a2a-0.3' })
    const a2a = await A2AClientV03.fromCardUrl(`${target.url}.well-known/agent-card.json`)
    const sent: any = await a2a.sendMessage(v03Message('Cy'))
    expect(sent.result).toMatchObject({ kind: 'message', role: 'agent', parts: [{ kind: 'text', text: 'Hello, Cy' }] })

    const events: any[] = []
    for await (const event of a2a.sendMessageStream(v03Message('Di'))) events.push(event)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ kind: 'message', role: 'agent', parts: [{ kind: 'text', text: 'Hello, Di' }] })
  })
})
