import { jsonRpcFrameV1, v1Binding } from '../bindings/_v1.js'
import type { EventStream } from '../bindings/shared/_binding.js'
import type { TaskEngine } from '../core/_engine.js'
import { A2AError, ErrorCode, MethodNotFoundError, ParseError } from '../errors.js'
import type { Logger } from '../logger.js'
import { traced, tracedRpc } from '../telemetry/_traced-call.js'
import type { Principal } from '../types.js'
import { isJsonContentType, readJsonBody, unsupportedContentType } from './_body.js'
import type { BodyBudget } from './_body-budget.js'
import { type BindingParts, callContext } from './_call-context.js'
import type { DialectRouter } from './_dialect-router.js'
import { errorResponse, idOf, type JsonRpcId, readCall, resultResponse } from './_jsonrpc.js'
import { headerOf } from './_node-headers.js'
import type { Outgoing } from './_outgoing.js'
import { clientLeft, credentialRefusalHeaders, errorHeaders } from './_refusals.js'
import type { ServedAgent } from './_served-agent.js'

export interface RpcHandlerParts {
  /** The agent served now (`a2a dev` swaps it on a reload): read once per request. */
  served: { current: ServedAgent }
  router: DialectRouter
  engine: TaskEngine
  maxBodySize: number
  bodyBudget: BodyBudget
  eventIds: boolean
  openStream: () => EventStream
  /** The address the agent's cards give, for this request. */
  cardUrl: (request: Request) => string
  outgoing: Outgoing
  logger: Logger
}

/**
 * JSON-RPC 2.0 over `POST /`: credentials, content type and body checked, the call read and handed to the
 * binding its method and `A2A-Version` choose; every failure answered in that binding's dialect.
 */
export function rpcHandler(parts: RpcHandlerParts): (request: Request) => Promise<Response> {
  const { served, router, maxBodySize, bodyBudget, cardUrl, outgoing, logger } = parts
  const shared: BindingParts = { ...parts, frameV1: jsonRpcFrameV1 }
  return async (request) => {
    let id: JsonRpcId = null
    let binding = router.legacy
    try {
      const current = served.current
      const { authCheck, wwwAuthenticate } = current
      let principal: Principal | undefined
      if (authCheck) {
        // A listed credential is checked at once; only a JWT's verification is awaited.
        const checked = authCheck(request.headers)
        const outcome = checked instanceof Promise ? await checked : checked
        if (outcome instanceof A2AError)
          return errorResponse(null, outcome, credentialRefusalHeaders(outcome, wwwAuthenticate))
        principal = outcome
      }
      const contentType = headerOf(request, 'content-type')
      if (!isJsonContentType(contentType)) {
        // Read (within the same limits) only to answer in the client's dialect with its id; nothing is run.
        const body = await readJsonBody(request, maxBodySize, bodyBudget).catch((error) =>
          error instanceof ParseError ? undefined : Promise.reject(error),
        )
        id = idOf(body)
        binding = router.dialectOf(body, headerOf(request, 'a2a-version'))
        throw unsupportedContentType(contentType, binding === v1Binding)
      }
      const body = await readJsonBody(request, maxBodySize, bodyBudget)
      id = idOf(body)
      const call = readCall(body)
      binding = router.bindingFor(call.method, headerOf(request, 'a2a-version'))
      const method = binding.methods.get(call.method)
      if (!method) throw new MethodNotFoundError(call.method)
      const context = callContext(
        shared,
        current,
        id,
        request.headers,
        binding.name,
        principal,
        current.template.extendedCard && (() => cardUrl(request)),
      )
      const telemetry = parts.engine.instrumentation
      const result = await (telemetry
        ? traced(telemetry, tracedRpc(binding, call.method, current.template), method, call.params, context)
        : method(call.params, context))
      return result instanceof Response ? result : resultResponse(id, result, outgoing)
    } catch (error) {
      if (error instanceof A2AError) return errorResponse(id, binding.wireError(error), errorHeaders(error.httpStatus))
      // A client that hung up while sending its request is no server error: nobody is left to answer.
      if (clientLeft(error)) {
        logger.debug('A client left before its request was read')
        return errorResponse(
          id,
          new A2AError(ErrorCode.InvalidRequest, 'Invalid Request: the request body ended early'),
        )
      }
      // The client learns only that something failed; the detail stays in the log.
      logger.error('Unexpected error while answering a JSON-RPC request', error)
      return errorResponse(id, new A2AError(ErrorCode.Internal, 'Internal error'))
    }
  }
}
