import { isSettled } from '../core/_lifecycle.js'
import { A2AError, ErrorCode, TaskNotFoundError } from '../errors.js'
import type { TaskEvent } from '../types.js'
import type { Binding } from './shared/_binding.js'
import { subscribeWith } from './shared/_handlers.js'
import { cancel, get, send, streamWith } from './shared/_slash-methods.js'
import { readTaskId } from './shared/_slash-params.js'
import { v03PushMethods } from './shared/_v03-push.js'
import { artifactToV03, statusToV03 } from './shared/_v03-shapes.js'

// Every subscriber of a task serialises the same event in turn: the last one's JSON serves the rest (and lets
// their streams share its bytes).
let lastEvent: TaskEvent | undefined
let lastNotification = ''

/** The platform dialect writes each event as a JSON-RPC notification. */
function notification(event: TaskEvent): string {
  if (event !== lastEvent) {
    lastNotification = serialiseNotification(event)
    lastEvent = event
  }
  return lastNotification
}

function serialiseNotification(event: TaskEvent): string {
  if (event.kind === 'status-update') {
    return JSON.stringify({
      jsonrpc: '2.0',
      method: 'tasks/statusUpdate',
      params: {
        taskId: event.taskId,
        contextId: event.contextId,
        status: statusToV03(event.status),
        final: event.final,
      },
    })
  }
  const params = {
    taskId: event.taskId,
    contextId: event.contextId,
    artifact: artifactToV03(event.artifact),
    ...(event.append && { append: true }),
  }
  return JSON.stringify({ jsonrpc: '2.0', method: 'tasks/artifactUpdate', params })
}

/**
 * `tasks/resubscribe` on the platform dialect (an addition to the platform's four methods, for clients that
 * resume a broken stream with `Last-Event-ID`): the same notifications as `message/stream`, numbered. Without
 * `Last-Event-ID` it opens with the task's current status as a `tasks/statusUpdate`. Unlike `message/stream` it
 * follows the task until it ends: a `final: true` at input-required closes the turn, not the stream.
 */
const resubscribe = subscribeWith({
  readTaskId,
  task: (task) =>
    notification({
      kind: 'status-update',
      seq: 0,
      taskId: task.id,
      contextId: task.contextId,
      status: task.status,
      final: isSettled(task.status.state),
    }),
  event: (event) => notification(event),
})

/** Exactly the platform spec: slash-named methods, notifications on the stream, -32602 for unknown tasks. */
export const platformBinding: Binding = {
  name: 'platform',
  methods: new Map([
    ['message/send', send],
    ['message/stream', streamWith((event) => [notification(event)])],
    ['tasks/get', get],
    ['tasks/cancel', cancel],
    ['tasks/resubscribe', resubscribe],
    // Beyond the platform spec, like tasks/resubscribe: the v0.3 methods, for agents that declare push.
    ...v03PushMethods,
  ]),
  wireError: (error) =>
    error instanceof TaskNotFoundError ? new A2AError(ErrorCode.InvalidParams, 'Task not found') : error,
}
