import { replyOf } from '../../core/_task-run.js'
import { UnsupportedOperationError } from '../../errors.js'
import type { JsonRpcId } from '../../http/_jsonrpc.js'
import type { Message, Task, TaskEvent } from '../../types.js'
import type { MethodHandler } from './_binding.js'
import { numberingAsked } from './_handlers.js'
import { assertOutputModes, readParamsObject } from './_params.js'
import { readHistoryLength, readSendParams, readTaskId } from './_slash-params.js'
import { messageToV03, taskToV03 } from './_v03-shapes.js'
import { attachWebhook } from './_webhooks.js'

/**
 * The task operations of the slash-named methods (`message/send`, `message/stream`, `tasks/get`,
 * `tasks/cancel`), which the platform dialect and A2A v0.3 share: they differ only in how a stream frames an
 * event and in what a send answers an agent's reply with (`call.dialect`).
 */

const WEBHOOK_FIELD = 'params.configuration.pushNotificationConfig'

function withHistoryLength(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined || historyLength >= task.history.length) return task
  return { ...task, history: historyLength === 0 ? [] : task.history.slice(-historyLength) }
}

export const send: MethodHandler = async (params, call) => {
  const { engine, outputModes } = call
  const request = readSendParams(params, call.dialect)
  request.principal = call.principal
  request.agentCore = call.agentCore
  assertOutputModes(request.acceptedOutputModes, outputModes)
  call.inputModes.check(request.message, false)
  await attachWebhook(request, call, WEBHOOK_FIELD)
  request.answeredAtOnce = !request.blocking
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
export function streamWith(
  frames: EventFrames,
  alwaysNumbered = false,
  replyFrame?: (reply: Message, id: JsonRpcId) => string,
): MethodHandler {
  return async (params, call) => {
    const { engine, streaming, id, outputModes, eventIds, headers, openStream } = call
    const numbered = numberingAsked(headers) || alwaysNumbered || eventIds
    if (!streaming)
      throw new UnsupportedOperationError(
        'Streaming is not supported: the agent card sets capabilities.streaming to false; use message/send',
      )
    const request = readSendParams(params, call.dialect)
    request.principal = call.principal
    request.agentCore = call.agentCore
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

export const get: MethodHandler = async (params, { engine, principal }) => {
  const id = readTaskId(params)
  const historyLength = readHistoryLength(readParamsObject(params))
  return taskToV03(withHistoryLength(await engine.get(id, principal?.id), historyLength))
}

export const cancel: MethodHandler = async (params, { engine, principal }) =>
  taskToV03(await engine.cancel(readTaskId(params), principal))
