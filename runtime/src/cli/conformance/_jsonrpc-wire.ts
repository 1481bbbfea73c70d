import { randomUUID } from 'node:crypto'
import { isObject } from '../../_is-object.js'
import { withCredentials } from './_credentials.js'
import {
  type Answer,
  type CallOptions,
  describe,
  errorInfoOf,
  type Json,
  noAnswer,
  readBody,
  readEvents,
  type StreamAnswer,
  type Wire,
  type WireError,
  type WireOptions,
} from './_wire.js'

/** The JSON-RPC binding (A2A v1.0 §9): one POST to the interface's URL per call, streams as server-sent events. */
export function jsonRpcWire(url: string, options: WireOptions): Wire {
  const post = async (body: string, version: string | null): Promise<Response> => {
    const headers = { 'content-type': 'application/json', ...(version !== null && { 'a2a-version': version }) }
    const request = withCredentials(url, headers, options.credentials)
    return fetch(request.url, {
      method: 'POST',
      headers: request.headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs),
    })
  }
  const request = (method: string, params: Json) => {
    const id = randomUUID()
    const withTenant = options.tenant ? { ...params, tenant: options.tenant } : params
    return { id, body: JSON.stringify({ jsonrpc: '2.0', id, method, params: withTenant }) }
  }
  const send = async (body: string, id: string | undefined, version: string | null): Promise<Answer> => {
    let response: Response
    try {
      response = await post(body, version)
    } catch (error) {
      return { problem: noAnswer(error, options.timeoutMs), envelopeProblems: [] }
    }
    return readAnswer(response, id, options.timeoutMs)
  }
  return {
    transport: 'jsonrpc',
    url,
    async call(operation, params, callOptions: CallOptions = {}) {
      const { id, body } = request(operation, params)
      return send(body, id, callOptions.version === undefined ? '1.0' : callOptions.version)
    },
    async stream(operation, params) {
      const { id, body } = request(operation, params)
      let response: Response
      try {
        response = await post(body, '1.0')
      } catch (error) {
        return { problem: noAnswer(error, options.timeoutMs), envelopeProblems: [] }
      }
      const contentType = response.headers.get('content-type') ?? ''
      if (!contentType.startsWith('text/event-stream')) return readAnswer(response, id, options.timeoutMs)
      const parsed = await readEvents(response, options.timeoutMs)
      if ('failure' in parsed)
        return { problem: `the stream did not end: ${parsed.failure}`, contentType, envelopeProblems: [] }
      if (parsed.problem) return { contentType, envelopeProblems: [], events: [], eventProblem: parsed.problem }
      const answer: StreamAnswer = { contentType, envelopeProblems: [], events: [] }
      for (const event of parsed.events) {
        if (!isObject(event) || event.jsonrpc !== '2.0' || (!isObject(event.result) && !isObject(event.error))) {
          answer.eventProblem ??= `an event is not a JSON-RPC response: ${describe(event)}`
          continue
        }
        if (event.id !== id) answer.eventProblem ??= `an event's id ${describe(event.id)} is not the request's`
        if (isObject(event.error)) answer.error = wireError(event.error)
        else answer.events!.push(event.result as Json)
      }
      return answer
    },
    raw: (body) => send(body, undefined, '1.0'),
    close() {},
  }
}

async function readAnswer(response: Response, id: string | undefined, timeoutMs: number): Promise<Answer> {
  const contentType = response.headers.get('content-type') ?? ''
  if (response.status === 401 || response.status === 403) {
    await response.body?.cancel()
    return { refused: response.status, contentType, envelopeProblems: [] }
  }
  const read = await readBody(response, timeoutMs)
  if ('problem' in read) return { problem: read.problem, contentType, envelopeProblems: [] }
  const text = read.text
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return {
      problem: `HTTP ${response.status} ${contentType || 'without a content type'}, not JSON`,
      contentType,
      envelopeProblems: [],
    }
  }
  if (!isObject(body) || (!('result' in body) && !isObject(body.error)))
    return {
      problem: `HTTP ${response.status}: ${describe(body)} is no JSON-RPC response`,
      contentType,
      envelopeProblems: [],
    }
  const envelopeProblems: string[] = []
  if (body.jsonrpc !== '2.0') envelopeProblems.push(`jsonrpc is ${describe(body.jsonrpc)}, not "2.0"`)
  // An id the server could not read (a body not JSON) is answered with a null id.
  if (id !== undefined && body.id !== id) envelopeProblems.push(`id ${describe(body.id)} is not the request's`)
  if (isObject(body.error)) return { error: wireError(body.error), contentType, envelopeProblems }
  return { value: body.result as Json, contentType, envelopeProblems }
}

function wireError(error: Json): WireError {
  const shapeProblems: string[] = []
  if (!Number.isInteger(error.code)) shapeProblems.push(`code ${describe(error.code)} is not an integer`)
  if (typeof error.message !== 'string') shapeProblems.push('message is not a string')
  if (error.data !== undefined && !Array.isArray(error.data)) shapeProblems.push('data is not an array')
  const extra = Object.keys(error).filter((key) => !['code', 'message', 'data'].includes(key))
  if (extra.length > 0) shapeProblems.push(`fields beside code, message and data: ${extra.join(', ')}`)
  const info = errorInfoOf(error.data)
  return {
    code: Number(error.code),
    ...info,
    ...(typeof error.message === 'string' && { message: error.message }),
    shapeProblems,
    summary: `error ${error.code}${info.reason ? ` (${info.reason})` : ''}: ${describe(error.message)}`,
  }
}
