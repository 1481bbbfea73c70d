import { TaskState } from '@a2a-js/sdk'
import { GRPC_STATUS_CODE } from '@a2a-js/sdk/errors/grpc'
import { status } from '@grpc/grpc-js'
import { createA2AApp, createMemoryStore } from 'a2a-runtime'
import { serveGrpc } from 'a2a-runtime/grpc'
import { describe, expect, it } from 'vitest'
import { expectFollowUp, expectSendAndStream, v1Message } from '../_sdk-v1.ts'
import { errorInfoOf, grpcAgent, grpcClient, protoMessage, rawClient, serveWithGrpc, unaryCall } from './_grpc.ts'
import { captureLogger } from './_logger.ts'
import { startReceiver } from './_webhook.ts'

/**
 * The A2A v1.0 gRPC binding (§10) beside the HTTP server in the same process: the official SDK 1.x client for every
 * operation it has, found through the card; a raw grpc-js client for each status code and its ErrorInfo.
 */

const returnAtOnce = { acceptedOutputModes: [], returnImmediately: true } as any

describe('gRPC through the official SDK 1.x client', () => {
  it('the cards list the gRPC interface while it listens, and no longer once it is closed', async () => {
    const target = await serveWithGrpc(grpcAgent())
    const card = await (await fetch(`${target.url}.well-known/agent-card.json`)).json()
    expect(target.grpcAddress).toMatch(/^127\.0\.0\.1:\d+$/)
    expect(card.supportedInterfaces).toContainEqual({
      url: target.grpcAddress,
      protocolBinding: 'GRPC',
      protocolVersion: '1.0',
    })
  })

  it('sends, streams, gets and lists', async () => {
    const target = await serveWithGrpc(grpcAgent())
    const client = await grpcClient(target.url)
    const sent = await expectSendAndStream(client)
    const got: any = await client.getTask({ tenant: '', id: sent.id, historyLength: 5 })
    expect(got.id).toBe(sent.id)
    expect(Date.parse(got.status.timestamp)).toBeGreaterThan(0)
    const listed: any = await client.listTasks({
      tenant: '',
      contextId: '',
      status: 0,
      pageSize: 10,
      pageToken: '',
      historyLength: 0,
      statusTimestampAfter: undefined,
      includeArtifacts: true,
    } as any)
    expect(listed.tasks.map((task: any) => task.id)).toContain(sent.id)
    expect(listed.totalSize).toBe(2)
  })

  it('resumes an input-required task with a follow-up naming it', async () => {
    const target = await serveWithGrpc(grpcAgent())
    const client = await grpcClient(target.url)
    await expectFollowUp(client)
  })

  it('cancels a running task, and a finished one is FAILED_PRECONDITION TASK_NOT_CANCELABLE', async () => {
    const target = await serveWithGrpc(grpcAgent())
    const client = await grpcClient(target.url)
    const running: any = await client.sendMessage({ ...v1Message('wait'), configuration: returnAtOnce })
    const canceled: any = await client.cancelTask({ tenant: '', id: running.id, metadata: {} })
    expect(canceled.status.state).toBe(TaskState.TASK_STATE_CANCELED)
    const refused = await client.cancelTask({ tenant: '', id: running.id, metadata: {} }).catch((error) => error)
    expect(refused).toMatchObject({ name: 'TaskNotCancelableError', status: GRPC_STATUS_CODE.FAILED_PRECONDITION })
  })

  it('subscribes to a running task and follows it to its end', async () => {
    const target = await serveWithGrpc(grpcAgent())
    const client = await grpcClient(target.url)
    const running: any = await client.sendMessage({ ...v1Message('wait'), configuration: returnAtOnce })
    const events: any[] = []
    const following = (async () => {
      for await (const event of client.resubscribeTask({ tenant: '', id: running.id })) events.push(event)
    })()
    await expect.poll(() => events.length).toBeGreaterThan(0)
    await client.cancelTask({ tenant: '', id: running.id, metadata: {} })
    await following
    expect(events[0].payload.$case).toBe('task')
    expect(events.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_CANCELED)
    const finished = await (async () => {
      for await (const _ of client.resubscribeTask({ tenant: '', id: running.id })) return 'an event'
    })().catch((error) => error)
    expect(finished).toMatchObject({ name: 'UnsupportedOperationError', status: status.FAILED_PRECONDITION })
  })

  it('creates, gets, lists and deletes push configs, and the webhook gets the updates', async () => {
    const receiver = await startReceiver()
    const target = await serveWithGrpc(grpcAgent({ capabilities: { streaming: true, pushNotifications: true } }), {
      push: { allow: ['127.0.0.1'], allowHttp: true },
    })
    const client = await grpcClient(target.url)
    const running: any = await client.sendMessage({ ...v1Message('wait'), configuration: returnAtOnce })
    const config = await client.createTaskPushNotificationConfig({
      tenant: '',
      id: 'grpc-hook',
      taskId: running.id,
      url: receiver.url,
      token: 'grpc-token',
      authentication: { scheme: 'Bearer', credentials: 'grpc-secret' },
    })
    expect(config).toMatchObject({ id: 'grpc-hook', taskId: running.id, url: receiver.url, token: 'grpc-token' })
    expect(
      await client.getTaskPushNotificationConfig({ tenant: '', taskId: running.id, id: 'grpc-hook' }),
    ).toMatchObject({ id: 'grpc-hook', url: receiver.url })
    const listAll = { tenant: '', taskId: running.id, pageSize: 0, pageToken: '' }
    const listed: any = await client.listTaskPushNotificationConfig(listAll)
    expect(listed.configs.map((listedConfig: any) => listedConfig.id)).toEqual(['grpc-hook'])
    await client.cancelTask({ tenant: '', id: running.id, metadata: {} })
    await expect
      .poll(() => receiver.delivered.some((delivery) => JSON.stringify(delivery.body).includes('TASK_STATE_CANCELED')))
      .toBe(true)
    expect(receiver.delivered[0]!.headers.authorization).toBe('Bearer grpc-secret')
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: running.id, id: 'grpc-hook' })
    const after: any = await client.listTaskPushNotificationConfig(listAll)
    expect(after.configs).toEqual([])
  })

  it('gives the extended card to a caller whose x-api-key metadata the agent accepts, and refuses one without', async () => {
    const target = await serveWithGrpc(
      grpcAgent({
        authentication: { schemes: ['apiKey'] },
        extendedCard: {
          skills: [{ id: 'bulk', name: 'Bulk', description: 'Many at once', tags: ['bulk'] }],
        },
      }),
      { auth: { apiKeys: ['grpc-key-7f3c'] } },
    )
    const client = await grpcClient(target.url)
    // The client asks for the extended card (GetExtendedAgentCard) as the public one declares it.
    const card: any = await client.getAgentCard({ serviceParameters: { 'x-api-key': 'grpc-key-7f3c' } })
    expect(card.skills.map((skill: any) => skill.id)).toEqual(['echo', 'bulk'])
    expect(card.supportedInterfaces.map((entry: any) => entry.protocolBinding)).toContain('GRPC')
    const refused = await client.getAgentCard().catch((error) => error)
    expect(refused.status).toBe(status.UNAUTHENTICATED)
    const sent: any = await client.sendMessage(v1Message('hi'), {
      serviceParameters: { 'x-api-key': 'grpc-key-7f3c' },
    })
    expect(sent.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
  })
})

