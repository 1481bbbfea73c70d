import { expect } from 'vitest'
import { eventReader } from './_sse.ts'
import type { Target } from './_transports.ts'

/**
 * One A2A v1.0 operation performed over either binding the HTTP server speaks — JSON-RPC (`POST /` with the method's
 * name) or HTTP+JSON (the operation's path and method) — and its outcome in one shape: the result, or the A2A error
 * type it failed with. The behaviour suite runs the same cases through both, so each binding answers as the other.
 */

export type V1Method =
  | 'SendMessage'
  | 'GetTask'
  | 'ListTasks'
  | 'CancelTask'
  | 'CreateTaskPushNotificationConfig'
  | 'GetTaskPushNotificationConfig'
  | 'ListTaskPushNotificationConfigs'
  | 'DeleteTaskPushNotificationConfig'
  | 'GetExtendedAgentCard'

export type V1StreamMethod = 'SendStreamingMessage' | 'SubscribeToTask'

/** An A2A error by its type's name (`TaskNotFound`, `InvalidParams`…) and message. */
export interface V1Error {
  type: string
  message: string
}

export type V1Outcome = { result: any; error?: undefined } | { result?: undefined; error: V1Error }

/** A stream that started (its StreamResponses, read one at a time), or the error it failed with before starting. */
export type V1Stream =
  | { error: V1Error; next?: undefined; lastId?: undefined }
  | { error?: undefined; next(): Promise<any | undefined>; lastId(): number | undefined; cancel(): Promise<void> }

export interface V1Caller {
  binding: 'JSON-RPC' | 'HTTP+JSON'
  call(
    target: Target,
    method: V1Method,
    params?: Record<string, any>,
    headers?: Record<string, string>,
  ): Promise<V1Outcome>
  stream(
    target: Target,
    method: V1StreamMethod,
    params: Record<string, any>,
    headers?: Record<string, string>,
  ): Promise<V1Stream>
}

const V1 = { 'a2a-version': '1.0' }

const JSON_RPC_TYPES: Record<number, string> = {
  [-32000]: 'Unauthorized',
  [-32001]: 'TaskNotFound',
  [-32002]: 'TaskNotCancelable',
  [-32003]: 'PushNotificationNotSupported',
  [-32004]: 'UnsupportedOperation',
  [-32005]: 'ContentTypeNotSupported',
  [-32007]: 'ExtendedAgentCardNotConfigured',
  [-32009]: 'VersionNotSupported',
  [-32600]: 'InvalidRequest',
  [-32602]: 'InvalidParams',
  [-32603]: 'Internal',
}

/** `TASK_NOT_FOUND` → `TaskNotFound`. */
const typeOfReason = (reason: string) =>
  reason
    .toLowerCase()
    .split('_')
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('')

const REST_TYPES: Record<number, string> = { 400: 'InvalidParams', 401: 'Unauthorized', 500: 'Internal' }

/** The A2A error of a `google.rpc.Status` answer: its ErrorInfo's reason, else what its HTTP status means. */
function restErrorOf(status: number, body: any): V1Error {
  expect(body.error.code).toBe(status)
  const info = body.error.details?.find((detail: any) => detail['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo')
  return {
    type: info ? typeOfReason(info.reason) : (REST_TYPES[status] ?? `HTTP ${status}`),
    message: body.error.message,
  }
}

function readStream(response: Response, unwrap: (event: any) => any): V1Stream {
  const reader = eventReader(response)
  return {
    next: async () => {
      const event = await reader.next()
      return event === undefined ? undefined : unwrap(event)
    },
    lastId: () => reader.lastId,
    cancel: () => reader.cancel(),
  }
}

export const jsonRpcCaller: V1Caller = {
  binding: 'JSON-RPC',
  async call(target, method, params = {}, headers = {}) {
    const reply = await target.rpc(method, params, { headers: { ...V1, ...headers } })
    if (reply.body.error)
      return { error: { type: JSON_RPC_TYPES[reply.body.error.code]!, message: reply.body.error.message } }
    return { result: reply.body.result }
  },
  async stream(target, method, params, headers = {}) {
    const response = await target.fetch('/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...V1, ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'stream', method, params }),
    })
    if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
      const { error } = await response.json()
      return { error: { type: JSON_RPC_TYPES[error.code]!, message: error.message } }
    }
    return readStream(response, (event) => {
      expect(event).toMatchObject({ jsonrpc: '2.0', id: 'stream' })
      return event.result
    })
  },
}

/** The query string of ListTasks params (`?pageSize=2&status=…`). */
function queryOf(params: Record<string, any>): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, String(value))
  const text = query.toString()
  return text ? `?${text}` : ''
}

/** The HTTP request of a v1.0 call over HTTP+JSON: its method, path and body. */
function restRequest(method: V1Method | V1StreamMethod, params: Record<string, any>): [string, string, unknown] {
  const { id, taskId, ...rest } = params
  const task = (value: string) => `/tasks/${encodeURIComponent(value)}`
  switch (method) {
    case 'SendMessage':
      return ['POST', '/message:send', params]
    case 'SendStreamingMessage':
      return ['POST', '/message:stream', params]
    case 'GetTask':
      return ['GET', `${task(id)}${queryOf(rest)}`, undefined]
    case 'ListTasks':
      return ['GET', `/tasks${queryOf(params)}`, undefined]
    case 'CancelTask':
      return ['POST', `${task(id)}:cancel`, undefined]
    case 'SubscribeToTask':
      return ['GET', `${task(id)}:subscribe`, undefined]
    case 'CreateTaskPushNotificationConfig':
      return ['POST', `${task(taskId)}/pushNotificationConfigs`, { id, ...rest }]
    case 'GetTaskPushNotificationConfig':
      return ['GET', `${task(taskId)}/pushNotificationConfigs/${encodeURIComponent(id)}`, undefined]
    case 'ListTaskPushNotificationConfigs':
      return ['GET', `${task(taskId)}/pushNotificationConfigs`, undefined]
    case 'DeleteTaskPushNotificationConfig':
      return ['DELETE', `${task(taskId)}/pushNotificationConfigs/${encodeURIComponent(id)}`, undefined]
    case 'GetExtendedAgentCard':
      return ['GET', '/extendedAgentCard', undefined]
  }
}

async function restFetch(
  target: Target,
  method: V1Method | V1StreamMethod,
  params: Record<string, any>,
  headers: Record<string, string>,
): Promise<Response> {
  const [verb, path, body] = restRequest(method, params)
  return target.fetch(path, {
    method: verb,
    headers: { ...V1, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
}

export const restCaller: V1Caller = {
  binding: 'HTTP+JSON',
  async call(target, method, params = {}, headers = {}) {
    const response = await restFetch(target, method, params, headers)
    const body = await response.json()
    if (response.status !== 200) return { error: restErrorOf(response.status, body) }
    expect(response.headers.get('content-type')).toBe('application/a2a+json')
    return { result: body }
  },
  async stream(target, method, params, headers = {}) {
    const response = await restFetch(target, method, params, headers)
    if (response.status !== 200) return { error: restErrorOf(response.status, await response.json()) }
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
    return readStream(response, (event) => event)
  },
}

export const callers: V1Caller[] = [jsonRpcCaller, restCaller]
