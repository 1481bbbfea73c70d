import type { Binding, CallContext, MethodHandler } from '../bindings/shared/_binding.js'
import { httpErrorStatus, jsonRpcErrorCode } from './_error-codes.js'
import type { Instrumentation, OperationStart, Transport } from './_hooks.js'

/** What a handler knows of an operation beyond its call context. */
export interface TracedCall {
  transport: Transport
  /** The method as the request named it. */
  method: string
  card: OperationStart['card']
  errorCode: OperationStart['errorCode']
  /** Where the trace context is read when the call's headers do not carry it (gRPC metadata). */
  carrier?: Headers
}

/** A JSON-RPC call of `binding`'s `method`. */
export const tracedRpc = (binding: Binding, method: string, card: OperationStart['card']): TracedCall => ({
  transport: 'jsonrpc',
  method,
  card,
  errorCode: jsonRpcErrorCode(binding),
})

/** An HTTP+JSON call of the v1.0 `operation`. */
export const tracedRest = (operation: string, card: OperationStart['card']): TracedCall => ({
  transport: 'http+json',
  method: operation,
  card,
  errorCode: httpErrorStatus,
})

/**
 * Runs a binding's method as one operation of `instrumentation` (the handlers call this only when the app has one):
 * the method runs in the operation's context, and the operation ends when the method returns or throws, or, for a
 * method that opens a stream, when that stream closes or its client leaves.
 */
export async function traced(
  instrumentation: Instrumentation,
  call: TracedCall,
  method: MethodHandler,
  params: unknown,
  context: CallContext,
): Promise<unknown> {
  const operation = instrumentation.operation({
    method: call.method,
    dialect: context.dialect,
    transport: call.transport,
    headers: call.carrier ?? context.headers,
    principal: context.principal,
    params,
    card: call.card,
    errorCode: call.errorCode,
  })
  if (!operation) return method(params, context)
  const open = context.openStream
  context.openStream = () => operation.streamOpened(open()) as ReturnType<typeof open>
  let result: unknown
  try {
    result = await operation.run(() => method(params, context))
  } catch (error) {
    operation.failed(error)
    throw error
  }
  operation.returned(result)
  return result
}
