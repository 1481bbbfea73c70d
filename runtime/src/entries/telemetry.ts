// `a2a-runtime/telemetry`: OpenTelemetry spans of every A2A operation (`@opentelemetry/api` is an optional peer).
export type { OtelTelemetryOptions } from '../telemetry/otel-telemetry.js'
export { otelTelemetry } from '../telemetry/otel-telemetry.js'
export type { Telemetry } from '../telemetry/telemetry.js'
