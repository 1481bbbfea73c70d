import * as api from '@opentelemetry/api'
import { ConfigurationError } from '../errors.js'
import { otelClientInstrumentation } from './_client-otel.js'
import { withClientSide } from './_client-telemetry.js'
import { DEFAULT_MAX_LINKED_TASKS, type OtelSettings, otelInstrumentation } from './_otel.js'
import { type Telemetry, telemetryOf } from './telemetry.js'

/** What the OpenTelemetry instrumentation records, and how many tasks' first spans it remembers for links. */
export interface OtelTelemetryOptions {
  /**
   * Record what messages and artifacts say: the client's message as `gen_ai.input.messages` on the span, each
   * artifact and status message as `gen_ai.output.messages` on its event (text and data; a file by its media type,
   * name and URI, never its bytes); on a client's span (`connect({ telemetry })`) the message it sent and what the
   * agent answered. Off, spans carry ids, states and names only, as the GenAI conventions ask.
   * @default false
   */
  captureContent?: boolean
  /**
   * Most tasks whose first span is remembered, so that the span of a follow-up message links to the trace that
   * started its task; past it the oldest are forgotten (their follow-ups have no link). A task that ends is forgotten
   * at once. 0 links nothing.
   * @default 10_000
   */
  maxLinkedTasks?: number
}

/**
 * OpenTelemetry spans for an app (`telemetry: otelTelemetry()`), per the A2A semantic conventions: a SERVER span per
 * A2A operation in every binding, named after its A2A v1.0 method, in the trace the request's `traceparent` names
 * (read by the registered propagator), and active while the agent's `execute` runs, so the spans the agent and its
 * framework start nest under it. Spans go to the tracer provider the process registers (an OpenTelemetry SDK, such
 * as `@opentelemetry/sdk-node`); with none, they cost next to nothing. `A2A_TELEMETRY=otel` does the same for an app
 * that is not given the option (`a2a dev`, `a2a start`). The same value given to the client (`connect({ telemetry })`
 * of `a2a-runtime/client`) makes a CLIENT span of each of its calls and sends its trace context to the agent.
 *
 * @example
 * import { otelTelemetry } from 'a2a-runtime/telemetry'
 * await serveAgent(agent, { telemetry: otelTelemetry() })
 */
export function otelTelemetry(options: OtelTelemetryOptions = {}): Telemetry {
  const settings = readOtelOptions(options)
  const telemetry = telemetryOf('opentelemetry', otelInstrumentation(api, settings))
  return withClientSide(telemetry, otelClientInstrumentation(api, { captureContent: settings.captureContent }))
}

/** The options, checked: a bad one is a ConfigurationError naming it. */
function readOtelOptions(options: OtelTelemetryOptions): OtelSettings {
  if (typeof options !== 'object' || options === null)
    throw new ConfigurationError('otelTelemetry() takes an object of options')
  const { captureContent = false, maxLinkedTasks = DEFAULT_MAX_LINKED_TASKS } = options
  if (typeof captureContent !== 'boolean')
    throw new ConfigurationError(`captureContent must be true or false (got ${JSON.stringify(captureContent)})`)
  if (!Number.isInteger(maxLinkedTasks) || maxLinkedTasks < 0)
    throw new ConfigurationError(`maxLinkedTasks must be a whole number, 0 or more (got ${maxLinkedTasks})`)
  return { captureContent, maxLinkedTasks }
}
