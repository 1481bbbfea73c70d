import type { Metadata } from '@grpc/grpc-js'
import { A2AError } from '../errors.js'
import { INTERNAL, statusOf } from '../grpc/_status.js'
import type { OperationStart } from './_hooks.js'
import type { TracedCall } from './_traced-call.js'

/** What the gRPC binding tells an instrumentation beyond the HTTP bindings (loaded only with gRPC). */

/** A gRPC call of the v1.0 `method`, its trace context read from its metadata. */
export const tracedGrpc = (method: string, card: OperationStart['card'], metadata: Metadata): TracedCall => ({
  transport: 'grpc',
  method,
  card,
  errorCode: grpcErrorCode,
  carrier: traceCarrier(metadata),
})

/** The gRPC status code a failed call ends with (`error.type`). */
const grpcErrorCode = (error: unknown): number => (error instanceof A2AError ? statusOf(error) : INTERNAL).code

const TRACE_KEYS = ['traceparent', 'tracestate', 'baggage'] as const

/** The call's W3C trace context (metadata entries of the same names as the HTTP headers), as headers. */
function traceCarrier(metadata: Metadata): Headers {
  const headers = new Headers()
  for (const key of TRACE_KEYS) {
    const values = metadata.get(key).filter((value): value is string => typeof value === 'string')
    if (values.length > 0) headers.set(key, values.join(','))
  }
  return headers
}
