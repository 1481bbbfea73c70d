import { type A2AErrorName, A2AProtocolError } from './errors.js'

/**
 * One table of A2A's errors (§3.3.2) in both bindings, so an error has the same name whichever binding carried it:
 * the JSON-RPC code (§5.4, §9.5) and the ErrorInfo `reason` both bindings attach (§10.6, §11.6: the name in
 * UPPER_SNAKE_CASE without `Error`); for an HTTP+JSON answer with no ErrorInfo, its HTTP status (§5.4).
 */
const A2A_ERROR_CODES: Readonly<Record<Exclude<A2AErrorName, 'UnknownError'>, ErrorCodes>> = {
  TaskNotFoundError: { jsonrpc: -32001, reason: 'TASK_NOT_FOUND' },
  TaskNotCancelableError: { jsonrpc: -32002, reason: 'TASK_NOT_CANCELABLE' },
  PushNotificationNotSupportedError: { jsonrpc: -32003, reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED' },
  UnsupportedOperationError: { jsonrpc: -32004, reason: 'UNSUPPORTED_OPERATION' },
  ContentTypeNotSupportedError: { jsonrpc: -32005, reason: 'CONTENT_TYPE_NOT_SUPPORTED' },
  InvalidAgentResponseError: { jsonrpc: -32006, reason: 'INVALID_AGENT_RESPONSE' },
  ExtendedAgentCardNotConfiguredError: { jsonrpc: -32007, reason: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED' },
  ExtensionSupportRequiredError: { jsonrpc: -32008, reason: 'EXTENSION_SUPPORT_REQUIRED' },
  VersionNotSupportedError: { jsonrpc: -32009, reason: 'VERSION_NOT_SUPPORTED' },
  // JSON-RPC's own, with the reasons SDK servers give them over HTTP+JSON.
  ParseError: { jsonrpc: -32700, reason: 'PARSE_ERROR' },
  InvalidRequestError: { jsonrpc: -32600, reason: 'INVALID_REQUEST' },
  MethodNotFoundError: { jsonrpc: -32601, reason: 'METHOD_NOT_FOUND' },
  InvalidParamsError: { jsonrpc: -32602, reason: 'INVALID_PARAMS' },
  InternalError: { jsonrpc: -32603, reason: 'INTERNAL_ERROR' },
}

interface ErrorCodes {
  jsonrpc: number
  reason: string
}

const entries = Object.entries(A2A_ERROR_CODES) as Array<[A2AErrorName, ErrorCodes]>

/** A2A's error names by JSON-RPC code. */
export const BY_CODE: ReadonlyMap<number, A2AErrorName> = new Map(entries.map(([name, codes]) => [codes.jsonrpc, name]))

/** A2A's error names by ErrorInfo reason (with `INTERNAL`, another spelling servers give InternalError). */
export const BY_REASON: ReadonlyMap<string, A2AErrorName> = new Map([
  ...entries.map(([name, codes]) => [codes.reason, name] as const),
  ['INTERNAL', 'InternalError'],
])

/**
 * An HTTP+JSON error without an ErrorInfo, by its HTTP status as A2A's table (§5.4) gives it: 404 is
 * TaskNotFoundError where the request names a task (over JSON-RPC the same answer is -32001), else a path the agent
 * does not serve; 409 and 415 are what A2A v1.0.0's table gave TaskNotCancelableError and
 * ContentTypeNotSupportedError; the rest, a request the agent could not read (400, 413), a method it does not serve
 * (405, 501), its own failure (500).
 */
function nameOfStatus(status: number, namesTask: boolean): A2AErrorName | undefined {
  switch (status) {
    case 400:
      return 'InvalidParamsError'
    case 404:
      return namesTask ? 'TaskNotFoundError' : 'MethodNotFoundError'
    case 405:
    case 501:
      return 'MethodNotFoundError'
    case 409:
      return 'TaskNotCancelableError'
    case 413:
      return 'InvalidRequestError'
    case 415:
      return 'ContentTypeNotSupportedError'
    case 500:
      return 'InternalError'
    default:
      return undefined
  }
}

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

/** Credentials an agent echoed back, replaced before its words reach anyone (`[redacted]`). */
type Redact = (text: string) => string

/** The agent's details with every credential it echoed redacted, in the same structure. */
function redactedDetails(details: unknown, redact: Redact): unknown {
  if (details === undefined) return undefined
  const text = JSON.stringify(details)
  const redacted = redact(text)
  return redacted === text ? details : JSON.parse(redacted)
}

/** A JSON-RPC error object as the A2A error it names (by code; an unknown code by its ErrorInfo's reason). */
export function jsonRpcError(
  error: { code?: unknown; message?: unknown; data?: unknown },
  redact: Redact,
): A2AProtocolError {
  const code = typeof error.code === 'number' ? error.code : Number.NaN
  const reason = reasonOf(error.data)
  const name = BY_CODE.get(code) ?? (reason === undefined ? undefined : BY_REASON.get(reason)) ?? 'UnknownError'
  const message = redact(textOf(error.message, `JSON-RPC error ${code}`))
  return new A2AProtocolError(name, message, code, redactedDetails(error.data, redact))
}

/**
 * A REST `google.rpc.Status` (the body's `error`) at HTTP `status` as the A2A error it names; `namesTask`: the
 * request's path names a task (`/tasks/{id}…`).
 */
export function restError(
  error: { code?: unknown; status?: unknown; message?: unknown; details?: unknown },
  status: number,
  { namesTask, redact }: { namesTask: boolean; redact: Redact },
): A2AProtocolError {
  const reason = reasonOf(error.details)
  const name =
    (reason === undefined ? undefined : BY_REASON.get(reason)) ?? nameOfStatus(status, namesTask) ?? 'UnknownError'
  const a2aCode = redact(reason ?? (typeof error.status === 'string' ? error.status : String(status)))
  const message = redact(textOf(error.message, `HTTP ${status}`))
  const named = new A2AProtocolError(name, message, a2aCode, redactedDetails(error.details, redact))
  httpStatuses.set(named, status)
  return named
}

/**
 * The HTTP status an HTTP+JSON error came with, which a call's span records as its `error.type` (as the agent's own
 * span does over that binding), kept beside the error so its public fields stay what they are.
 */
const httpStatuses = new WeakMap<A2AProtocolError, number>()

export const httpStatusOf = (error: A2AProtocolError): number | undefined => httpStatuses.get(error)
