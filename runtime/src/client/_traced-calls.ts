import type { ClientCall, ClientCallStart, ClientInstrumentation } from '../telemetry/_client-hooks.js'
import { httpStatusOf } from './_error-names.js'
import type { CallOptions, StreamEvent, StreamOperation, StreamOptions, Traced, UnaryOperation } from './_transport.js'
import { A2AClientFailure, A2AProtocolError } from './errors.js'
import type { JsonObject } from './types.js'

/**
 * The client's calls reported to an instrumentation (`connect({ telemetry })`): each call is one operation of it, its
 * requests run in the call's context and carry its trace headers. Chosen once at `connect`, so a client without
 * telemetry calls its transport directly.
 */

type Unary = (operation: UnaryOperation, request: JsonObject, options: Traced<CallOptions>) => Promise<unknown>
type Stream = (
  operation: StreamOperation,
  request: JsonObject,
  options: Traced<StreamOptions>,
) => AsyncGenerator<StreamEvent>

/** What every call of a connection says of where it goes. */
export type CallTarget = Omit<ClientCallStart, 'method' | 'request'>

/** `answer` (a unary call and the check of its answer) as one reported call each time. */
export function tracedUnary(instrumentation: ClientInstrumentation, target: CallTarget, answer: Unary): Unary {
  return async (operation, request, options) => {
    const call = instrumentation.call({ ...target, method: operation, request })
    let result: unknown
    try {
      result = await call.run(() => answer(operation, request, { ...options, traceHeaders: call.headers }))
    } catch (error) {
      call.failed(error, errorTypeOf(error))
      throw error
    }
    call.returned(result)
    return result
  }
}

/** `open` (a stream) as one reported call, from its first read until it ends or its reader stops. */
export function tracedStream(instrumentation: ClientInstrumentation, target: CallTarget, open: Stream): Stream {
  return (operation, request, options) =>
    events(instrumentation, { ...target, method: operation, request }, (headers) =>
      open(operation, request, { ...options, traceHeaders: headers }),
    )
}

async function* events(
  instrumentation: ClientInstrumentation,
  about: ClientCallStart,
  open: (headers: ClientCall['headers']) => AsyncGenerator<StreamEvent>,
): AsyncGenerator<StreamEvent> {
  // Begun at the first read, not when the stream is made: a stream never read is no call.
  const call = instrumentation.call(about)
  const stream = open(call.headers)
  let ended = false
  try {
    for (;;) {
      // Each read in the call's context: the request, and every read of the answer, nest under its span.
      const step = await call.run(() => stream.next())
      if (step.done) break
      call.streamEvent(step.value.response)
      yield step.value
    }
    ended = true
    call.returned(undefined)
  } catch (error) {
    ended = true
    call.failed(error, errorTypeOf(error))
    throw error
  } finally {
    if (!ended) {
      // The reader left the loop (break, return): the call ends here, and the stream's body is let go.
      call.returned(undefined)
      await stream.return(undefined)
    }
  }
}

/**
 * What a call failed with, as the A2A semantic conventions' `error.type`: the agent's JSON-RPC error code, or the
 * HTTP status of an HTTP+JSON error (what the agent's own span says); the kind of a failure without an A2A answer
 * (`timeout`, `unreachable`, `auth-failed`…); else the error's name (an aborted call's `AbortError`).
 */
function errorTypeOf(error: unknown): string {
  if (error instanceof A2AProtocolError) {
    if (typeof error.a2aCode === 'number') return String(error.a2aCode)
    return String(httpStatusOf(error) ?? error.a2aCode)
  }
  if (error instanceof A2AClientFailure) return error.kind
  return error instanceof Error ? error.name : '_OTHER'
}
