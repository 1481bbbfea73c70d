import { type A2AError, ErrorCode, InvalidParamsError, TaskNotFoundError } from '../errors.js'
import { v1Binding } from './_v1.js'

/**
 * Errors of the HTTP+JSON binding as `google.rpc.Status` JSON (§11.6): `{"error": {"code", "status", "message",
 * "details"}}`, `code` the HTTP status, `status` the canonical code's name. A2A errors carry the same ErrorInfo the
 * JSON-RPC binding sends (reason, domain `a2a-protocol.org`) at the HTTP status of §5.4; invalid params a
 * `google.rpc.BadRequest` naming the field. Params are named as a REST client gives them: a body field or a query
 * parameter by its name (`message.parts`), where JSON-RPC says `params.message.parts`.
 */

/** The HTTP status and canonical code of each A2A error (§5.4). */
const A2A_STATUSES: Record<number, [number, string]> = {
  [ErrorCode.TaskNotFound]: [404, 'NOT_FOUND'],
  [ErrorCode.TaskNotCancelable]: [400, 'FAILED_PRECONDITION'],
  [ErrorCode.PushNotificationNotSupported]: [400, 'FAILED_PRECONDITION'],
  [ErrorCode.UnsupportedOperation]: [400, 'FAILED_PRECONDITION'],
  [ErrorCode.ContentTypeNotSupported]: [400, 'INVALID_ARGUMENT'],
  [ErrorCode.ExtendedCardNotConfigured]: [400, 'FAILED_PRECONDITION'],
  [ErrorCode.VersionNotSupported]: [400, 'FAILED_PRECONDITION'],
}

/** The canonical code of an HTTP status the binding answers with (google.rpc.Code's HTTP mapping). */
const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'UNIMPLEMENTED',
  // As gRPC answers a message over its size limit.
  413: 'RESOURCE_EXHAUSTED',
  415: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
}

const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest'

/** A Status body. */
export function statusJson(code: number, message: string, details?: unknown[], status?: string): string {
  const error = { code, status: status ?? STATUS_NAMES[code] ?? 'UNKNOWN', message, ...(details && { details }) }
  return JSON.stringify({ error })
}

/** A field's path as a REST client wrote it: a body field or query parameter by its own name. */
export const restNames = (text: string): string => text.replaceAll('`params.', '`').replaceAll('`params`', 'the body')

const FIRST_FIELD = /^`([^`]+)`/

/** Who failed when no A2A error says: the server (-32603), the credentials (-32000), else the request. */
const statusOfCode = (code: number): number =>
  code === ErrorCode.Internal ? 500 : code === ErrorCode.Unauthorized ? 401 : 400

/** An error of a v1.0 method (or of the request's checks) as the HTTP status and Status body of its answer. */
export function restError(error: A2AError): { status: number; json: string } {
  // A follow-up to an ended task reads UnsupportedOperation in v1.0, as over JSON-RPC; A2A errors get their ErrorInfo.
  const wire = v1Binding.wireError(error)
  const known = A2A_STATUSES[wire.code]
  const status = error.httpStatus >= 400 ? error.httpStatus : (known?.[0] ?? statusOfCode(wire.code))
  const name = known && status === known[0] ? known[1] : undefined
  if (wire.code === ErrorCode.InvalidParams && error instanceof InvalidParamsError) {
    const detail = restNames(error.detail)
    const field = FIRST_FIELD.exec(detail)?.[1]
    const details =
      field === undefined ? undefined : [{ '@type': BAD_REQUEST, fieldViolations: [{ field, description: detail }] }]
    return { status, json: statusJson(status, detail, details, name) }
  }
  let details = Array.isArray(wire.data) ? (wire.data as object[]) : undefined
  // The id asked for, as §11.6's example has it.
  if (error instanceof TaskNotFoundError && details)
    details = details.map((detail) => ({ ...detail, metadata: { taskId: error.taskId } }))
  return { status, json: statusJson(status, restNames(wire.message), details, name) }
}

/** The answer to a request whose path no REST route has (the path is not repeated: it may hold a secret). */
export const NOT_FOUND_JSON = statusJson(404, 'Not found: no operation of this agent has this path')

/** An unexpected error says nothing more (the detail goes to the log). */
export const INTERNAL_JSON = statusJson(500, 'Internal error')
