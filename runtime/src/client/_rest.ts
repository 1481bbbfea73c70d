import { restError } from './_error-names.js'
import { exchange, type HttpExchange, type HttpSettings } from './_http.js'
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
 * The HTTP+JSON binding (A2A v1.0 §11): each operation at its path (§11.3, the proto's `google.api.http` rules),
 * under `/{tenant}` when the interface has one; the request's fields that are not in the path go in the body of a
 * POST, or as camelCase query parameters of a GET or DELETE (§11.5). Errors are `google.rpc.Status` bodies, named by
 * their ErrorInfo reason (else their HTTP status); a stream's events are bare StreamResponses.
 */

const A2A_JSON = 'application/a2a+json'

interface Route {
  method: 'GET' | 'POST' | 'DELETE'
  path: string
  /** The request's fields the path carries (sent nowhere else). */
  inPath: string[]
}

const seg = (value: unknown) => encodeURIComponent(String(value ?? ''))

export function route(operation: UnaryOperation | StreamOperation, request: JsonObject): Route {
  const task = seg(request.id)
  const ofTask = seg(request.taskId)
  switch (operation) {
    case 'SendMessage':
      return { method: 'POST', path: '/message:send', inPath: [] }
    case 'SendStreamingMessage':
      return { method: 'POST', path: '/message:stream', inPath: [] }
    case 'GetTask':
      return { method: 'GET', path: `/tasks/${task}`, inPath: ['id'] }
    case 'ListTasks':
      return { method: 'GET', path: '/tasks', inPath: [] }
    case 'CancelTask':
      return { method: 'POST', path: `/tasks/${task}:cancel`, inPath: ['id'] }
    // The spec's text (§11.3.2) says POST, the proto's rule GET: servers take both.
    case 'SubscribeToTask':
      return { method: 'POST', path: `/tasks/${task}:subscribe`, inPath: ['id'] }
    case 'CreateTaskPushNotificationConfig':
      return { method: 'POST', path: `/tasks/${ofTask}/pushNotificationConfigs`, inPath: ['taskId'] }
    case 'GetTaskPushNotificationConfig':
      return { method: 'GET', path: `/tasks/${ofTask}/pushNotificationConfigs/${task}`, inPath: ['taskId', 'id'] }
    case 'ListTaskPushNotificationConfigs':
      return { method: 'GET', path: `/tasks/${ofTask}/pushNotificationConfigs`, inPath: ['taskId'] }
    case 'DeleteTaskPushNotificationConfig':
      return { method: 'DELETE', path: `/tasks/${ofTask}/pushNotificationConfigs/${task}`, inPath: ['taskId', 'id'] }
    case 'GetExtendedAgentCard':
      return { method: 'GET', path: '/extendedAgentCard', inPath: [] }
  }
}

/** The operations whose path names a task (`/tasks/{id}…`): there, an HTTP 404 says the task is not found. */
const namesTask = (operation: UnaryOperation | StreamOperation) => route(operation, {}).path.startsWith('/tasks/')

/** A field as a query parameter: text, numbers and booleans as they read; lists repeated (§11.5). */
export function addQuery(query: URLSearchParams, name: string, value: unknown) {
  if (value === undefined || value === null) return
  if (Array.isArray(value)) for (const item of value) addQuery(query, name, item)
  else if (typeof value === 'object') throw new TypeError(`${name} cannot travel as a query parameter`)
  else query.append(name, String(value))
}

export function restTransport(base: string, tenant: string | undefined, http: HttpSettings): Transport {
  const root = base.replace(/\/+$/, '') + (tenant ? `/${seg(tenant)}` : '')

  const send = (
    operation: UnaryOperation | StreamOperation,
    request: JsonObject,
    signal: AbortSignal | undefined,
    headers: Record<string, string>,
  ) => {
    const { method, path, inPath } = route(operation, request)
    const rest: JsonObject = {}
    for (const [name, value] of Object.entries(request)) if (!inPath.includes(name)) rest[name] = value
    let url = root + path
    let body: string | undefined
    if (method === 'POST') body = JSON.stringify(rest)
    else {
      const query = new URLSearchParams()
      // The tenant is the path's first segment; a GET has no body to repeat it in.
      for (const [name, value] of Object.entries(rest)) if (name !== 'tenant') addQuery(query, name, value)
      if (query.size) url += `?${query}`
    }
    return exchange(http, {
      method,
      url,
      headers: { ...(body !== undefined && { 'content-type': A2A_JSON }), ...headers },
      ...(body !== undefined && { body }),
      signal,
      withCredentials: true,
      secrets: pushConfigSecrets(request),
    })
  }

  /** A non-2xx answer to `operation` as the A2A error its Status names. */
  const errorOf = (operation: UnaryOperation | StreamOperation, answer: HttpExchange, json: unknown) => {
    const { status } = answer.response
    if (isObject(json) && isObject(json.error))
      return restError(json.error, status, { namesTask: namesTask(operation), redact: answer.redact.text })
    return badResponse(answer, `HTTP ${status} without a google.rpc.Status: ${preview(answer, json)}`)
  }

  return {
    async call(operation: UnaryOperation, request: JsonObject, { signal, traceHeaders }: Traced<CallOptions>) {
      const answer = await send(operation, request, signal, {
        accept: `${A2A_JSON}, application/json`,
        ...traceHeaders,
      })
      const json = await readJson(answer, http.maxBytes, signal)
      if (!answer.response.ok) throw errorOf(operation, answer, json)
      // DeleteTaskPushNotificationConfig answers google.protobuf.Empty, which may be no body at all.
      if (json === undefined) return {}
      return json
    },

    async *stream(operation: StreamOperation, request: JsonObject, options: Traced<StreamOptions>) {
      const { signal, lastEventId } = options
      const headers: Record<string, string> = { accept: 'text/event-stream', ...options.traceHeaders }
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId
      const answer = await send(operation, request, signal, headers)
      if (!answer.response.ok || !isEventStream(answer)) {
        const json = await readJson(answer, http.maxBytes, signal)
        if (!answer.response.ok) throw errorOf(operation, answer, json)
        throw badResponse(answer, `HTTP ${answer.response.status} that is not an event stream`)
      }
      for await (const { json, id } of sseJson(answer, http.maxBytes, signal)) {
        // A stream that fails after it began ends with a Status event.
        if (isObject(json) && isObject(json.error)) {
          const code = typeof json.error.code === 'number' ? json.error.code : 500
          throw restError(json.error, code, { namesTask: namesTask(operation), redact: answer.redact.text })
        }
        const event: StreamEvent = { response: checkStreamResponse(answer, json) }
        if (id !== undefined) event.eventId = id
        yield event
      }
    },
  }
}
