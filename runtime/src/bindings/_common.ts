import { isTerminal } from '../core/_lifecycle.js'
import { A2AError, ErrorCode, UnsupportedOperationError } from '../errors.js'
import type { JsonRpcId } from '../http/_jsonrpc.js'
import { SseStream } from '../http/_sse.js'
import type { Task, TaskEvent } from '../types.js'
import type { MethodHandler } from './_binding.js'

/** Handlers the A2A dialects (v0.3, v1.0) share; they differ only in how a task or an event is framed. */

export const streamingOff = () => new UnsupportedOperationError('Streaming is not supported: the agent card sets capabilities.streaming to false')

export const pushNotSupported: MethodHandler = async () => {
  throw new A2AError(ErrorCode.PushNotificationNotSupported, 'Push notifications are not supported by this agent')
}

export const extendedCardNotConfigured: MethodHandler = async () => {
  throw new A2AError(ErrorCode.ExtendedCardNotConfigured, 'This agent has no extended agent card configured')
}

interface Framing {
  readTaskId(params: unknown): string
  task(task: Task, id: JsonRpcId): string
  event(event: TaskEvent, id: JsonRpcId): string
}

/**
 * Follows a task (SubscribeToTask, tasks/resubscribe): the Task as it stands, then its live events until it
 * settles. A finished task is an error; a task at rest (waiting for input) sends the Task and closes.
 */
export function subscribeWith(framing: Framing): MethodHandler {
  return async (params, { engine, streaming, id }) => {
    if (!streaming) throw streamingOff()
    const taskId = framing.readTaskId(params)
    const sse = new SseStream()
    let sentTask = false
    let endAfterTask = false
    const early: string[] = []
    const { task, running, unsubscribe } = await engine.subscribe(taskId, (event) => {
      const frame = framing.event(event, id)
      const final = event.kind === 'status-update' && event.final
      // Events that arrive before the Task frame wait for it, so the Task always comes first.
      if (!sentTask) {
        early.push(frame)
        endAfterTask ||= final
        return
      }
      sse.send(frame)
      if (final) sse.close()
    })
    if (!running && isTerminal(task.status.state)) {
      throw new UnsupportedOperationError(`Task ${taskId} is ${task.status.state}: a finished task has no more events to subscribe to`)
    }
    sse.send(framing.task(task, id))
    sentTask = true
    for (const frame of early) sse.send(frame)
    if (!running || endAfterTask) sse.close()
    sse.onCancel(unsubscribe)
    return sse.response
  }
}
