import { type HttpExchange, logResponse, readFailure, readText } from './_http.js'
import { readSse, SseTooLarge } from './_sse.js'
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

export interface Transport {
  call(operation: UnaryOperation, request: JsonObject, options: CallOptions): Promise<unknown>
  stream(operation: StreamOperation, request: JsonObject, options: StreamOptions): AsyncGenerator<StreamEvent>
}

const STREAM_FIELDS = ['task', 'message', 'statusUpdate', 'artifactUpdate']

export const badResponse = (http: HttpExchange, problem: string) =>
  new A2AClientFailure('bad-response', `${http.redact.url(http.url)} answered ${problem}`)

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A StreamResponse has exactly one of its four fields, an object. */
export function checkStreamResponse(http: HttpExchange, value: unknown): StreamResponse {
  const set = isObject(value) ? STREAM_FIELDS.filter((field) => value[field] !== undefined) : []
  if (set.length !== 1 || !isObject((value as Record<string, unknown>)[set[0]!]))
    throw badResponse(http, `a stream event that is not a StreamResponse: ${preview(value)}`)
  return value as StreamResponse
}

export const preview = (value: unknown) => JSON.stringify(value)?.slice(0, 200) ?? String(value)

/** The body as JSON, logged to the wire hook; a bad-response failure when it is not JSON. */
export async function readJson(http: HttpExchange, maxBytes: number, signal: AbortSignal | undefined) {
  let text: string
  try {
    text = await readText(http, maxBytes)
  } catch (error) {
    throw readFailure(error, http, signal)
  } finally {
    http.settled()
  }
  await logResponse(http, text)
  if (text === '') return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    const type = http.response.headers.get('content-type') ?? 'no content type'
    throw badResponse(http, `HTTP ${http.response.status} that is not JSON (${type}): ${text.slice(0, 100)}`)
  }
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
        throw badResponse(http, `a stream event that is not JSON: ${event.data.slice(0, 100)}`)
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
