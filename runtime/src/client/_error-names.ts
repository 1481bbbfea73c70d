import { type A2AErrorName, A2AProtocolError } from './errors.js'

/**
 * One table from each binding's error codes to A2A's error names, so an error has the same name whichever binding
 * carried it: JSON-RPC codes (A2A v1.0 §5.4, §9.5), the ErrorInfo `reason` both bindings attach (§10.6, §11.6:
 * the name in UPPER_SNAKE_CASE without `Error`), and for a REST answer with no ErrorInfo its HTTP status.
 */

export const BY_CODE = new Map<number, A2AErrorName>([
  [-32001, 'TaskNotFoundError'],
  [-32002, 'TaskNotCancelableError'],
  [-32003, 'PushNotificationNotSupportedError'],
  [-32004, 'UnsupportedOperationError'],
  [-32005, 'ContentTypeNotSupportedError'],
  [-32006, 'InvalidAgentResponseError'],
  [-32007, 'ExtendedAgentCardNotConfiguredError'],
  [-32008, 'ExtensionSupportRequiredError'],
  [-32009, 'VersionNotSupportedError'],
  [-32700, 'ParseError'],
  [-32600, 'InvalidRequestError'],
  [-32601, 'MethodNotFoundError'],
  [-32602, 'InvalidParamsError'],
  [-32603, 'InternalError'],
])

export const BY_REASON = new Map<string, A2AErrorName>([
  ['TASK_NOT_FOUND', 'TaskNotFoundError'],
  ['TASK_NOT_CANCELABLE', 'TaskNotCancelableError'],
  ['PUSH_NOTIFICATION_NOT_SUPPORTED', 'PushNotificationNotSupportedError'],
  ['UNSUPPORTED_OPERATION', 'UnsupportedOperationError'],
  ['CONTENT_TYPE_NOT_SUPPORTED', 'ContentTypeNotSupportedError'],
  ['INVALID_AGENT_RESPONSE', 'InvalidAgentResponseError'],
  ['EXTENDED_AGENT_CARD_NOT_CONFIGURED', 'ExtendedAgentCardNotConfiguredError'],
  ['EXTENSION_SUPPORT_REQUIRED', 'ExtensionSupportRequiredError'],
  ['VERSION_NOT_SUPPORTED', 'VersionNotSupportedError'],
  // Reasons SDK servers give the JSON-RPC errors over REST.
  ['PARSE_ERROR', 'ParseError'],
  ['INVALID_REQUEST', 'InvalidRequestError'],
  ['METHOD_NOT_FOUND', 'MethodNotFoundError'],
  ['INVALID_PARAMS', 'InvalidParamsError'],
  ['INTERNAL_ERROR', 'InternalError'],
  ['INTERNAL', 'InternalError'],
])

/**
 * A REST error without an ErrorInfo, by HTTP status: a request the agent could not read (400), a path or method it
 * does not serve (404, 405, 501), a body it refused (413, 415), its own failure (500).
 */
const BY_STATUS = new Map<number, A2AErrorName>([
  [400, 'InvalidParamsError'],
  [404, 'MethodNotFoundError'],
  [405, 'MethodNotFoundError'],
  [413, 'InvalidRequestError'],
  [415, 'InvalidRequestError'],
  [500, 'InternalError'],
  [501, 'MethodNotFoundError'],
])

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo'

/** The `reason` of the first ErrorInfo among `details`, if any. */
function reasonOf(details: unknown): string | undefined {
  if (!Array.isArray(details)) return undefined
  for (const detail of details) {
    const { '@type': type, reason } = (detail ?? {}) as { '@type'?: unknown; reason?: unknown }
    if (type === ERROR_INFO && typeof reason === 'string') return reason
  }
  return undefined
}

const textOf = (message: unknown, fallback: string) =>
  typeof message === 'string' && message.trim() ? message : fallback

/** A JSON-RPC error object as the A2A error it names (by code; an unknown code by its ErrorInfo's reason). */
export function jsonRpcError(error: { code?: unknown; message?: unknown; data?: unknown }): A2AProtocolError {
  const code = typeof error.code === 'number' ? error.code : Number.NaN
  const reason = reasonOf(error.data)
  const name = BY_CODE.get(code) ?? (reason === undefined ? undefined : BY_REASON.get(reason)) ?? 'UnknownError'
  return new A2AProtocolError(name, textOf(error.message, `JSON-RPC error ${code}`), code, error.data)
}

/** A REST `google.rpc.Status` (the body's `error`) at HTTP `status` as the A2A error it names. */
export function restError(
  error: { code?: unknown; status?: unknown; message?: unknown; details?: unknown },
  status: number,
): A2AProtocolError {
  const reason = reasonOf(error.details)
  const name = (reason === undefined ? undefined : BY_REASON.get(reason)) ?? BY_STATUS.get(status) ?? 'UnknownError'
  const a2aCode = reason ?? (typeof error.status === 'string' ? error.status : String(status))
  return new A2AProtocolError(name, textOf(error.message, `HTTP ${status}`), a2aCode, error.details)
}
