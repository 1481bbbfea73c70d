import { isTerminal } from '../../core/_lifecycle.js'
import { A2AError, ErrorCode, InvalidParamsError, UnsupportedOperationError } from '../../errors.js'
import type { Task, TaskEvent } from '../../types.js'
import type { CallContext, MethodHandler, StreamFrame } from './_binding.js'

/**
 * Handlers and stream checks more than one dialect serves: following a task (`subscribeWith`, all three, each
 * with its own framing), `Last-Event-ID` on a send, and the refusals the A2A dialects (v0.3, v1.0) share.
 */

export const streamingOff = () =>
  new UnsupportedOperationError('Streaming is not supported: the agent card sets capabilities.streaming to false')

/**
 * The authenticated extended card (v1.0 GetExtendedAgentCard, v0.3 agent/getAuthenticatedExtendedCard): only an agent
 * that declares one has it, and such an agent authenticates every call before it reaches a method.
 */
export const extendedCardIn =
  (dialect: 'a2a-1.0' | 'a2a-0.3'): MethodHandler =>
  async (_params, { extendedCard }) => {
    if (extendedCard) return extendedCard(dialect)
    // A2A v1.0 §3.3.4: a card that does not declare `capabilities.extendedAgentCard` answers UnsupportedOperation
    // (an agent here declares it exactly when it has one); v0.3 named this case AuthenticatedExtendedCardNotConfigured.
    if (dialect === 'a2a-1.0')
      throw new UnsupportedOperationError('This agent has no extended agent card (its card does not declare one)')
    throw new A2AError(ErrorCode.ExtendedCardNotConfigured, 'This agent has no extended agent card configured')
  }

const EVENT_NUMBER = /^\d{1,15}$/

/** `Last-Event-ID`: absent, or the number of an event this runtime sent. */
function readLastEventId(headers: Headers): number | undefined {
  const value = headers.get('last-event-id')?.trim()
  if (!value) return undefined
  if (!EVENT_NUMBER.test(value))
    throw new InvalidParamsError(
      `Last-Event-ID must be the number of an event from a stream of this agent (got ${JSON.stringify(value.slice(0, 40))})`,
    )
  return Number(value)
}

/**
 * `Last-Event-ID` on a request that starts a task: numbering is asked for (any value turns it on), but a
 * non-zero number is a client re-sending its request to resume, which would start a second task.
 */
export function numberingAsked(headers: Headers): boolean {
  const lastEventId = readLastEventId(headers)
  if (lastEventId)
    throw new InvalidParamsError(
      `Last-Event-ID ${lastEventId} on a request that starts a task would start another one; resume a broken stream with tasks/resubscribe or SubscribeToTask and the task id`,
    )
  return lastEventId !== undefined
}

interface Framing {
  readTaskId(params: unknown): string
  task(task: Task, call: CallContext): StreamFrame
  event(event: TaskEvent, call: CallContext): StreamFrame
}

/** How long a resume waits for a shared store's feed to bring the event it resumes from. */
const FEED_CATCH_UP_MS = 3000

/**
 * Follows a task (SubscribeToTask, tasks/resubscribe): the Task as it stands, then its live events until it
 * ends. A finished task is an error. A task waiting for input keeps its subscriber: the stream stays open
 * (heartbeats flow when they are on) and carries the next turn, which a follow-up from any client starts, until
 * a terminal state (A2A v1.0 §3.1.6). A send stream, by contrast, ends with its turn (`streamWith`, `_v1.ts`).
 *
 * With `Last-Event-ID: n` (a client whose stream broke) it sends instead the events after n, then the live
 * ones: each event once, in order, none missing, also for a task that has ended meanwhile, while the store
 * still keeps its events.
 */
