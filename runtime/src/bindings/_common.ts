import { isTerminal } from '../core/_lifecycle.js'
import { A2AError, ErrorCode, InvalidParamsError, UnsupportedOperationError } from '../errors.js'
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
 *
 * With `Last-Event-ID: n` (a client whose stream broke) it sends instead the events after n, then the live
 * ones: each event once, in order, none missing, also for a task that has ended meanwhile, while the store
 * still keeps its events.
 */
export function subscribeWith(framing: Framing): MethodHandler {
  return async (params, { engine, streaming, id, lastEventId }) => {
    if (!streaming) throw streamingOff()
    const taskId = framing.readTaskId(params)
    const sse = new SseStream()
    let delivered = 0
    const deliver = (event: TaskEvent): void => {
      if (event.seq <= delivered) return
      delivered = event.seq
      sse.send(framing.event(event, id), event.seq)
      if (event.kind === 'status-update' && event.final) sse.close()
    }
    // Live events that arrive while the Task or the missed events are being read wait for them.
    let early: TaskEvent[] | undefined = []
    const { task, running, seq, unsubscribe } = await engine.subscribe(taskId, (event) => (early ? early.push(event) : deliver(event)))
    try {
      if (lastEventId === undefined) {
        if (!running && isTerminal(task.status.state)) {
          throw new UnsupportedOperationError(`Task ${taskId} is ${task.status.state}: a finished task has no more events to subscribe to`)
        }
        sse.send(framing.task(task, id), seq)
        delivered = seq ?? 0
      } else {
        const missed = seq === undefined ? undefined : lastEventId < seq ? await engine.eventsAfter(taskId, lastEventId) : []
        if (!missed) throw new UnsupportedOperationError(`The events of task ${taskId} after ${lastEventId} are no longer kept (it ended a while ago); get the task for its final state`)
        if (lastEventId > seq!) throw new InvalidParamsError(`Last-Event-ID ${lastEventId} is after the last event of task ${taskId} (${seq})`)
        delivered = lastEventId
        for (const event of missed) deliver(event)
      }
    } catch (error) {
      unsubscribe()
      throw error
    }
    const waiting = early
    early = undefined
    for (const event of waiting) deliver(event)
    // A task at rest or finished sends nothing more: the stream ends with what it had.
    if (!running) sse.close()
    sse.onCancel(unsubscribe)
    return sse.response
  }
}
