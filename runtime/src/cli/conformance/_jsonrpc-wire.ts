import { randomUUID } from 'node:crypto'
import { isObject } from '../../_is-object.js'
import { withCredentials } from './_credentials.js'
import { readJsonBody, readStream, responseOf } from './_http-wire.js'
import {
  type Answer,
  type CallOptions,
  describe,
  errorInfoOf,
  type Json,
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
    const sent = await responseOf(() => post(body, version), options.timeoutMs)
    return 'answer' in sent ? sent.answer : readAnswer(sent.response, id, options.timeoutMs)
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
      const sent = await responseOf(() => post(body, '1.0'), options.timeoutMs)
      if ('answer' in sent) return sent.answer
      const { response } = sent
      const contentType = response.headers.get('content-type') ?? ''
      if (!contentType.startsWith('text/event-stream')) return readAnswer(response, id, options.timeoutMs)
      const { answer, events } = await readStream(response, contentType, options.timeoutMs)
      for (const event of events) {
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
  const read = await readJsonBody(response, timeoutMs)
  if ('answer' in read) return read.answer
  const { body, contentType } = read
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
