import { isObject } from '../../_is-object.js'
import { addQuery, route } from '../../client/_rest.js'
import { withCredentials } from './_credentials.js'
import { readJsonBody, readStream, responseOf } from './_http-wire.js'
import {
  type Answer,
  type CallOptions,
  describe,
  errorInfoOf,
  type Json,
  type Operation,
  type Wire,
  type WireError,
  type WireOptions,
} from './_wire.js'

/**
 * The HTTP+JSON binding (A2A v1.0 §11): each operation at its path, errors as google.rpc.Status. The paths, the
 * fields they carry and the query of a GET are the client core's (client/_rest.ts), the interface's tenant the
 * path's first segment.
 */
export function restWire(url: string, options: WireOptions): Wire {
  const base = `${url.replace(/\/+$/, '')}${options.tenant ? `/${encodeURIComponent(options.tenant)}` : ''}`
  const fetchOf = (operation: Operation, params: Json, version: string | null): Promise<Response> => {
    const { method, path, body } = requestOf(operation, options.tenant ? { ...params, tenant: options.tenant } : params)
    const headers = {
      ...(body !== undefined && { 'content-type': 'application/a2a+json' }),
      ...(version !== null && { 'a2a-version': version }),
    }
    const request = withCredentials(`${base}${path}`, headers, options.credentials)
    return fetch(request.url, {
      method,
      headers: request.headers,
      ...(body !== undefined && { body }),
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs),
    })
  }
  return {
    transport: 'http_json',
    url,
    async call(operation, params, callOptions: CallOptions = {}) {
      const version = callOptions.version === undefined ? '1.0' : callOptions.version
      const sent = await responseOf(() => fetchOf(operation, params, version), options.timeoutMs)
      return 'answer' in sent ? sent.answer : readAnswer(sent.response, options.timeoutMs)
    },
    async stream(operation, params) {
      const sent = await responseOf(() => fetchOf(operation, params, '1.0'), options.timeoutMs)
      if ('answer' in sent) return sent.answer
      const { response } = sent
      const contentType = response.headers.get('content-type') ?? ''
      if (!response.ok || !contentType.startsWith('text/event-stream')) return readAnswer(response, options.timeoutMs)
      const { answer, events } = await readStream(response, contentType, options.timeoutMs)
      for (const event of events) {
        if (isObject(event) && isObject(event.error)) answer.error = statusError(response.status, event)
        else if (isObject(event)) answer.events!.push(event)
        else answer.eventProblem ??= `an event is not a JSON object: ${describe(event)}`
      }
      return answer
    },
    close() {},
  }
}

/**
 * An operation's request as the client core sends it: the path's fields left out of the rest, which is a POST's
 * body or a GET's (or DELETE's) query; the tenant travels in the path, never in a query.
 */
function requestOf(operation: Operation, params: Json): { method: string; path: string; body?: string } {
  const { method, path, inPath } = route(operation, params)
  const rest = Object.fromEntries(Object.entries(params).filter(([name]) => !inPath.includes(name)))
  if (method === 'POST') return { method, path, body: JSON.stringify(rest) }
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(rest)) if (name !== 'tenant') addQuery(query, name, value)
  return { method, path: query.size ? `${path}?${query}` : path }
}

async function readAnswer(response: Response, timeoutMs: number): Promise<Answer> {
  // A success may come without a body: it stands for an empty object.
  const read = await readJsonBody(response, timeoutMs, response.ok)
  if ('answer' in read) return read.answer
  const { body, contentType } = read
  if (response.ok) {
    return isObject(body)
      ? { value: body, contentType, envelopeProblems: [] }
      : {
          problem: `HTTP ${response.status}: ${describe(body)} is not a JSON object`,
          contentType,
          envelopeProblems: [],
        }
  }
  if (!isObject(body) || !isObject(body.error))
    return {
      error: {
        code: response.status,
        a2aDomain: false,
        shapeProblems: [`the body ${describe(body)} is not a google.rpc.Status ({"error": {...}})`],
        summary: `HTTP ${response.status} ${describe(body)}`,
      },
      contentType,
      envelopeProblems: [],
    }
  return { error: statusError(response.status, body), contentType, envelopeProblems: [] }
}

/** A google.rpc.Status error body (AIP-193) read, with what is wrong with its form. */
function statusError(status: number, body: Json): WireError {
  const error = body.error as Json
  const shapeProblems: string[] = []
  if (error.code !== status) shapeProblems.push(`error.code ${describe(error.code)} is not the HTTP status ${status}`)
  if (typeof error.message !== 'string') shapeProblems.push('error.message is not a string')
  if (error.status !== undefined && typeof error.status !== 'string') shapeProblems.push('error.status is not a string')
  if (error.details !== undefined) {
    if (!Array.isArray(error.details)) shapeProblems.push('error.details is not an array')
    else if (error.details.some((detail: unknown) => !isObject(detail) || typeof detail['@type'] !== 'string'))
      shapeProblems.push('an object of error.details has no @type')
  }
  const info = errorInfoOf(error.details)
  return {
    code: status,
    ...info,
    ...(typeof error.message === 'string' && { message: error.message }),
    shapeProblems,
    summary: `HTTP ${status}${info.reason ? ` (${info.reason})` : ''}: ${describe(error.message)}`,
  }
}
