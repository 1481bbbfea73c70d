import { type HttpExchange, logResponse, readFailure, readText } from './_http.js'
import { checkShape, ShapeError } from './_shapes.js'
import { readSse, SseTooLarge } from './_sse.js'
import { pushConfigSecrets } from './_wire.js'
import { A2AClientFailure } from './errors.js'
import type { JsonObject, StreamResponse } from './types.js'

/**
 * What each binding provides the client: a unary call and a stream of one v1.0 operation, given the request
 * message in ProtoJSON (the tenant already set), answering the ProtoJSON result as the agent sent it.
 */

export type UnaryOperation =
  | 'SendMessage'
  | 'GetTask'
  | 'ListTasks'
  | 'CancelTask'
  | 'CreateTaskPushNotificationConfig'
  | 'GetTaskPushNotificationConfig'
  | 'ListTaskPushNotificationConfigs'
  | 'DeleteTaskPushNotificationConfig'
  | 'GetExtendedAgentCard'

export type StreamOperation = 'SendStreamingMessage' | 'SubscribeToTask'

/** What every call takes: a signal that aborts it. */
export interface CallOptions {
  /** Aborts the call: it rejects with the signal's reason. */
  signal?: AbortSignal
}

/** What a streaming call takes: a signal, and the event to resume after. */
export interface StreamOptions extends CallOptions {
  /** The id of the last event received, to resume after it (`Last-Event-ID`). */
  lastEventId?: string
}

/** One event of a stream, with its id to resume after. */
export interface StreamEvent {
  response: StreamResponse
  /** The event's SSE id (the agent's number for it), to resume after it. */
  eventId?: string
}

/** A call's options as the client core hands them to a transport: with the headers of its trace context, if any. */
export type Traced<O extends CallOptions> = O & { traceHeaders?: Readonly<Record<string, string>> }

export interface Transport {
  call(operation: UnaryOperation, request: JsonObject, options: Traced<CallOptions>): Promise<unknown>
  stream(operation: StreamOperation, request: JsonObject, options: Traced<StreamOptions>): AsyncGenerator<StreamEvent>
}

export const badResponse = (http: HttpExchange, problem: string) =>
  new A2AClientFailure('bad-response', `${http.redact.url(http.url)} answered ${problem}`)

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A StreamResponse has exactly one of its four fields, each in its shape. */
export function checkStreamResponse(http: HttpExchange, value: unknown): StreamResponse {
  try {
    checkShape('StreamResponse', value)
  } catch (error) {
    if (error instanceof ShapeError) throw badResponse(http, `a stream event outside A2A v1.0: ${error.message}`)
    throw error
  }
  return value as StreamResponse
}

/**
 * The start of what the agent sent, to quote in a failure: credentials redacted in the whole text before it is cut,
 * so no part of one survives the cut.
 */
const quote = (http: Pick<HttpExchange, 'redact'>, text: string, length = 200) =>
  http.redact.text(text).slice(0, length)

/** A JSON value quoted as `quote` does. */
export const preview = (http: Pick<HttpExchange, 'redact'>, value: unknown) =>
  quote(http, JSON.stringify(value) ?? String(value))

/**
 * The body as JSON, logged to the wire hook (a push config's secrets in it redacted too); a bad-response failure when
 * it is not JSON.
 */
export async function readJson(http: HttpExchange, maxBytes: number, signal: AbortSignal | undefined) {
  let text: string
  try {
    text = await readText(http, maxBytes)
  } catch (error) {
    throw readFailure(error, http, signal)
  } finally {
    http.settled()
  }
  let json: unknown
  let parsed = true
  try {
    json = text === '' ? undefined : JSON.parse(text)
  } catch {
    parsed = false
  }
  http.addSecrets(pushConfigSecrets(json))
  await logResponse(http, text)
  if (!parsed) {
    const type = http.response.headers.get('content-type') ?? 'no content type'
    throw badResponse(http, `HTTP ${http.response.status} that is not JSON (${type}): ${quote(http, text, 100)}`)
  }
  return json
}

export const isEventStream = (http: HttpExchange) =>
  /^text\/event-stream\b/i.test(http.response.headers.get('content-type') ?? '')

/**
 * Each event of an SSE answer as JSON with its id, shown to the wire hook; the stream's failures in the client's
 * terms (an event over the limit, or data that is not JSON, is a bad response; a cut connection, unreachable).
 */
export async function* sseJson(
  http: HttpExchange,
  maxBytes: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<{ json: unknown; id?: string }> {
  http.settled()
  await logResponse(http, undefined)
  const body = http.response.body
  if (!body) return
  try {
    for await (const event of readSse(body, maxBytes)) {
      http.wire?.({
        type: 'event',
        url: http.redact.url(http.url),
        ...(event.id !== undefined && { id: event.id }),
        ...(event.event !== undefined && { event: event.event }),
        data: http.redact.text(event.data),
        elapsedMs: http.elapsed(),
      })
      let json: unknown
      try {
        json = JSON.parse(event.data)
      } catch {
        throw badResponse(http, `a stream event that is not JSON: ${quote(http, event.data, 100)}`)
      }
      yield { json, ...(event.id !== undefined && { id: event.id }) }
    }
  } catch (error) {
    if (error instanceof SseTooLarge)
      throw badResponse(http, `a stream line or event larger than the ${maxBytes} bytes this client reads`)
    throw readFailure(error, http, signal)
  } finally {
    // Stops the body when the caller leaves the loop early (break, return, a throw).
    await body.cancel().catch(() => {})
  }
}