export function subscribeWith(framing: Framing): MethodHandler {
  return async (params, call) => {
    const { engine, streaming, headers, openStream, dialect, principal } = call
    if (!streaming) throw streamingOff()
    const taskId = framing.readTaskId(params)
    const lastEventId = readLastEventId(headers)
    const sse = openStream()
    let delivered = 0
    const deliver = (event: TaskEvent): void => {
      if (event.seq <= delivered) return
      delivered = event.seq
      sse.send(framing.event(event, call), event.seq)
      if (event.kind === 'status-update' && isTerminal(event.status.state)) sse.close()
    }
    // Live events that arrive while the Task or the missed events are being read wait for them; so does the
    // end of the subscription by a shutdown, which closes the stream after them.
    let early: TaskEvent[] | undefined = []
    let heardEarly: (() => void) | undefined
    let endedEarly = false
    const ended = () => {
      if (early) endedEarly = true
      else sse.close()
    }
    let subscribed: Awaited<ReturnType<typeof engine.subscribe>>
    try {
      subscribed = await engine.subscribe(
        taskId,
        (event) => {
          if (!early) return deliver(event)
          early.push(event)
          heardEarly?.()
        },
        ended,
        principal?.id,
      )
    } catch (error) {
      sse.close() // never sent: it must not count as open
      throw error
    }
    const { following, current, unsubscribe } = subscribed
    try {
      if (lastEventId === undefined) {
        // The Task and the number of the last event it reflects, read as the Task is written: events that changed
        // it since the subscription began are in it, and are not sent again.
        const { task, seq: reflected } = current()
        if (!following && isTerminal(task.status.state)) {
          throw new UnsupportedOperationError(
            `Task ${taskId} is ${task.status.state}: a finished task has no more events to subscribe to`,
          )
        }
        sse.send(framing.task(task, call), reflected)
        delivered = reflected ?? 0
      } else {
        let last = current().seq
        // On a shared store the instance running the task streams each event as it writes it: a client may resume
        // here from an event this instance has not read yet. The store's feed brings it (or the number was never
        // sent, and is refused below).
        if (engine.store.cluster && following && last !== undefined && lastEventId > last) {
          const caughtUp = await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(false), FEED_CATCH_UP_MS)
            heardEarly = () => {
              if (!early?.some((event) => event.seq >= lastEventId)) return
              clearTimeout(timer)
              resolve(true)
            }
            heardEarly()
          })
          heardEarly = undefined
          if (caughtUp) last = lastEventId
        }
        const missed =
          last === undefined ? undefined : lastEventId < last ? await engine.eventsAfter(taskId, lastEventId) : []
        if (!missed) throw notKept(taskId, lastEventId, dialect)
        if (lastEventId > last!)
          throw new InvalidParamsError(
            `Last-Event-ID ${lastEventId} is after the last event of task ${taskId} (${last})`,
          )
        delivered = lastEventId
        for (const event of missed) deliver(event)
      }
    } catch (error) {
      unsubscribe()
      sse.close()
      throw error
    }
    const waiting = early
    early = undefined
    for (const event of waiting) deliver(event)
    // Nothing more to send: the task had ended (a resume from Last-Event-ID), or ended while the Task was being
    // answered (the Task reflects its last event, which is not sent again), or the server no longer follows it.
    if (!following || endedEarly || isTerminal(current().task.status.state)) sse.close()
    sse.onCancel(unsubscribe)
    return sse.response
  }
}

/**
 * A resume from events the store no longer keeps (older than a task's event-log window, or the whole log of a
 * task that ended a while ago): the client is told to read the task instead, with the method of its dialect.
 */
function notKept(taskId: string, lastEventId: number, dialect: CallContext['dialect']): UnsupportedOperationError {
  const [get, subscribe] = dialect === 'a2a-1.0' ? ['GetTask', 'SubscribeToTask'] : ['tasks/get', 'tasks/resubscribe']
  return new UnsupportedOperationError(
    `The events of task ${taskId} after ${lastEventId} are no longer kept (a task keeps only its newest events, and drops them a while after it ends); fetch the task with ${get} for its current state, then, if it is still running, ${subscribe} without Last-Event-ID for what comes next`,
  )
}