describe('gRPC status codes and their ErrorInfo', () => {
  it('NOT_FOUND TASK_NOT_FOUND, INVALID_ARGUMENT INVALID_PARAMS, FAILED_PRECONDITION VERSION_NOT_SUPPORTED', async () => {
    const target = await serveWithGrpc(grpcAgent())
    const client = rawClient(target.grpcAddress)
    const missing = await unaryCall(client, 'GetTask', { id: 'no-such-task' })
    expect(missing.error?.code).toBe(status.NOT_FOUND)
    expect(errorInfoOf(missing.error!)).toEqual({ reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org', metadata: {} })

    const noParts = await unaryCall(client, 'SendMessage', { message: { messageId: 'm1', role: 'ROLE_USER' } })
    expect(noParts.error?.code).toBe(status.INVALID_ARGUMENT)
    // The field as the request names it, as HTTP+JSON names it (JSON-RPC says `params.message.parts`).
    expect(noParts.error?.details).toBe('`message.parts` must be a non-empty array')
    expect(errorInfoOf(noParts.error!)?.reason).toBe('INVALID_PARAMS')

    const version = await unaryCall(client, 'SendMessage', { message: protoMessage('hi') }, { 'a2a-version': '0.3' })
    expect(version.error?.code).toBe(status.FAILED_PRECONDITION)
    expect(errorInfoOf(version.error!)?.reason).toBe('VERSION_NOT_SUPPORTED')
    const declared = await unaryCall(client, 'SendMessage', { message: protoMessage('hi') }, { 'a2a-version': '1.0' })
    expect(declared.response.task.status.state).toBe('TASK_STATE_COMPLETED')
  })

  it('FAILED_PRECONDITION VERSION_NOT_SUPPORTED without a2a-version (absent: 0.3, §3.6.2), as HTTP+JSON', async () => {
    const target = await serveWithGrpc(grpcAgent())
    const unversioned = rawClient(target.grpcAddress, { version: false })
    const missing = await unaryCall(unversioned, 'SendMessage', { message: protoMessage('hi') })
    expect(missing.error?.code).toBe(status.FAILED_PRECONDITION)
    expect(missing.error?.details).toMatch(/^A2A-Version is missing, .* gRPC speaks 1\.0/)
    expect(errorInfoOf(missing.error!)?.reason).toBe('VERSION_NOT_SUPPORTED')
    const stream = unversioned.SubscribeToTask({ id: 'any' })
    const refused = await new Promise<any>((resolve) => stream.on('error', resolve))
    expect(refused.code).toBe(status.FAILED_PRECONDITION)
    // Nothing ran: no task was made.
    const listed = await unaryCall(rawClient(target.grpcAddress), 'ListTasks', {})
    expect(listed.response.tasks ?? []).toEqual([])
  })

  it('FAILED_PRECONDITION for push and the extended card an agent does not declare, and for streams it turns off', async () => {
    const target = await serveWithGrpc(grpcAgent({ capabilities: { streaming: false } }))
    const client = rawClient(target.grpcAddress)
    const push = await unaryCall(client, 'ListTaskPushNotificationConfigs', { taskId: 't' })
    expect(push.error?.code).toBe(status.FAILED_PRECONDITION)
    expect(errorInfoOf(push.error!)?.reason).toBe('PUSH_NOTIFICATION_NOT_SUPPORTED')
    const card = await unaryCall(client, 'GetExtendedAgentCard', {})
    expect(card.error?.code).toBe(status.FAILED_PRECONDITION)
    expect(errorInfoOf(card.error!)?.reason).toBe('UNSUPPORTED_OPERATION')
    const stream = client.SendStreamingMessage({ message: protoMessage('hi') })
    const error = await new Promise<any>((resolve) => stream.on('error', resolve))
    expect(error.code).toBe(status.FAILED_PRECONDITION)
    expect(errorInfoOf(error)?.reason).toBe('UNSUPPORTED_OPERATION')
  })

  it('UNAUTHENTICATED without the credential or with a wrong one, in authorization metadata', async () => {
    const target = await serveWithGrpc(grpcAgent({ authentication: { schemes: ['bearer'] } }), {
      auth: { bearerTokens: ['grpc-token-91ad'] },
    })
    const client = rawClient(target.grpcAddress)
    for (const metadata of [{}, { authorization: 'Bearer wrong' }] as Array<Record<string, string>>) {
      const refused = await unaryCall(client, 'SendMessage', { message: protoMessage('hi') }, metadata)
      expect(refused.error?.code).toBe(status.UNAUTHENTICATED)
      expect(errorInfoOf(refused.error!)).toBeUndefined()
    }
    const sent = await unaryCall(
      client,
      'SendMessage',
      { message: protoMessage('hi') },
      { authorization: 'Bearer grpc-token-91ad' },
    )
    expect(sent.response.task.status.state).toBe('TASK_STATE_COMPLETED')
  })

  it('RESOURCE_EXHAUSTED past maxRunningTasks, and for a message over maxBodySize', async () => {
    const target = await serveWithGrpc(grpcAgent(), { maxRunningTasks: 1, maxBodySize: 4096 })
    const client = rawClient(target.grpcAddress)
    const running = await unaryCall(client, 'SendMessage', {
      message: protoMessage('wait'),
      configuration: { returnImmediately: true },
    })
    expect(running.response.task.status.state).toBe('TASK_STATE_WORKING')
    const busy = await unaryCall(client, 'SendMessage', { message: protoMessage('more') })
    expect(busy.error?.code).toBe(status.RESOURCE_EXHAUSTED)
    expect(busy.error?.details).toMatch(/busy/)
    const large = await unaryCall(client, 'SendMessage', { message: protoMessage('x'.repeat(5000)) })
    expect(large.error?.code).toBe(status.RESOURCE_EXHAUSTED)
    await unaryCall(client, 'CancelTask', { id: running.response.task.id })
  })

  it('INTERNAL without detail for an unexpected failure, whose detail goes to the log', async () => {
    const store = createMemoryStore()
    store.get = () => {
      throw new Error('the disk is on fire')
    }
    const target = await serveWithGrpc(grpcAgent(), { store })
    const client = rawClient(target.grpcAddress)
    const failed = await unaryCall(client, 'GetTask', { id: 'any' })
    expect(failed.error?.code).toBe(status.INTERNAL)
    expect(failed.error?.details).toBe('Internal error')
    expect(errorInfoOf(failed.error!)).toBeUndefined()
    expect(target.logger.text('error')).toContain('the disk is on fire')
  })

  it('UNAVAILABLE past maxStreams, counted with the SSE streams of JSON-RPC', async () => {
    // Its tasks wait on: the shutdown stops them at once.
    const target = await serveWithGrpc(grpcAgent(), { maxStreams: 1, shutdownTimeoutMs: 0 })
    const client = rawClient(target.grpcAddress)
    // One SSE stream over JSON-RPC takes the only place...
    const controller = new AbortController()
    const sse = await fetch(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendStreamingMessage',
        params: { message: protoMessage('wait') },
      }),
      signal: controller.signal,
    })
    expect(sse.headers.get('content-type')).toBe('text/event-stream')
    const refused = client.SendStreamingMessage({ message: protoMessage('hi') })
    const error = await new Promise<any>((resolve) => refused.on('error', resolve))
    expect(error.code).toBe(status.UNAVAILABLE)
    expect(error.details).toMatch(/Too many open streams \(1\)/)
    // ...and once it ends, a gRPC stream takes it, and an SSE stream is refused while it is open.
    controller.abort()
    await sse.body?.cancel().catch(() => {})
    let open: any
    await expect
      .poll(async () => {
        open?.cancel()
        open = client.SubscribeToTask({ id: 'nothing' })
        const first = await new Promise<any>((resolve) => open.on('error', resolve))
        return first.code
      })
      .toBe(status.NOT_FOUND)
    const subscribed = await unaryCall(client, 'SendMessage', {
      message: protoMessage('wait'),
      configuration: { returnImmediately: true },
    })
    const following = client.SubscribeToTask({ id: subscribed.response.task.id })
    following.on('error', () => {}) // CANCELLED, once the test cancels it
    const first = await new Promise<any>((resolve) => following.once('data', resolve))
    expect(first.task.id).toBe(subscribed.response.task.id)
    const busy = await fetch(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'SubscribeToTask',
        params: { id: subscribed.response.task.id },
      }),
    })
    expect(busy.status).toBe(503)
    following.cancel()
  })
})

describe('serveGrpc beside an app of your own', () => {
  it('serves the app on its own port and announces it on the cards until closed', async () => {
    const app = createA2AApp(grpcAgent(), { logger: captureLogger() })
    const grpc = await serveGrpc(app, { port: 0, host: '127.0.0.1' })
    try {
      const card = await (await app.fetch(new Request('http://localhost/.well-known/agent-card.json'))).json()
      expect(card.supportedInterfaces).toContainEqual({
        url: grpc.address,
        protocolBinding: 'GRPC',
        protocolVersion: '1.0',
      })
      const sent = await unaryCall(rawClient(grpc.address), 'SendMessage', { message: protoMessage('own') })
      expect(sent.response.task.artifacts[0].parts[0].text).toBe('Echo: own')
    } finally {
      await grpc.close()
    }
    const after = await (await app.fetch(new Request('http://localhost/.well-known/agent-card.json'))).json()
    expect(JSON.stringify(after.supportedInterfaces)).not.toContain('GRPC')
    await app.close()
  })
})
