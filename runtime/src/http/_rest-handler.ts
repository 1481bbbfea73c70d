import { FastResponse } from 'srvx'
import { isObject } from '../_is-object.js'
import { restParams } from '../bindings/_rest-params.js'
import { matchRest } from '../bindings/_rest-routes.js'
import { INTERNAL_JSON, NOT_FOUND_JSON, restError, statusJson } from '../bindings/_rest-status.js'
import { v1Binding } from '../bindings/_v1.js'
import { A2AError, ErrorCode, InvalidParamsError, ParseError } from '../errors.js'
import type { Principal } from '../types.js'
import { isJsonContentType, readJsonBody, unsupportedContentType } from './_body.js'
import { V1_VERSION } from './_dialect-router.js'
import { LARGE_ANSWER_CHARS, largeJsonResponse } from './_large-answer.js'
import { headerOf, nodeHeadersOf } from './_node-headers.js'
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

const A2A_JSON: [string, string] = ['content-type', 'application/a2a+json']
const JSON_HEADERS: Array<[string, string]> = [A2A_JSON]
const CLOSE: [string, string] = ['connection', 'close']
const RETRY_LATER: [string, string] = ['retry-after', '1']
/** RFC 6750 §3.1: a token that proves the caller but lacks a scope the agent requires. */
const INSUFFICIENT_SCOPE: [string, string] = ['www-authenticate', 'Bearer error="insufficient_scope"']

/** A v1.0 stream result as this binding sends it: the StreamResponse alone (`data: {"task": …}`). */
const bareFrameV1 = (result: object): string => JSON.stringify(result)

const NO_VERSION = new A2AError(
  ErrorCode.VersionNotSupported,
  'A2A-Version is missing, and a request without it is read as A2A 0.3 (A2A v1.0 §3.6.2); this interface speaks 1.0: send the header A2A-Version: 1.0',
)

/** The version a request asks for: its `A2A-Version` header, else the query parameter of that name (§3.6.1). */
function versionOf(request: Request, search: string): string | null {
  const header = headerOf(request, 'a2a-version')
  if (header !== null || search.length < 2) return header
  return new URLSearchParams(search).get('A2A-Version')
}

/** Refuses a version other than 1.0 (its patch ignored): this binding has no other. */
function checkVersion(version: string | null): void {
  const requested = version?.trim()
  if (requested === '1.0' || (requested && V1_VERSION.test(requested))) return
  if (!requested) throw NO_VERSION
  throw new A2AError(
    ErrorCode.VersionNotSupported,
    `A2A-Version ${JSON.stringify(requested.slice(0, 20))} is not supported on this interface, which speaks 1.0 (A2A 0.3 is served over JSON-RPC at the address the card's url names)`,
  )
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

const statusResponse = (status: number, json: string, headers: Array<[string, string]> = JSON_HEADERS) =>
  new FastResponse(json, { status, headers })

export function restHandler(
  parts: RestHandlerParts,
): (request: Request, pathname: string, search: string) => Promise<Response> {
  const { served, engine, maxBodySize, bodyBudget, eventIds, openStream, cardUrl, outgoing, logger } = parts
  return async (request, pathname, search) => {
    const method = request.method
    const match = matchRest(pathname, method)
    if (!match) return statusResponse(404, NOT_FOUND_JSON)
    const operation = match.route.operations.get(method)
    if (operation === undefined) {
      const { allow } = match.route
      const json = statusJson(405, `Method ${method.slice(0, 20)} is not allowed on this path; it takes ${allow}`)
      return statusResponse(405, json, [A2A_JSON, ['allow', allow]])
    }
    try {
      const current = served.current
      const { authCheck, streaming, push } = current
      let principal: Principal | undefined
      if (authCheck) {
        // A listed credential is checked at once; only a JWT's verification is awaited.
        const checked = authCheck(request.headers)
        const outcome = checked instanceof Promise ? await checked : checked
        if (outcome instanceof A2AError) {
          const challenge =
            outcome.httpStatus === 401 ? current.wwwAuthenticate?.['www-authenticate'] : INSUFFICIENT_SCOPE[1]
          const { status, json } = restError(outcome)
          return statusResponse(status, json, challenge ? [A2A_JSON, ['www-authenticate', challenge]] : JSON_HEADERS)
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
      checkVersion(versionOf(request, search))
      const params = restParams(operation, match, search, body as Record<string, unknown> | undefined)
      const result = await v1Binding.methods.get(operation)!(params, {
        id: null,
        engine,
        streaming,
        outputModes: current.template.defaultOutputModes,
        inputModes: current.inputModes,
        headers: request.headers,
        eventIds,
        openStream,
        frameV1: bareFrameV1,
        push,
        dialect: 'a2a-1.0',
        principal,
        extendedCard: current.template.extendedCard && ((dialect) => current.extendedCard(dialect, cardUrl(request))),
      })
      if (result instanceof Response) return result
      const json = JSON.stringify(result)
      if (json.length <= LARGE_ANSWER_CHARS) return new FastResponse(json, { headers: JSON_HEADERS })
      const large = largeJsonResponse(json, outgoing)
      large.headers.set(A2A_JSON[0], A2A_JSON[1])
      return large
    } catch (error) {
      if (error instanceof A2AError) {
        const { status, json } = restError(error)
        // After a refused body the rest of it is still on the connection, and a server that is going away wants the
        // client elsewhere: the connection is closed rather than kept alive (as JSON-RPC does).
        const headers =
          status === 503
            ? [A2A_JSON, CLOSE, RETRY_LATER]
            : status === 413
              ? [A2A_JSON, CLOSE]
              : status === 429
                ? [A2A_JSON, RETRY_LATER]
                : JSON_HEADERS
        return statusResponse(status, json, headers)
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

/** Node's error for a request whose connection closed before its body was read. */
function clientLeft(error: unknown): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === 'ECONNRESET' && error.message === 'aborted'
}
