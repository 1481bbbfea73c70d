import { isSettled } from '../core/_lifecycle.js'
import { replyOf } from '../core/_task-run.js'
import { A2AError, ErrorCode, TaskNotFoundError, UnsupportedOperationError } from '../errors.js'
import type { JsonRpcId } from '../http/_jsonrpc.js'
import type { Message, Task, TaskEvent } from '../types.js'
import type { Binding, MethodHandler } from './_binding.js'
import { numberingAsked, subscribeWith } from './_common.js'
import { readParamsObject } from './_params.js'
import { assertOutputModes, readHistoryLength, readSendParams, readTaskId } from './_platform-params.js'
import { attachWebhook, v03PushMethods } from './_push.js'
import { artifactToV03, messageToV03, statusToV03, taskToV03 } from './_v03-shapes.js'

const WEBHOOK_FIELD = 'params.configuration.pushNotificationConfig'

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
      params: { taskId: event.taskId, contextId: event.contextId, status: statusToV03(event.status), final: event.final },
    })
  }
  const params = { taskId: event.taskId, contextId: event.contextId, artifact: artifactToV03(event.artifact), ...(event.append && { append: true }) }
  return JSON.stringify({ jsonrpc: '2.0', method: 'tasks/artifactUpdate', params })
}

function withHistoryLength(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined || historyLength >= task.history.length) return task
  return { ...task, history: historyLength === 0 ? [] : task.history.slice(-historyLength) }
}

export const send: MethodHandler = async (params, call) => {
  const { engine, outputModes } = call
  const request = readSendParams(params, call.dialect)
  assertOutputModes(request.acceptedOutputModes, outputModes)
  call.inputModes.check(request.message, false)
  await attachWebhook(request, call, WEBHOOK_FIELD)
  const { run, settled } = await engine.send(request)
  if (request.blocking) await settled
  // A2A v0.3 answers an agent's reply with the Message; the platform contract answers with the task.
  if (run.replied && request.blocking && call.dialect === 'a2a-0.3') return messageToV03(run.replied)
  return taskToV03(withHistoryLength(run.task, request.historyLength))
}

/** The SSE data lines one event becomes in a dialect; `first` is true for the first event of the stream. */
export type EventFrames = (event: TaskEvent, task: Task, id: JsonRpcId, first: boolean) => string[]

/**
 * `message/stream` for the slash-named dialects, which differ only in how an event is framed and whether
 * events are always numbered (`id:`); the platform dialect numbers them when asked (`CallContext.eventIds`).
 */
export function streamWith(frames: EventFrames, alwaysNumbered = false, replyFrame?: (reply: Message, id: JsonRpcId) => string): MethodHandler {
  return async (params, call) => {
    const { engine, streaming, id, outputModes, eventIds, headers, openStream } = call
    const numbered = numberingAsked(headers) || alwaysNumbered || eventIds
    if (!streaming) throw new UnsupportedOperationError('Streaming is not supported: the agent card sets capabilities.streaming to false; use message/send')
    const request = readSendParams(params, call.dialect)
    assertOutputModes(request.acceptedOutputModes, outputModes)
    call.inputModes.check(request.message, false)
    await attachWebhook(request, call, WEBHOOK_FIELD)
    const sse = openStream()
    let first = true
    let replied = false
    try {
      const { unsubscribe } = await engine.send(request, (event, task) => {
        if (replied) return
        // An agent's reply (`reply()`) is the stream's one event where the dialect has Messages.
        const reply = first && replyFrame ? replyOf(event) : undefined
        if (reply) {
          replied = true
          sse.send(replyFrame!(reply, id), numbered ? event.seq : undefined)
          sse.close()
          return
        }
        for (const frame of frames(event, task, id, first)) sse.send(frame, numbered ? event.seq : undefined)
        first = false
        // The stream ends after the turn's final status event (the platform spec), input-required included: the
        // follow-up opens the next one. tasks/resubscribe follows the task across turns (`subscribeWith`).
        if (event.kind === 'status-update' && event.final) sse.close()
      })
      // A client that leaves stops receiving; the task runs on and stays retrievable.
      sse.onCancel(unsubscribe)
      return sse.response
    } catch (error) {
      sse.close() // never sent: it must not count as open
      throw error
    }
  }
}

export const get: MethodHandler = async (params, { engine }) => {
  const id = readTaskId(params)
  const historyLength = readHistoryLength(readParamsObject(params))
  return taskToV03(withHistoryLength(await engine.get(id), historyLength))
}

export const cancel: MethodHandler = async (params, { engine }) => taskToV03(await engine.cancel(readTaskId(params)))

/**
 * `tasks/resubscribe` on the platform dialect (an addition to the platform's four methods, for clients that
 * resume a broken stream with `Last-Event-ID`): the same notifications as `message/stream`, numbered. Without
 * `Last-Event-ID` it opens with the task's current status as a `tasks/statusUpdate`. Unlike `message/stream` it
 * follows the task until it ends: a `final: true` at input-required closes the turn, not the stream.
 */
const resubscribe = subscribeWith({
  readTaskId,
  task: (task) =>
    notification({ kind: 'status-update', seq: 0, taskId: task.id, contextId: task.contextId, status: task.status, final: isSettled(task.status.state) }),
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
  wireError: (error) => (error instanceof TaskNotFoundError ? new A2AError(ErrorCode.InvalidParams, 'Task not found') : error),
}
