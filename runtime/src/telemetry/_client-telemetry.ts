import type { ClientInstrumentation } from './_client-hooks.js'
import type { Telemetry } from './telemetry.js'

// The client side of a `Telemetry`, kept apart from its server side (`telemetry.ts`) so the client core reaches only
// this map and the hooks' types: nothing of OpenTelemetry, nothing of the server.
const clientSides = new WeakMap<Telemetry, ClientInstrumentation>()

/** Gives `telemetry` a client side: what `connect({ telemetry })` reports to. */
export function withClientSide(telemetry: Telemetry, instrumentation: ClientInstrumentation): Telemetry {
  clientSides.set(telemetry, instrumentation)
  return telemetry
}

/** The client side of a `Telemetry`; undefined for any other value. */
export const clientInstrumentationOf = (telemetry: unknown): ClientInstrumentation | undefined =>
  typeof telemetry === 'object' && telemetry !== null ? clientSides.get(telemetry as Telemetry) : undefined
