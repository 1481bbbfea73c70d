import type { Task, TaskEvent } from '../types.js'
import type { Binding } from './shared/_binding.js'
import { extendedCardIn, subscribeWith } from './shared/_handlers.js'
import { cancel, get, send, streamWith } from './shared/_slash-methods.js'
import { readTaskId } from './shared/_slash-params.js'
import { v03PushMethods } from './shared/_v03-push.js'
import { artifactToV03, messageToV03, statusToV03, taskToV03 } from './shared/_v03-shapes.js'

/**
 * The official A2A v0.3 dialect on the slash-named methods: each stream event is a JSON-RPC response to the
 * request, its result a Task or an update with `kind` and `final`; unknown tasks are -32001.
 */

function result(event: TaskEvent): object {
  if (event.kind === 'status-update')
    return {
      kind: 'status-update',
      taskId: event.taskId,
      contextId: event.contextId,
      status: statusToV03(event.status),
      final: event.final,
    }
  return {
    kind: 'artifact-update',
    taskId: event.taskId,
    contextId: event.contextId,
    artifact: artifactToV03(event.artifact),
    ...(event.append && { append: true }),
    lastChunk: event.lastChunk,
  }
}

const respond = (id: unknown, value: object) => JSON.stringify({ jsonrpc: '2.0', id, result: value })

/** The stream opens with the Task, as v0.3 servers do, then its updates. */
const frames = (event: TaskEvent, task: Task, id: unknown, first: boolean) =>
  first ? [respond(id, taskToV03(task)), respond(id, result(event))] : [respond(id, result(event))]

const resubscribe = subscribeWith({
  readTaskId,
  task: (task, { id }) => respond(id, taskToV03(task)),
  event: (event, { id }) => respond(id, result(event)),
})

export const v03Binding: Binding = {
  name: 'a2a-0.3',
  methods: new Map([
    ['message/send', send],
    ['message/stream', streamWith(frames, true, (reply, id) => respond(id, messageToV03(reply)))],
    ['tasks/get', get],
    ['tasks/cancel', cancel],
    ['tasks/resubscribe', resubscribe],
    ...v03PushMethods,
    ['agent/getAuthenticatedExtendedCard', extendedCardIn('a2a-0.3')],
  ]),
  // Core errors already carry the A2A v0.3 codes (-32001 for an unknown task).
  wireError: (error) => error,
}
