import { jsonRpcError } from './_error-names.js'
import { exchange, type HttpSettings } from './_http.js'
import {
  badResponse,
  type CallOptions,
  checkStreamResponse,
  isEventStream,
  isObject,
  preview,
  readJson,
  type StreamEvent,
  type StreamOperation,
  type StreamOptions,
  sseJson,
  type Traced,
  type Transport,
  type UnaryOperation,
} from './_transport.js'
import { pushConfigSecrets } from './_wire.js'
import type { JsonObject } from './types.js'

/**
 * The JSON-RPC binding (A2A v1.0 §9): each operation a JSON-RPC 2.0 request named as the operation, POSTed to the
 * interface's URL; a stream's events SSE, each a JSON-RPC response whose result is a StreamResponse. An error
 * answer (a JSON-RPC error, in the body or as an event) is the A2A error its code names.
 */

export function jsonRpcTransport(url: string, http: HttpSettings): Transport {
  let next = 1
  const post = (method: string, params: JsonObject, signal: AbortSignal | undefined, headers: Record<string, string>) =>
    exchange(http, {
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: next++, method, params }),
      signal,
      withCredentials: true,
      secrets: pushConfigSecrets(params),
    })

  /** The result of a JSON-RPC response, or its error thrown. */
  const resultOf = (answer: unknown, http: Parameters<typeof badResponse>[0]) => {
    if (isObject(answer) && isObject(answer.error)) throw jsonRpcError(answer.error, http.redact.text)
    if (!isObject(answer) || answer.jsonrpc !== '2.0' || !('result' in answer))
      throw badResponse(http, `HTTP ${http.response.status} that is not a JSON-RPC response: ${preview(http, answer)}`)
    return answer.result
  }

  return {
    async call(operation: UnaryOperation, request: JsonObject, { signal, traceHeaders }: Traced<CallOptions>) {
      const answer = await post(operation, request, signal, { accept: 'application/json', ...traceHeaders })
      return resultOf(await readJson(answer, http.maxBytes, signal), answer)
    },

    async *stream(operation: StreamOperation, request: JsonObject, options: Traced<StreamOptions>) {
      const { signal, lastEventId } = options
      const headers: Record<string, string> = { accept: 'text/event-stream', ...options.traceHeaders }
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId
      const answer = await post(operation, request, signal, headers)
      if (!isEventStream(answer)) {
        // An error before the stream began comes as one JSON-RPC response.
        resultOf(await readJson(answer, http.maxBytes, signal), answer)
        throw badResponse(answer, `HTTP ${answer.response.status} that is not an event stream`)
      }
      for await (const { json, id } of sseJson(answer, http.maxBytes, signal)) {
        const event: StreamEvent = { response: checkStreamResponse(answer, resultOf(json, answer)) }
        if (id !== undefined) event.eventId = id
        yield event
      }
    },
  }
}
