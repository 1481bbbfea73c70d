import type { JsonValue } from '@bufbuild/protobuf'
import type { GrpcProbeClient, ProbeOutcome } from '../../grpc/_probe-client.js'
import { GRPC_PERMISSION_DENIED, GRPC_UNAUTHENTICATED, grpcName } from './_errors-table.js'
import type { Answer, CallOptions, Json, StreamAnswer, Wire, WireOptions } from './_wire.js'

/**
 * The gRPC binding (A2A v1.0 §10) through the runtime's probe client, where its optional packages (@grpc/grpc-js,
 * @bufbuild/protobuf) are installed: `undefined` when they are not, and the transport is reported as not run.
 */
export async function grpcWire(address: string, options: WireOptions): Promise<Wire | undefined> {
  let client: GrpcProbeClient
  try {
    const { grpcProbeClient } = await import('../../grpc/_probe-client.js')
    client = grpcProbeClient(address.replace(/^grpcs?:\/\//, '').replace(/\/$/, ''), options.timeoutMs)
  } catch {
    return undefined
  }
  // Credentials travel as metadata, under the header names the card's schemes give them (gRPC has no query
  // parameter or cookie to carry an API key that a scheme puts there).
  const metadata = options.credentials?.headers ?? {}
  const call = (operation: string, params: Json, version: string | null | undefined) =>
    client.call(operation, (options.tenant ? { ...params, tenant: options.tenant } : params) as JsonValue, {
      ...metadata,
      // Metadata cannot be left out here: an empty value is what the spec reads as none (§3.6.2).
      ...(version !== undefined && { 'a2a-version': version ?? '' }),
    })
  return {
    transport: 'grpc',
    url: address,
    call: async (operation, params, callOptions: CallOptions = {}) =>
      answerOf(await call(operation, params, callOptions.version)),
    async stream(operation, params) {
      const outcome = await call(operation, params, undefined)
      return 'answers' in outcome ? { events: outcome.answers as Json[], envelopeProblems: [] } : answerOf(outcome)
    },
    close: () => client.close(),
  }
}

const DEADLINE_EXCEEDED = 4
const UNAVAILABLE = 14

function answerOf(outcome: ProbeOutcome): Answer & StreamAnswer {
  if ('answers' in outcome) return { value: outcome.answers[0] as Json, envelopeProblems: [] }
  if (outcome.code === GRPC_UNAUTHENTICATED) return { refused: 401, envelopeProblems: [] }
  if (outcome.code === GRPC_PERMISSION_DENIED) return { refused: 403, envelopeProblems: [] }
  if (outcome.code === DEADLINE_EXCEEDED || outcome.code === UNAVAILABLE)
    return { problem: `${grpcName(outcome.code)}: ${outcome.message}`, envelopeProblems: [] }
  return {
    error: {
      code: outcome.code,
      ...(outcome.reason !== undefined && { reason: outcome.reason }),
      // The probe client reads the reason of the status details' ErrorInfo, not its domain.
      a2aDomain: outcome.reason !== undefined,
      message: outcome.message,
      shapeProblems: [],
      summary: `${grpcName(outcome.code)}${outcome.reason ? ` (${outcome.reason})` : ''}: ${outcome.message}`,
    },
    envelopeProblems: [],
  }
}
