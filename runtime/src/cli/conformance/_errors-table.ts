import { BY_CODE, BY_REASON } from '../../client/_error-names.js'
import type { A2AErrorName } from '../../client/errors.js'

/**
 * A2A v1.0's errors in each binding (§5.4, §9.5) as the checks expect them. The JSON-RPC code and the ErrorInfo
 * reason of each are the client core's (client/_error-names.ts, the one table from codes to names); what a client
 * never needs, the HTTP status and the gRPC status code an agent answers each error with, is kept here.
 * `alsoHttp` / `alsoGrpc` are what v1.0.0's table said before the v1.0.1 errata moved them (409 and 415 to 400,
 * UNIMPLEMENTED to FAILED_PRECONDITION): an agent built on v1.0.0's text still passes.
 */

export interface ErrorMapping {
  jsonrpc: number
  http: number
  /** gRPC status code number. */
  grpc: number
  /** The ErrorInfo reason, for A2A's own errors (those past JSON-RPC's standard ones). */
  reason?: string
  alsoHttp?: number
  alsoGrpc?: number
}

const INVALID_ARGUMENT = 3
const NOT_FOUND = 5
const FAILED_PRECONDITION = 9
const UNIMPLEMENTED = 12
const INTERNAL = 13

export const GRPC_UNAUTHENTICATED = 16
export const GRPC_PERMISSION_DENIED = 7

type Statuses = Pick<ErrorMapping, 'http' | 'grpc' | 'alsoHttp' | 'alsoGrpc'>

/** The errors the checks expect, by the client core's names, with the statuses a server answers them with. */
const STATUSES = {
  TaskNotFoundError: { http: 404, grpc: NOT_FOUND },
  TaskNotCancelableError: { http: 400, grpc: FAILED_PRECONDITION, alsoHttp: 409 },
  PushNotificationNotSupportedError: { http: 400, grpc: FAILED_PRECONDITION, alsoGrpc: UNIMPLEMENTED },
  UnsupportedOperationError: { http: 400, grpc: FAILED_PRECONDITION, alsoGrpc: UNIMPLEMENTED },
  ContentTypeNotSupportedError: { http: 400, grpc: INVALID_ARGUMENT, alsoHttp: 415 },
  InvalidAgentResponseError: { http: 500, grpc: INTERNAL },
  ExtendedAgentCardNotConfiguredError: { http: 400, grpc: FAILED_PRECONDITION },
  ExtensionSupportRequiredError: { http: 400, grpc: FAILED_PRECONDITION },
  VersionNotSupportedError: { http: 400, grpc: FAILED_PRECONDITION, alsoGrpc: UNIMPLEMENTED },
  ParseError: { http: 400, grpc: INVALID_ARGUMENT },
  MethodNotFoundError: { http: 404, grpc: UNIMPLEMENTED },
  InvalidParamsError: { http: 400, grpc: INVALID_ARGUMENT },
} satisfies Partial<Record<A2AErrorName, Statuses>>

export type CheckedErrorName = keyof typeof STATUSES

/** JSON-RPC's implementation-defined server errors, where A2A's own codes are (§9.5). */
const isA2ACode = (code: number) => code >= -32099 && code <= -32000

function mappingOf(name: CheckedErrorName, statuses: Statuses): ErrorMapping {
  const jsonrpc = [...BY_CODE].find(([, named]) => named === name)?.[0]
  if (jsonrpc === undefined) throw new Error(`the client core names no JSON-RPC code for ${name}`)
  const reason = isA2ACode(jsonrpc) ? [...BY_REASON].find(([, named]) => named === name)?.[0] : undefined
  return { jsonrpc, ...statuses, ...(reason !== undefined && { reason }) }
}

export const A2A_ERRORS = Object.fromEntries(
  Object.entries(STATUSES).map(([name, statuses]) => [name, mappingOf(name as CheckedErrorName, statuses)]),
) as Record<CheckedErrorName, ErrorMapping>

const GRPC_NAMES: Record<number, string> = {
  [INVALID_ARGUMENT]: 'INVALID_ARGUMENT',
  [NOT_FOUND]: 'NOT_FOUND',
  [FAILED_PRECONDITION]: 'FAILED_PRECONDITION',
  [UNIMPLEMENTED]: 'UNIMPLEMENTED',
  [INTERNAL]: 'INTERNAL',
  [GRPC_UNAUTHENTICATED]: 'UNAUTHENTICATED',
  [GRPC_PERMISSION_DENIED]: 'PERMISSION_DENIED',
}

/** A gRPC status code by its name, for reports. */
export const grpcName = (code: number): string => GRPC_NAMES[code] ?? `status ${code}`

/** Whether a reason is one of A2A's own (its errors past JSON-RPC's standard ones). */
export const isA2AReason = (reason: unknown): boolean =>
  typeof reason === 'string' && Object.values(A2A_ERRORS).some((mapping) => mapping.reason === reason)
