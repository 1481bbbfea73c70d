import type { Instrumentation } from './_hooks.js'

/**
 * What the `telemetry` option of `createA2AApp` and `serveAgent` takes: an instrumentation of the runtime, made by
 * `otelTelemetry()` (`a2a-runtime/telemetry`).
 */
export interface Telemetry {
  /** What it reports to: `opentelemetry`. */
  readonly name: string
}

// Kept apart from the object the app is given, so what an instrumentation is told stays the runtime's own to change.
const instrumentations = new WeakMap<Telemetry, Instrumentation>()

export function telemetryOf(name: string, instrumentation: Instrumentation): Telemetry {
  const telemetry: Telemetry = Object.freeze({ name })
  instrumentations.set(telemetry, instrumentation)
  return telemetry
}

/** The instrumentation behind a `Telemetry`; undefined for any other value. */
export const instrumentationOf = (telemetry: Telemetry): Instrumentation | undefined => instrumentations.get(telemetry)
