/**
 * A2A v1.0's errors in each binding (§5.4, §9.5): the JSON-RPC code, the HTTP status and the gRPC status code of
 * each, and the ErrorInfo reason of the A2A ones. `alsoHttp` / `alsoGrpc` are what v1.0.0's table said before the
 * v1.0.1 errata moved them (409 and 415 to 400, UNIMPLEMENTED to FAILED_PRECONDITION): an agent built on v1.0.0's
 * text still passes.
 */

export interface ErrorMapping {
  jsonrpc: number
  http: number
  /** gRPC status code number. */
  grpc: number
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

export const A2A_ERRORS = {
  TaskNotFoundError: { jsonrpc: -32001, http: 404, grpc: NOT_FOUND, reason: 'TASK_NOT_FOUND' },
  TaskNotCancelableError: {
    jsonrpc: -32002,
    http: 400,
    grpc: FAILED_PRECONDITION,
    reason: 'TASK_NOT_CANCELABLE',
    alsoHttp: 409,
  },
  PushNotificationNotSupportedError: {
    jsonrpc: -32003,
    http: 400,
    grpc: FAILED_PRECONDITION,
    reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
    alsoGrpc: UNIMPLEMENTED,
  },
  UnsupportedOperationError: {
    jsonrpc: -32004,
    http: 400,
    grpc: FAILED_PRECONDITION,
    reason: 'UNSUPPORTED_OPERATION',
    alsoGrpc: UNIMPLEMENTED,
  },
  ContentTypeNotSupportedError: {
    jsonrpc: -32005,
    http: 400,
    grpc: INVALID_ARGUMENT,
    reason: 'CONTENT_TYPE_NOT_SUPPORTED',
    alsoHttp: 415,
  },
  InvalidAgentResponseError: { jsonrpc: -32006, http: 500, grpc: INTERNAL, reason: 'INVALID_AGENT_RESPONSE' },
  ExtendedAgentCardNotConfiguredError: {
    jsonrpc: -32007,
    http: 400,
    grpc: FAILED_PRECONDITION,
    reason: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
  },
  ExtensionSupportRequiredError: {
    jsonrpc: -32008,
    http: 400,
    grpc: FAILED_PRECONDITION,
    reason: 'EXTENSION_SUPPORT_REQUIRED',
  },
  VersionNotSupportedError: {
    jsonrpc: -32009,
    http: 400,
    grpc: FAILED_PRECONDITION,
    reason: 'VERSION_NOT_SUPPORTED',
    alsoGrpc: UNIMPLEMENTED,
  },
  ParseError: { jsonrpc: -32700, http: 400, grpc: INVALID_ARGUMENT },
  MethodNotFoundError: { jsonrpc: -32601, http: 404, grpc: UNIMPLEMENTED },
  InvalidParamsError: { jsonrpc: -32602, http: 400, grpc: INVALID_ARGUMENT },
} satisfies Record<string, ErrorMapping>

export type A2AErrorName = keyof typeof A2A_ERRORS

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
  typeof reason === 'string' &&
  Object.values(A2A_ERRORS).some((mapping) => 'reason' in mapping && mapping.reason === reason)
