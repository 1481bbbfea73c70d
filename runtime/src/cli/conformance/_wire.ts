import { isObject } from '../../_is-object.js'
import type { AppliedCredentials } from '../../client/_credentials.js'
import { readSse, SseTooLarge } from '../../client/_sse.js'

/**
 * What a conformance check sees of one call, whatever the binding: the answer's value or its error read the
 * binding's way, with what is wrong with its form kept apart (the checks of the binding judge that), never thrown.
 */

// biome-ignore lint/suspicious/noExplicitAny: answers as the agent sent them, each field checked where it is read
export type Json = Record<string, any>

export type Transport = 'jsonrpc' | 'http_json' | 'grpc'

export type Operation =
  | 'SendMessage'
  | 'SendStreamingMessage'
  | 'GetTask'
  | 'ListTasks'
  | 'CancelTask'
  | 'SubscribeToTask'
  | 'CreateTaskPushNotificationConfig'
  | 'GetTaskPushNotificationConfig'
  | 'ListTaskPushNotificationConfigs'
  | 'DeleteTaskPushNotificationConfig'
  | 'GetExtendedAgentCard'

export interface WireError {
  /** The binding's code: the JSON-RPC error code, the HTTP status, or the gRPC status code. */
  code: number
  /** The google.rpc.ErrorInfo reason, when the error carries one. */
  reason?: string
  /** Whether that ErrorInfo names the domain a2a-protocol.org. */
  a2aDomain: boolean
  message?: string
  /** What is wrong with the error's form in its binding (JSON-RPC error object, google.rpc.Status). */
  shapeProblems: string[]
  /** The error in a few words, for a report. */
  summary: string
}

export interface Answer {
  value?: Json
  error?: WireError
  /** An answer not in the binding's form at all: not JSON, neither a result nor an error, a stray HTTP status. */
  problem?: string
  /** The answer's Content-Type (HTTP bindings). */
  contentType?: string
  /** What is wrong with the JSON-RPC envelope (its version, the id echoed). */
  envelopeProblems: string[]
  /** The agent refused the credentials (or their absence): HTTP 401 / 403, gRPC UNAUTHENTICATED / PERMISSION_DENIED. */
  refused?: 401 | 403
}

export interface StreamAnswer extends Answer {
  /** The events, each a StreamResponse (a JSON-RPC event's result), when the answer was a stream. */
  events?: Json[]
  /** What is wrong with an event's framing in the binding, the first one found. */
  eventProblem?: string
}

export interface CallOptions {
  /** The A2A-Version to send: `1.0` unless given; `null` sends none. */
  version?: string | null
}

/** One interface of the agent, driven in its binding. */
export interface Wire {
  transport: Transport
  url: string
  call(operation: Operation, params: Json, options?: CallOptions): Promise<Answer>
  stream(operation: 'SendStreamingMessage' | 'SubscribeToTask', params: Json): Promise<StreamAnswer>
  /** A request body sent as is (JSON-RPC only): a malformed request or an unknown method. */
  raw?(body: string): Promise<Answer>
  close(): void
}

export interface WireOptions {
  /** The credentials sent with every call, placed as the card's schemes say (none when not given). */
  credentials?: AppliedCredentials
  timeoutMs: number
  /** The interface's tenant, sent with every call when it has one. */
  tenant?: string
}

/** A short view of a JSON value for a report. */
export function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 200 ? `${text.slice(0, 200)}…` : text
}

/** The ErrorInfo among an error's detail objects (JSON-RPC `data`, google.rpc.Status `details`). */
export function errorInfoOf(details: unknown): { reason?: string; a2aDomain: boolean } {
  if (!Array.isArray(details)) return { a2aDomain: false }
  const info = details.find(
    (detail) => isObject(detail) && String(detail['@type'] ?? '').endsWith('google.rpc.ErrorInfo'),
  ) as Json | undefined
  if (!info) return { a2aDomain: false }
  return {
    ...(typeof info.reason === 'string' && { reason: info.reason }),
    a2aDomain: info.domain === 'a2a-protocol.org',
  }
}

/** The most bytes read of one answer, or of one event of a stream: far more than any check's answer needs. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024
/** The most events read of one stream: a check's message is answered in a few. */
const MAX_EVENTS = 1000

/** An answer larger than the checks read. */
class AnswerTooLarge extends Error {
  constructor() {
    super(`an answer larger than ${MAX_ANSWER_BYTES} bytes`)
  }
}

/** The body as text, at most MAX_ANSWER_BYTES; why not, as `noAnswer` says it, when it cannot be read. */
export async function readBody(response: Response, timeoutMs: number): Promise<{ text: string } | { problem: string }> {
  const body = response.body
  if (!body) return { text: '' }
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      total += read.value.length
      if (total > MAX_ANSWER_BYTES) throw new AnswerTooLarge()
      chunks.push(read.value)
    }
  } catch (error) {
    await reader.cancel().catch(() => {})
    return { problem: error instanceof AnswerTooLarge ? error.message : noAnswer(error, timeoutMs) }
  }
  return { text: Buffer.concat(chunks).toString('utf8') }
}

/**
 * The `data:` payloads of a server-sent events body, each parsed, read by the client core's reader (each event at
 * most MAX_ANSWER_BYTES, at most MAX_EVENTS of them): the events, with what is wrong with one (not JSON, too
 * large, too many), or `failure` when the stream was cut or did not end in time.
 */
export async function readEvents(
  response: Response,
  timeoutMs: number,
): Promise<{ events: unknown[]; problem?: string } | { failure: string }> {
  const events: unknown[] = []
  const body = response.body
  if (!body) return { events }
  try {
    for await (const event of readSse(body, MAX_ANSWER_BYTES)) {
      try {
        events.push(JSON.parse(event.data))
      } catch {
        return { events, problem: `an event is not JSON: ${describe(event.data)}` }
      }
      if (events.length > MAX_EVENTS) return { events, problem: `the stream sent more than ${MAX_EVENTS} events` }
    }
  } catch (error) {
    if (error instanceof SseTooLarge) return { events, problem: error.message }
    return { failure: noAnswer(error, timeoutMs) }
  } finally {
    await body.cancel().catch(() => {})
  }
  return { events }
}

/** Why a fetch got no answer at all, in a few words. */
export function noAnswer(error: unknown, timeoutMs: number): string {
  const failure = error as Error & { cause?: { code?: string; message?: string } }
  if (failure.name === 'TimeoutError' || failure.name === 'AbortError') return `no answer within ${timeoutMs} ms`
  return `no answer: ${failure.cause?.code ?? failure.cause?.message ?? failure.message}`
}
