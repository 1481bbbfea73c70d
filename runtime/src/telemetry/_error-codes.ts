import { restError } from '../bindings/_rest-status.js'
import type { Binding } from '../bindings/shared/_binding.js'
import { A2AError, ErrorCode } from '../errors.js'

/**
 * The code a failed operation is answered with, which the A2A semantic conventions record as `error.type`: the
 * JSON-RPC error code of the binding's dialect (an unknown task is -32001 in A2A, -32602 on the platform), the HTTP
 * status over HTTP+JSON. Anything but an A2A error is answered as an internal error. (gRPC's: `_grpc.ts`.)
 */

const jsonRpcCodes = new Map<Binding, (error: unknown) => number>()

export function jsonRpcErrorCode(binding: Binding): (error: unknown) => number {
  let code = jsonRpcCodes.get(binding)
  if (!code) {
    code = (error) => (error instanceof A2AError ? binding.wireError(error).code : ErrorCode.Internal)
    jsonRpcCodes.set(binding, code)
  }
  return code
}

export const httpErrorStatus = (error: unknown): number => (error instanceof A2AError ? restError(error).status : 500)
