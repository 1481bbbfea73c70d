import { TaskState } from '@a2a-js/sdk'
import { status } from '@grpc/grpc-js'
import { describe, expect, it } from 'vitest'
import { sdkTestAgent, v1Message, v1Text } from '../_sdk-v1.ts'
import { errorInfoOf, grpcClient, protoMessage, rawClient, unaryCall } from './_grpc.ts'
import { planner, startAgents } from './_multi-agent.ts'

/**
 * Two agents in one server over one gRPC port (`serveAgents` with `grpcPort`): each request reaches the agent its
 * `tenant` names, which each agent's card gives with the gRPC interface; tasks and streams stay each agent's own.
 */

const returnAtOnce = { acceptedOutputModes: [], returnImmediately: true } as any

/** Every event of a raw server-streaming call, until it ends (or its error). */
function streamed(
  client: Record<string, any>,
  method: string,
  request: unknown,
): Promise<{ events: any[]; error?: any }> {
  return new Promise((resolve) => {
    const events: any[] = []
    const call = client[method](request)
    call.on('data', (event: any) => events.push(event))
    call.on('error', (error: any) => resolve({ events, error }))
    call.on('end', () => resolve({ events }))
  })
}

describe('several agents over one gRPC port', () => {
  it('lists the gRPC interface in each agent’s v1.0 card with its tenant; A2A_GRPC_PORT turns it on', async () => {
    const server = await startAgents(undefined, { env: { A2A_GRPC_PORT: '0' } })
    expect(server.grpcAddress).toMatch(/^127\.0\.0\.1:\d+$/)
    for (const name of ['planner', 'writer']) {
      const card = await (await fetch(`${server.urls[name]}.well-known/agent-card.json`)).json()
      expect(card.supportedInterfaces).toContainEqual({
        url: server.grpcAddress,
        protocolBinding: 'GRPC',
        tenant: name,
        protocolVersion: '1.0',
      })
    }
  })

  it('the official SDK client finds each agent’s gRPC interface on its card and keeps to that agent', async () => {
    const server = await startAgents(undefined, { grpcPort: 0 })
    const plannerClient = await grpcClient(server.urls.planner!)
    const writerClient = await grpcClient(server.urls.writer!)
    const sent: any = await plannerClient.sendMessage(v1Message('plan a trip'))
    expect(v1Text(sent)).toBe('Echo: plan a trip')
    expect((await plannerClient.getTask({ tenant: '', id: sent.id, historyLength: 0 })).id).toBe(sent.id)
    const refused = await writerClient.getTask({ tenant: '', id: sent.id, historyLength: 0 }).catch((error) => error)
    expect(refused).toMatchObject({ name: 'TaskNotFoundError' })

    // Each streams its own task, which the other cannot read.
    const events: any[] = []
    for await (const event of writerClient.sendMessageStream(v1Message('streamed words'))) events.push(event)
    expect(events.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
    const streamedId: string = events[0].payload.value.id
    const crossed = await plannerClient.getTask({ tenant: '', id: streamedId, historyLength: 0 }).catch((e) => e)
    expect(crossed).toMatchObject({ name: 'TaskNotFoundError' })
  })

  it('routes raw calls by tenant: lists count their own, another agent’s task is NOT_FOUND, subscribe too', async () => {
    const server = await startAgents(undefined, { grpcPort: 0 })
    const client = rawClient(server.grpcAddress!)
    const sent = await unaryCall(client, 'SendMessage', { tenant: 'planner', message: protoMessage('hello') })
    const id: string = sent.response.task.id
    const own = await unaryCall(client, 'SendMessage', { tenant: 'writer', message: protoMessage('mine') })
    const ownId: string = own.response.task.id

    expect((await unaryCall(client, 'GetTask', { tenant: 'planner', id })).response.id).toBe(id)
    const crossed = await unaryCall(client, 'GetTask', { tenant: 'writer', id })
    expect(crossed.error?.code).toBe(status.NOT_FOUND)
    expect(errorInfoOf(crossed.error!)?.reason).toBe('TASK_NOT_FOUND')
    const writerList = await unaryCall(client, 'ListTasks', { tenant: 'writer', pageSize: 50 })
    expect(writerList.response.tasks.map((task: any) => task.id)).toEqual([ownId])
    expect(writerList.response.totalSize).toBe(1)

    // A running task of the planner: the writer neither cancels nor follows it; the planner's own stream ends it.
    const held = await unaryCall(client, 'SendMessage', {
      tenant: 'planner',
      message: protoMessage('wait'),
      configuration: returnAtOnce,
    })
    const heldId: string = held.response.task.id
    expect((await unaryCall(client, 'CancelTask', { tenant: 'writer', id: heldId })).error?.code).toBe(status.NOT_FOUND)
    const otherFollow = await streamed(client, 'SubscribeToTask', { tenant: 'writer', id: heldId })
    expect(otherFollow.error?.code).toBe(status.NOT_FOUND)
    expect(otherFollow.events).toEqual([])
    const following = streamed(client, 'SubscribeToTask', { tenant: 'planner', id: heldId })
    await expect
      .poll(async () => (await unaryCall(client, 'GetTask', { tenant: 'planner', id: heldId })).response.status.state)
      .toBe('TASK_STATE_WORKING')
    const canceled = await unaryCall(client, 'CancelTask', { tenant: 'planner', id: heldId })
    expect(canceled.response.status.state).toBe('TASK_STATE_CANCELED')
    const { events, error } = await following
    expect(error).toBeUndefined()
    expect(events.at(-1).statusUpdate.status.state).toBe('TASK_STATE_CANCELED')
  })

  it('refuses a request naming no tenant, or no agent of the server, NOT_FOUND naming it', async () => {
    const server = await startAgents(undefined, { grpcPort: 0 })
    const client = rawClient(server.grpcAddress!)
    const none = await unaryCall(client, 'SendMessage', { message: protoMessage('hello') })
    expect(none.error?.code).toBe(status.NOT_FOUND)
    expect(none.error?.details).toMatch(/names no tenant.*planner, writer/)
    const unknown = await unaryCall(client, 'GetTask', { tenant: 'nobody', id: 'x' })
    expect(unknown.error?.code).toBe(status.NOT_FOUND)
    expect(unknown.error?.details).toMatch(/tenant "nobody" names no agent of this server/)
    const stream = await streamed(client, 'SendStreamingMessage', { tenant: 'nobody', message: protoMessage('x') })
    expect(stream.error?.code).toBe(status.NOT_FOUND)
    // Nothing ran: neither agent has a task.
    for (const tenant of ['planner', 'writer'])
      expect((await unaryCall(client, 'ListTasks', { tenant, pageSize: 50 })).response.totalSize ?? 0).toBe(0)
  })

  it('a server of one agent takes a request naming no tenant; another tenant is still NOT_FOUND', async () => {
    const server = await startAgents({ planner }, { grpcPort: 0 })
    const client = rawClient(server.grpcAddress!)
    const sent = await unaryCall(client, 'SendMessage', { message: protoMessage('hello') })
    expect(sent.response.task.status.state).toBe('TASK_STATE_COMPLETED')
    expect(
      (await unaryCall(client, 'GetTask', { tenant: 'planner', id: sent.response.task.id })).response,
    ).toBeDefined()
    expect((await unaryCall(client, 'GetTask', { tenant: 'writer', id: 'x' })).error?.code).toBe(status.NOT_FOUND)
  })

  it('checks the credentials of the agent the tenant names', async () => {
    const server = await startAgents(
      {
        open: planner,
        closed: {
          agent: sdkTestAgent({
            name: 'Guarded',
            description: 'Needs a token',
            authentication: { schemes: ['bearer'] },
          }),
          auth: { bearerTokens: ['c-secret'] },
        },
      },
      { grpcPort: 0, env: {} },
    )
    const client = rawClient(server.grpcAddress!)
    const stranger = await unaryCall(client, 'SendMessage', { tenant: 'closed', message: protoMessage('hi') })
    expect(stranger.error?.code).toBe(status.UNAUTHENTICATED)
    const bearer = { authorization: 'Bearer c-secret' }
    const sent = await unaryCall(client, 'SendMessage', { tenant: 'closed', message: protoMessage('hi') }, bearer)
    expect(sent.response.task.status.state).toBe('TASK_STATE_COMPLETED')
    // The open agent needs none, and its callers see nothing of the closed one's tasks.
    expect(
      (await unaryCall(client, 'SendMessage', { tenant: 'open', message: protoMessage('hi') })).response,
    ).toBeDefined()
    const id: string = sent.response.task.id
    expect((await unaryCall(client, 'GetTask', { tenant: 'open', id }, bearer)).error?.code).toBe(status.NOT_FOUND)
  })
})
