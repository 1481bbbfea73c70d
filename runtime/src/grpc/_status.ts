import { create, toBinary } from '@bufbuild/protobuf'
import { anyPack } from '@bufbuild/protobuf/wkt'
import { Metadata, status } from '@grpc/grpc-js'
import { restNames } from '../bindings/_rest-status.js'
import { v1Binding } from '../bindings/_v1.js'
import { type A2AError, ErrorCode, InvalidParamsError } from '../errors.js'
import { ErrorInfoSchema, StatusSchema } from './_rpc-status.js'

/**
 * An A2AError as a gRPC status (A2A v1.0 §5.4, §10.6): the status code its type maps to, its message, and for the
 * A2A error types a `google.rpc.Status` carrying a `google.rpc.ErrorInfo` (reason in UPPER_SNAKE_CASE, domain
 * `a2a-protocol.org`) in the `grpc-status-details-bin` trailer, which the official SDKs read.
 */

/** How a call ends: what grpc-js's `sendStatus` takes, and a handler's callback too. */
export interface GrpcStatus {
  code: status
  details: string
  metadata?: Metadata
}

const DOMAIN = 'a2a-protocol.org'

const CODES: Record<number, status> = {
  [ErrorCode.TaskNotFound]: status.NOT_FOUND,
  [ErrorCode.TaskNotCancelable]: status.FAILED_PRECONDITION,
  [ErrorCode.PushNotificationNotSupported]: status.FAILED_PRECONDITION,
  [ErrorCode.UnsupportedOperation]: status.FAILED_PRECONDITION,
  [ErrorCode.ExtendedCardNotConfigured]: status.FAILED_PRECONDITION,
  [ErrorCode.VersionNotSupported]: status.FAILED_PRECONDITION,
  [ErrorCode.ContentTypeNotSupported]: status.INVALID_ARGUMENT,
  [ErrorCode.InvalidParams]: status.INVALID_ARGUMENT,
  [ErrorCode.InvalidRequest]: status.INVALID_ARGUMENT,
  [ErrorCode.ParseError]: status.INVALID_ARGUMENT,
  [ErrorCode.MethodNotFound]: status.UNIMPLEMENTED,
}

/** Reasons beyond the A2A error types v1.0's ErrorInfo names: bad params read as the official SDKs read them. */
const EXTRA_REASONS: Record<number, string> = {
  [ErrorCode.InvalidParams]: 'INVALID_PARAMS',
  [ErrorCode.InvalidRequest]: 'INVALID_REQUEST',
  [ErrorCode.ParseError]: 'INVALID_PARAMS',
}

/** The gRPC code of an error the HTTP bindings answer with a status of their own (credentials, load). */
function codeByHttpStatus(httpStatus: number): status | undefined {
  if (httpStatus === 401) return status.UNAUTHENTICATED
  if (httpStatus === 403) return status.PERMISSION_DENIED
  if (httpStatus === 429 || httpStatus === 413) return status.RESOURCE_EXHAUSTED
  if (httpStatus === 503) return status.UNAVAILABLE
  return undefined
}

/** The ErrorInfo reason v1.0's JSON-RPC binding gives an error (its `data`), else the extra ones. */
function reasonOf(error: A2AError): string | undefined {
  const data = error.data
  if (Array.isArray(data)) {
    const info = data.find((detail) => typeof detail?.reason === 'string')
    if (info) return info.reason as string
  }
  return EXTRA_REASONS[error.code]
}

/** A status with the ErrorInfo detail, as grpc-js sends it (`grpc-status-details-bin` is binary metadata). */
function detailed(code: status, message: string, reason: string): GrpcStatus {
  const info = create(ErrorInfoSchema, { reason, domain: DOMAIN })
  const rpcStatus = create(StatusSchema, { code, message, details: [anyPack(ErrorInfoSchema, info)] })
  const metadata = new Metadata()
  metadata.set('grpc-status-details-bin', Buffer.from(toBinary(StatusSchema, rpcStatus)))
  return { code, details: message, metadata }
}

/** The gRPC status an A2AError ends a call with. */
export function statusOf(error: A2AError): GrpcStatus {
  const wire = v1Binding.wireError(error)
  const code = codeByHttpStatus(wire.httpStatus) ?? CODES[wire.code]
  if (code === undefined) return { code: status.INTERNAL, details: 'Internal error' }
  const reason = reasonOf(wire)
  // Fields named as the request's own (`message.parts`), as HTTP+JSON names them, not as JSON-RPC's `params`.
  const message = error instanceof InvalidParamsError ? restNames(error.detail) : restNames(wire.message)
  return reason ? detailed(code, message, reason) : { code, details: message }
}

/** An unexpected failure: INTERNAL with no detail (the detail goes to the log). */
export const INTERNAL: GrpcStatus = Object.freeze({ code: status.INTERNAL, details: 'Internal error' })
