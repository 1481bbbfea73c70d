import { replyOf } from '../core/_task-run.js'
import { A2AError, ErrorCode, TaskEndedError, UnsupportedOperationError } from '../errors.js'
import type { JsonRpcId } from '../http/_jsonrpc.js'
import type { Task, TaskEvent } from '../types.js'
import { readListParamsV1, readSendParamsV1, readTaskIdV1 } from './_v1-params.js'
import { v1PushMethods } from './_v1-push.js'
import { taskToV1 } from './_v1-task.js'
import type { Binding, CallContext, EventStream, MethodHandler } from './shared/_binding.js'
import { extendedCardIn, numberingAsked, streamingOff, subscribeWith } from './shared/_handlers.js'
import { assertOutputModes } from './shared/_params.js'
import { eventToV1, messageToV1 } from './shared/_v1-shapes.js'
import { attachWebhook } from './shared/_webhooks.js'

/**
 * The official A2A v1.0 JSON-RPC binding: PascalCase methods, ProtoJSON shapes, every stream event a JSON-RPC
 * response carrying the request id, and A2A error codes with ErrorInfo details.
 */

const REASONS: Record<number, string> = {
  [ErrorCode.TaskNotFound]: 'TASK_NOT_FOUND',
  [ErrorCode.TaskNotCancelable]: 'TASK_NOT_CANCELABLE',
  [ErrorCode.PushNotificationNotSupported]: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
  [ErrorCode.UnsupportedOperation]: 'UNSUPPORTED_OPERATION',
  [ErrorCode.ContentTypeNotSupported]: 'CONTENT_TYPE_NOT_SUPPORTED',
  [ErrorCode.ExtendedCardNotConfigured]: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
  [ErrorCode.VersionNotSupported]: 'VERSION_NOT_SUPPORTED',
}

/** The same error with the ErrorInfo detail v1.0 clients read. */
export function withErrorInfo(error: A2AError): A2AError {
  const reason = REASONS[error.code]
  if (!reason || error.data !== undefined) return error
  return new A2AError(error.code, error.message, error.httpStatus, [
    { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'a2a-protocol.org' },
  ])
}

/**
 * A send's stream: the first event carries the Task, or is the one Message an agent replied with (`reply()`), after
 * which the stream ends. Each result is framed as the binding frames it (`frameV1`).
 */
function taskStream(call: CallContext, stream: EventStream) {
  const { id, frameV1 } = call
  // Numbered by the task's events; the Task frame carries the number of the event it already reflects.
  const send = (result: object, seq: number) => stream.send(frameV1(result, id), seq)
  let sentTask = false
  let replied = false
  const sendTask = (task: Task, seq: number) => {
    if (sentTask) return
    sentTask = true
    send({ task: taskToV1(task) }, seq)
  }
  const listener = (event: TaskEvent, task: Task) => {
    if (replied) return
    const reply = sentTask ? undefined : replyOf(event)
    if (reply) {
      replied = true
      send({ message: messageToV1(reply) }, event.seq)
      stream.close()
      return
    }
    sendTask(task, event.seq)
    send(eventToV1(event), event.seq)
    // A send's stream is its turn's: it ends when the task ends or waits for input (the follow-up opens the next
    // one). SubscribeToTask follows the task across turns (`subscribeWith`).
    if (event.kind === 'status-update' && event.final) stream.close()
  }
  return { stream, sendTask, listener }
}

/** A v1.0 stream result inside the JSON-RPC response to request `id` (the JSON-RPC binding's `frameV1`). */
export const jsonRpcFrameV1 = (result: object, id: JsonRpcId): string => JSON.stringify({ jsonrpc: '2.0', id, result })

const sendMessage: MethodHandler = async (params, call) => {
  const { engine, outputModes } = call
  const request = readSendParamsV1(params)
  request.principal = call.principal
  request.agentCore = call.agentCore
  assertOutputModes(request.acceptedOutputModes, outputModes)
  call.inputModes.check(request.message, true)
  await attachWebhook(request, call, 'params.configuration.taskPushNotificationConfig')
  request.answeredAtOnce = request.returnImmediately
  const { run, settled } = await engine.send(request)
  if (!request.returnImmediately) await settled
  // An agent that replied with a message answers with it (a client told to return at once has the task already).
  if (run.replied && !request.returnImmediately) return { message: messageToV1(run.replied) }
  return { task: taskToV1(run.task, { historyLength: request.historyLength }) }
}

const sendStreamingMessage: MethodHandler = async (params, call) => {
  const { engine, streaming, outputModes, headers, openStream } = call
  if (!streaming) throw streamingOff()
  numberingAsked(headers)
  const request = readSendParamsV1(params)
  request.principal = call.principal
  request.agentCore = call.agentCore
  assertOutputModes(request.acceptedOutputModes, outputModes)
  call.inputModes.check(request.message, true)
  await attachWebhook(request, call, 'params.configuration.taskPushNotificationConfig')
  const stream = taskStream(call, openStream())
  try {
    const { unsubscribe } = await engine.send(request, stream.listener)
    stream.stream.onCancel(unsubscribe)
    return stream.stream.response
  } catch (error) {
    stream.stream.close() // never sent: it must not count as open
    throw error
  }
}

const subscribeToTask = subscribeWith({
  readTaskId: (params) => readTaskIdV1(params).id,
  task: (task, { id, frameV1 }) => frameV1({ task: taskToV1(task) }, id),
  event: (event, { id, frameV1 }) => frameV1(eventToV1(event), id),
})

const getTask: MethodHandler = async (params, { engine, principal }) => {
  const { id, historyLength } = readTaskIdV1(params)
  return taskToV1(await engine.get(id, principal?.id), { historyLength })
}

const cancelTask: MethodHandler = async (params, { engine, principal }) =>
  taskToV1(await engine.cancel(readTaskIdV1(params).id, principal))

const listTasks: MethodHandler = async (params, { engine, principal }) => {
  const { query, historyLength, includeArtifacts } = readListParamsV1(params)
  // The store may read only what the answer shows of each task (the Redis store does); a caller only its own
  // tasks, whatever filters it gives (A2A v1.0 §3.1.4).
  const page = await engine.store.list({
    ...query,
    ...(principal && { owner: principal.id }),
    ...(historyLength !== undefined && { historyLength }),
    includeArtifacts,
  })
  return {
    tasks: page.tasks.map((task) => taskToV1(task, { historyLength, includeArtifacts })),
    nextPageToken: page.nextCursor ?? '',
    pageSize: query.limit,
    totalSize: page.total,
  }
}

export const v1Binding: Binding = {
  name: 'a2a-1.0',
  methods: new Map([
    ['SendMessage', sendMessage],
    ['SendStreamingMessage', sendStreamingMessage],
    ['GetTask', getTask],
    ['ListTasks', listTasks],
    ['CancelTask', cancelTask],
    ['SubscribeToTask', subscribeToTask],
    ['GetExtendedAgentCard', extendedCardIn('a2a-1.0')],
    ...v1PushMethods,
  ]),
  wireError: (error) =>
    withErrorInfo(error instanceof TaskEndedError ? new UnsupportedOperationError(error.detail) : error),
}
