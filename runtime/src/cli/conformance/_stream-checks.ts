import type { BindingRun } from './_binding-run.js'
import { textMessage, unknownTaskId } from './_core-checks.js'
import { actualOf, expectError, INTERRUPTED, streamKind, TERMINAL } from './_expect.js'
import type { RequirementId } from './_requirements.js'
import { fail, type Verdict } from './_results.js'
import { describe, type Json, type StreamAnswer } from './_wire.js'

/** How each binding frames a stream, and the requirement that says so. */
const FRAMING: Record<string, RequirementId> = {
  jsonrpc: 'JSONRPC-SSE-001',
  http_json: 'HTTP_JSON-SSE-001',
  grpc: 'GRPC-ERR-003',
}

const NOT_STREAMED = 'the streaming send answered no stream'

/**
 * Streaming over one interface (A2A v1.0 §3.1.2, §3.1.6, §3.5.2) when the card declares it, else the error that
 * says it is not supported (§3.3.4). `ended` is a task of this run that has ended, for SubscribeToTask's refusal.
 */
export async function streamChecks(run: BindingRun, ended: Json | undefined): Promise<void> {
  const { results, transport } = run
  if (run.card.capabilities?.streaming !== true) {
    await results.check('CORE-CAP-002', transport, async () =>
      expectError(
        transport,
        run.seen,
        'SendStreamingMessage',
        await run.stream('SendStreamingMessage', textMessage('hello')),
        'UnsupportedOperationError',
      ),
    )
    return
  }
  const streamed = await run.stream('SendStreamingMessage', textMessage('hello'))
  const events = streamed.events ?? []
  const streamTaskId = events[0] ? taskIdOf(events[0]) : undefined
  if (typeof streamTaskId === 'string') run.started.add(streamTaskId)
  await results.check('CORE-STREAM-001', transport, () =>
    streamed.events === undefined
      ? fail('a stream of StreamResponse events', actualOf(streamed))
      : events.length === 0
        ? fail('at least one event', 'the stream closed without one')
        : undefined,
  )
  await results.check(FRAMING[transport]!, transport, () => framingProblem(transport, streamed))
  if (streamed.events === undefined || events.length === 0) {
    for (const id of ['CORE-STREAM-002', 'CORE-STREAM-003', 'STREAM-ORDER-001'] as const)
      results.skip(id, transport, NOT_STREAMED)
  } else if (events[0]?.message !== undefined) {
    await results.check('CORE-STREAM-002', transport, () =>
      events.length === 1 ? undefined : fail('the one Message, then the end', `${events.length} events`),
    )
    results.skip('CORE-STREAM-003', transport, 'the agent answered the streaming message with a Message')
    results.skip('STREAM-ORDER-001', transport, 'the agent answered the streaming message with a Message')
  } else {
    results.skip('CORE-STREAM-002', transport, 'the agent answered the streaming message with a task')
    await results.check('CORE-STREAM-003', transport, () => lifecycleProblem(events, streamed))
    await results.check('STREAM-ORDER-001', transport, () => orderProblem(events))
  }
  const finalState = lastState(events)
  if (typeof streamTaskId === 'string' && TERMINAL.has(finalState ?? '')) run.started.delete(streamTaskId)

  if (ended)
    await results.check('STREAM-SUB-003', transport, async () =>
      expectError(
        transport,
        run.seen,
        'SubscribeToTask',
        await run.stream('SubscribeToTask', { id: ended.id }),
        'UnsupportedOperationError',
      ),
    )
  else results.skip('STREAM-SUB-003', transport, 'no task of this run ended')
  await results.check('STREAM-SUB-004', transport, async () =>
    expectError(
      transport,
      run.seen,
      'SubscribeToTask',
      await run.stream('SubscribeToTask', { id: unknownTaskId() }),
      'TaskNotFoundError',
    ),
  )
}

function framingProblem(transport: string, streamed: StreamAnswer): Verdict {
  if (streamed.events === undefined) return fail('a stream', actualOf(streamed))
  if (transport !== 'grpc' && !streamed.contentType?.startsWith('text/event-stream'))
    return fail('Content-Type text/event-stream', streamed.contentType || 'none')
  if (streamed.eventProblem) return fail('every event framed as the binding frames it', streamed.eventProblem)
  for (const event of streamed.events) {
    const kind = streamKind(event)
    if (typeof kind !== 'string') return fail('every event a StreamResponse', kind.problem)
  }
  return undefined
}

/** The state an event tells of, if it tells one. */
function stateOf(event: Json): string | undefined {
  return event.task?.status?.state ?? event.statusUpdate?.status?.state
}

function lastState(events: Json[]): string | undefined {
  return events
    .map(stateOf)
    .filter((state) => state !== undefined)
    .at(-1)
}

const isFinal = (state: string | undefined) => state !== undefined && (TERMINAL.has(state) || INTERRUPTED.has(state))

function lifecycleProblem(events: Json[], streamed: StreamAnswer): Verdict {
  if (events[0]?.task === undefined)
    return fail(
      'the Task as the first event',
      `${typeof streamKind(events[0]) === 'string' ? streamKind(events[0]) : describe(events[0])} first`,
    )
  if (streamed.error) return fail('the stream to end with the task', `it ended with ${streamed.error.summary}`)
  const state = lastState(events)
  return isFinal(state)
    ? undefined
    : fail('a terminal or interrupted state before the stream closed', `last state ${describe(state)}`)
}

/** The task an event is of. */
const taskIdOf = (event: Json): unknown => event.task?.id ?? event.statusUpdate?.taskId ?? event.artifactUpdate?.taskId

function orderProblem(events: Json[]): Verdict {
  const taskId = taskIdOf(events[0]!)
  for (const [index, event] of events.entries()) {
    const id = taskIdOf(event)
    if (id !== taskId) return fail(`every event of the task ${describe(taskId)}`, `event ${index} of ${describe(id)}`)
  }
  const final = events.findIndex((event) => isFinal(stateOf(event)))
  // A final Task snapshot may follow the final state (§11.7).
  const after = final === -1 ? [] : events.slice(final + 1).filter((event) => event.task === undefined)
  return after.length === 0
    ? undefined
    : fail(
        'nothing after the final state but a Task snapshot',
        `${after.length} event(s) after it, first ${describe(after[0])}`,
      )
}
