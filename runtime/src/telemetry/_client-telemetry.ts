import type { ClientInstrumentation } from './_client-hooks.js'
import { guardedClientInstrumentation, INSTRUMENTATION_FAILED, reportOnce } from './_guarded.js'
import type { Telemetry } from './telemetry.js'

// The client side of a `Telemetry`, kept apart from its server side (`telemetry.ts`) so the client core reaches only
// this map and the hooks' types: nothing of OpenTelemetry, nothing of the server.
const clientSides = new WeakMap<Telemetry, ClientInstrumentation>()

/** Gives `telemetry` a client side: what `connect({ telemetry })` reports to. */
export function withClientSide(telemetry: Telemetry, instrumentation: ClientInstrumentation): Telemetry {
  // Guarded: an SDK that throws is logged (once) and never fails a call.
  const report = reportOnce((error) => console.warn(`[a2a] ${INSTRUMENTATION_FAILED}`, error))
  clientSides.set(telemetry, guardedClientInstrumentation(instrumentation, report))
  return telemetry
}

/** The client side of a `Telemetry`; undefined for any other value. */
export const clientInstrumentationOf = (telemetry: unknown): ClientInstrumentation | undefined =>
  typeof telemetry === 'object' && telemetry !== null ? clientSides.get(telemetry as Telemetry) : undefined
