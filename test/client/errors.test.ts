import { describe, expect, it } from 'vitest'
import { A2AProtocolError } from '../../runtime/src/client/errors.ts'
import { sdkTestAgent } from '../_sdk-v1.ts'
import { type A2AClient, collect, connectOver, startRuntimeAgent, startSdkAgent, userMessage } from './_agents.ts'

/**
 * The same A2A error has the same name over JSON-RPC and HTTP+JSON (A2A v1.0 §5.4): each error an agent answers is
 * driven over both bindings, and the client's error says the name, the binding's own code (JSON-RPC's number, the
 * REST ErrorInfo reason) and the agent's message.
 */

type Probe = (client: A2AClient) => Promise<unknown>

const completedTask = async (client: A2AClient) => (await client.sendMessage({ message: userMessage('done') })).task!

const PROBES: Record<string, Probe> = {
  'an unknown task': (client) => client.getTask({ id: 'no-such-task' }),
  'canceling a completed task': async (client) => client.cancelTask({ id: (await completedTask(client)).id }),
  'subscribing to a completed task': async (client) =>
    collect(client.subscribeToTask((await completedTask(client)).id)),
  'a message without parts': (client) =>
    client.sendMessage({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [] } }),
  'accepting only an output mode the agent lacks': (client) =>
    client.sendMessage({ message: userMessage('png please'), configuration: { acceptedOutputModes: ['image/png'] } }),
  'the extended card of an agent without one': (client) => client.getExtendedAgentCard(),
  'a push config where push is off': async (client) =>
    client.createTaskPushNotificationConfig({ taskId: (await completedTask(client)).id, url: 'http://127.0.0.1:9/' }),
}

/** Each probe's name, JSON-RPC code and REST reason as this runtime answers them. */
const RUNTIME_ERRORS: Array<[string, string, number, string]> = [
  ['an unknown task', 'TaskNotFoundError', -32001, 'TASK_NOT_FOUND'],
  ['canceling a completed task', 'TaskNotCancelableError', -32002, 'TASK_NOT_CANCELABLE'],
  ['subscribing to a completed task', 'UnsupportedOperationError', -32004, 'UNSUPPORTED_OPERATION'],
  ['a message without parts', 'InvalidParamsError', -32602, 'INVALID_ARGUMENT'],
  [
    'accepting only an output mode the agent lacks',
    'ContentTypeNotSupportedError',
    -32005,
    'CONTENT_TYPE_NOT_SUPPORTED',
  ],
  ['the extended card of an agent without one', 'UnsupportedOperationError', -32004, 'UNSUPPORTED_OPERATION'],
  ['a push config where push is off', 'PushNotificationNotSupportedError', -32003, 'PUSH_NOTIFICATION_NOT_SUPPORTED'],
]

/** The same on the official SDK's server (which takes a message without parts, and any accepted output mode). */
const SDK_ERRORS: Array<[string, string, number, string]> = [
  ['an unknown task', 'TaskNotFoundError', -32001, 'TASK_NOT_FOUND'],
  ['canceling a completed task', 'TaskNotCancelableError', -32002, 'TASK_NOT_CANCELABLE'],
  ['subscribing to a completed task', 'UnsupportedOperationError', -32004, 'UNSUPPORTED_OPERATION'],
  ['the extended card of an agent without one', 'UnsupportedOperationError', -32004, 'UNSUPPORTED_OPERATION'],
  ['a push config where push is off', 'PushNotificationNotSupportedError', -32003, 'PUSH_NOTIFICATION_NOT_SUPPORTED'],
]

async function failureOf(probe: Probe, client: A2AClient): Promise<A2AProtocolError> {
  const error = await probe(client).then(
    (answer) => new Error(`expected an A2A error, got ${JSON.stringify(answer)}`),
    (error: unknown) => error,
  )
  if (!(error instanceof A2AProtocolError)) throw error
  return error
}

const noPush = sdkTestAgent({ name: 'No push', description: 'Push notifications off' })

describe("this runtime's agent", () => {
  it.each(RUNTIME_ERRORS)('%s is %s over JSON-RPC and HTTP+JSON alike', async (probe, name, code, reason) => {
    const push = probe === 'a push config where push is off'
    const url = await startRuntimeAgent(push ? { agent: noPush } : {})
    const overJsonRpc = await failureOf(PROBES[probe]!, await connectOver(url, 'JSONRPC'))
    const overRest = await failureOf(PROBES[probe]!, await connectOver(url, 'HTTP+JSON'))
    expect([overJsonRpc.name, overJsonRpc.a2aCode]).toEqual([name, code])
    expect([overRest.name, overRest.a2aCode]).toEqual([name, reason])
    expect(overJsonRpc.message).not.toBe('')
  })

  it('a version the agent does not speak is VersionNotSupportedError over both bindings', async () => {
    const url = await startRuntimeAgent()
    for (const binding of ['JSONRPC', 'HTTP+JSON']) {
      const client = await connectOver(url, binding, { a2aVersion: '1.9' })
      const error = await failureOf((c) => c.getTask({ id: 'any' }), client)
      expect(error.name).toBe('VersionNotSupportedError')
      expect(error.message).toContain('1.9')
    }
  })
})

describe('an agent on the official SDK server', () => {
  it.each(SDK_ERRORS)('%s is %s over JSON-RPC and HTTP+JSON alike', async (probe, name, code, reason) => {
    const agent = await startSdkAgent({ pushNotifications: probe !== 'a push config where push is off' })
    const overJsonRpc = await failureOf(PROBES[probe]!, await connectOver(agent.url, 'JSONRPC'))
    const overRest = await failureOf(PROBES[probe]!, await connectOver(agent.url, 'HTTP+JSON'))
    expect([overJsonRpc.name, overJsonRpc.a2aCode]).toEqual([name, code])
    expect([overRest.name, overRest.a2aCode]).toEqual([name, reason])
  })
})
