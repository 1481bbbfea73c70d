import type { ClientCall, ClientInstrumentation } from './_client-hooks.js'
import { withClientSide } from './_client-telemetry.js'
import type { Telemetry } from './telemetry.js'

/**
 * A trace given from outside (the `a2a` commands' `--traceparent`, or OpenTelemetry's `TRACEPARENT` and `TRACESTATE`
 * environment variables for command-line tools): every request of the client carries it as it is, so the agent's
 * spans join that trace as children of the span it names. Nothing is recorded and nothing of OpenTelemetry is loaded:
 * a script that traces stitches the commands it runs into its own trace.
 */

export interface TraceContext {
  traceparent: string
  tracestate?: string | undefined
}

// W3C Trace Context: version-traceid-parentid-flags in lowercase hex; a later version may append fields.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
const ZEROS = /^0+$/

/** Whether `value` is a `traceparent` a W3C propagator accepts (version ff and all-zero ids are invalid). */
export function isTraceparent(value: string): boolean {
  const match = TRACEPARENT.exec(value)
  if (!match) return false
  const [, version, traceId, parentId, , rest] = match
  if (version === 'ff' || (version === '00' && rest !== undefined)) return false
  return !ZEROS.test(traceId!) && !ZEROS.test(parentId!)
}

/** A `Telemetry` for the client that sends `trace` with every request and records nothing. */
export function givenTraceTelemetry(trace: TraceContext): Telemetry {
  const headers: Record<string, string> = { traceparent: trace.traceparent }
  if (trace.tracestate) headers.tracestate = trace.tracestate
  const call: ClientCall = {
    headers,
    run: (request) => request(),
    streamEvent() {},
    returned() {},
    failed() {},
  }
  const instrumentation: ClientInstrumentation = { call: () => call }
  return withClientSide(Object.freeze({ name: 'traceparent' }), instrumentation)
}
