import { ConfigurationError } from '../../errors.js'
import { type Env, envValue } from '../../settings.js'

/** Where a trace's id goes in the viewer's address. */
const PLACEHOLDER = '{traceId}'

/**
 * The trace viewer's address for a trace, `A2A_TRACE_URL` with `{traceId}` where the id goes (Jaeger:
 * `http://localhost:16686/trace/{traceId}`); undefined when unset. One that is no http: or https: address, or has no
 * `{traceId}`, is a ConfigurationError naming the variable.
 */
export function readTraceUrl(env: Env): string | undefined {
  const template = envValue(env, 'A2A_TRACE_URL')?.trim()
  if (template === undefined) return undefined
  let protocol: string | undefined
  try {
    protocol = new URL(template.replaceAll(PLACEHOLDER, '0'.repeat(32))).protocol
  } catch {
    // said below
  }
  if (!template.includes(PLACEHOLDER) || (protocol !== 'http:' && protocol !== 'https:'))
    throw new ConfigurationError(
      `A2A_TRACE_URL must be an http: or https: address with ${PLACEHOLDER} where the trace id goes, e.g. http://localhost:16686/trace/${PLACEHOLDER} (got ${JSON.stringify(template.slice(0, 200))})`,
    )
  return template
}
