import { isTerminal } from '../core/_lifecycle.js'
import { A2AError, ErrorCode, UnsupportedOperationError } from '../errors.js'
import { SseStream } from '../http/_sse.js'
import type { Task, TaskEvent } from '../types.js'
import type { Binding, MethodHandler } from './_binding.js'
import { cancel, get, send, streamWith } from './_platform.js'
import { readTaskId } from './_platform-params.js'

/**
 * The official A2A v0.3 dialect on the slash-named methods: each stream event is a JSON-RPC response to the
 * request, its result a Task or an update with `kind` and `final`; unknown tasks are -32001.
 */

function result(event: TaskEvent): object {
  if (event.kind === 'status-update') return { kind: 'status-update', taskId: event.taskId, contextId: event.contextId, status: event.status, final: event.final }
  return { kind: 'artifact-update', taskId: event.taskId, contextId: event.contextId, artifact: event.artifact, ...(event.append && { append: true }), lastChunk: event.lastChunk }
}

const respond = (id: unknown, value: object) => JSON.stringify({ jsonrpc: '2.0', id, result: value })

/** The stream opens with the Task, as v0.3 servers do, then its updates. */
const frames = (event: TaskEvent, task: Task, id: unknown, first: boolean) => (first ? [respond(id, task), respond(id, result(event))] : [respond(id, result(event))])

const resubscribe: MethodHandler = async (params, { engine, streaming, id }) => {
  if (!streaming) throw new UnsupportedOperationError('Streaming is not supported: the agent card sets capabilities.streaming to false')
  const taskId = readTaskId(params)
  const sse = new SseStream()
  const { task, running, unsubscribe } = await engine.subscribe(taskId, (event) => {
    sse.send(respond(id, result(event)))
    if (event.kind === 'status-update' && event.final) sse.close()
  })
  if (isTerminal(task.status.state)) {
    unsubscribe()
    throw new UnsupportedOperationError(`Task ${taskId} is ${task.status.state}: a finished task has no more events to resubscribe to`)
  }
  sse.send(respond(id, task))
  if (!running) sse.close()
  sse.onCancel(unsubscribe)
  return sse.response
}

const noPush: MethodHandler = async () => {
  throw new A2AError(ErrorCode.PushNotificationNotSupported, 'Push notifications are not supported by this agent')
}

const noExtendedCard: MethodHandler = async () => {
  throw new UnsupportedOperationError('This agent has no authenticated extended card')
}

export const v03Binding: Binding = {
  name: 'a2a-0.3',
  methods: new Map([
    ['message/send', send],
    ['message/stream', streamWith(frames)],
    ['tasks/get', get],
    ['tasks/cancel', cancel],
    ['tasks/resubscribe', resubscribe],
    ['tasks/pushNotificationConfig/set', noPush],
    ['tasks/pushNotificationConfig/get', noPush],
    ['tasks/pushNotificationConfig/list', noPush],
    ['tasks/pushNotificationConfig/delete', noPush],
    ['agent/getAuthenticatedExtendedCard', noExtendedCard],
  ]),
  // Core errors already carry the A2A v0.3 codes (-32001 for an unknown task).
  wireError: (error) => error,
}
