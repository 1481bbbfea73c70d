import { FastResponse } from 'srvx'
import { isObject } from '../_is-object.js'
import { restParams } from '../bindings/_rest-params.js'
import { matchRest } from '../bindings/_rest-routes.js'
import { INTERNAL_JSON, NOT_FOUND_JSON, restError, statusJson } from '../bindings/_rest-status.js'
import { v1Binding } from '../bindings/_v1.js'
import { A2AError, InvalidParamsError, ParseError } from '../errors.js'
import { refuseOtherTenant } from '../multi/_tenant-check.js'
import { traced, tracedRest } from '../telemetry/_traced-call.js'
import type { Principal } from '../types.js'
import { isJsonContentType, readJsonBody, unsupportedContentType } from './_body.js'
import { type BindingParts, callContext } from './_call-context.js'
import { checkV1Only } from './_dialect-router.js'
import { LARGE_ANSWER_CHARS, largeJsonResponse } from './_large-answer.js'
import { headerOf, nodeHeadersOf } from './_node-headers.js'
import { clientLeft, credentialRefusalHeaders, errorHeaders } from './_refusals.js'
import type { RpcHandlerParts } from './_rpc-handler.js'

/**
 * The A2A v1.0 HTTP+JSON (REST) binding over HTTP: the path and method choose the operation (`_rest-routes.ts`),
 * the request is checked as a JSON-RPC one is (credentials, content type, body limits, then the A2A-Version), its
 * params are built from the path, query and body (`_rest-params.ts`) and handed to the same v1.0 method that answers
 * JSON-RPC. A result is answered bare with 200 and `application/a2a+json`, a stream as SSE whose events are bare
 * StreamResponses, every failure as a `google.rpc.Status` (`_rest-status.ts`). A stream that fails before it starts
 * (an unknown task, streaming off, bad params, the limit of open streams) is an HTTP error: the methods throw before
 * they hand back the stream.
 */

export type RestHandlerParts = Omit<RpcHandlerParts, 'router'>

const A2A_JSON = { 'content-type': 'application/a2a+json' } as const

/** A v1.0 stream result as this binding sends it: the StreamResponse alone (`data: {"task": …}`). */
const bareFrameV1 = (result: object): string => JSON.stringify(result)

/** The version a request asks for: its `A2A-Version` header, else the query parameter of that name (§3.6.1). */
function versionOf(request: Request, search: string): string | null {
  const header = headerOf(request, 'a2a-version')
  if (header !== null || search.length < 2) return header
  return new URLSearchParams(search).get('A2A-Version')
}

/**
 * Whether a request carries a body: a declared length other than 0, or a chunked one. A POST without one (a cancel
 * or a subscribe, as the official clients send them) reads as an empty request.
 */
function hasBody(request: Request): boolean {
  const node = nodeHeadersOf(request)
  if (node) return node['content-length'] !== undefined ? node['content-length'] !== '0' : !!node['transfer-encoding']
  return request.body !== null && request.headers.get('content-length') !== '0'
}

/** Whether a path's tenant segment (percent-encoded, or absent: the agent's own path) names `tenant`. */
function namesTenant(segment: string | undefined, tenant: string): boolean {
  if (segment === undefined || segment === tenant) return true
  try {
    return decodeURIComponent(segment) === tenant
  } catch {
    return false
  }
}

const statusResponse = (status: number, json: string, headers: Record<string, string> | undefined = undefined) =>
  new FastResponse(json, { status, headers: headers ? { ...A2A_JSON, ...headers } : A2A_JSON })

/**
 * `tenant`: the agent's name when it is one of several in the server; a path naming another tenant is not found, and
 * a body or query naming one is refused (400, naming `tenant`). Without it every tenant reaches the one agent.
 */
export function restHandler(
  parts: RestHandlerParts,
  tenant?: string,
): (request: Request, pathname: string, search: string) => Promise<Response> {
  const { served, maxBodySize, bodyBudget, cardUrl, outgoing, logger } = parts
  const shared: BindingParts = { ...parts, frameV1: bareFrameV1 }
  return async (request, pathname, search) => {
    const method = request.method
    const match = matchRest(pathname, method)
    if (!match || (tenant !== undefined && !namesTenant(match.tenant, tenant)))
      return statusResponse(404, NOT_FOUND_JSON)
    const operation = match.route.operations.get(method)
    if (operation === undefined) {
      const { allow } = match.route
      const json = statusJson(405, `Method ${method.slice(0, 20)} is not allowed on this path; it takes ${allow}`)
      return statusResponse(405, json, { allow })
    }
    try {
      const current = served.current
      const { authCheck } = current
      let principal: Principal | undefined
      if (authCheck) {
        // A listed credential is checked at once; only a JWT's verification is awaited.
        const checked = authCheck(request.headers)
        const outcome = checked instanceof Promise ? await checked : checked
        if (outcome instanceof A2AError) {
          const { status, json } = restError(outcome)
          return statusResponse(status, json, credentialRefusalHeaders(outcome, current.wwwAuthenticate))
        }
        principal = outcome
      }
      let body: unknown
      if (method === 'POST' && hasBody(request)) {
        const contentType = headerOf(request, 'content-type')
        if (!isJsonContentType(contentType)) {
          // Read (within the same limits) and dropped, so the connection is left clean; nothing is run.
          await readJsonBody(request, maxBodySize, bodyBudget).catch((error) =>
            error instanceof ParseError ? undefined : Promise.reject(error),
          )
          throw unsupportedContentType(contentType, true)
        }
        body = await readJsonBody(request, maxBodySize, bodyBudget)
        if (!isObject(body)) throw new InvalidParamsError('`params` must be an object')
      }
      checkV1Only(versionOf(request, search), 'this interface')
      // A path's tenant was matched above; a body's or query's naming another agent is refused, as JSON-RPC refuses
      // it, rather than answered by this agent as if it were that one. The body first: the path's tenant replaces it.
      if (tenant !== undefined) refuseOtherTenant(body, tenant, 'tenant')
      const params = restParams(operation, match, search, body as Record<string, unknown> | undefined)
      if (tenant !== undefined) refuseOtherTenant(params, tenant, 'tenant')
      const handler = v1Binding.methods.get(operation)!
      const context = callContext(
        shared,
        current,
        null,
        request.headers,
        'a2a-1.0',
        principal,
        current.template.extendedCard && (() => cardUrl(request)),
      )
      const telemetry = parts.engine.instrumentation
      const result = await (telemetry
        ? traced(telemetry, tracedRest(operation, current.template), handler, params, context)
        : handler(params, context))
      if (result instanceof Response) return result
      const json = JSON.stringify(result)
      if (json.length <= LARGE_ANSWER_CHARS) return new FastResponse(json, { headers: A2A_JSON })
      const large = largeJsonResponse(json, outgoing)
      large.headers.set('content-type', A2A_JSON['content-type'])
      return large
    } catch (error) {
      if (error instanceof A2AError) {
        const { status, json } = restError(error)
        return statusResponse(status, json, errorHeaders(status))
      }
      // A client that hung up while sending its request is no server error: nobody is left to answer.
      if (clientLeft(error)) {
        logger.debug('A client left before its request was read')
        return statusResponse(400, statusJson(400, 'The request body ended early'))
      }
      // The client learns only that something failed; the detail stays in the log.
      logger.error('Unexpected error while answering an HTTP+JSON request', error)
      return statusResponse(500, INTERNAL_JSON)
    }
  }
}
