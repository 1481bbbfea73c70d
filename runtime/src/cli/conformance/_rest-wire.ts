import { isObject } from '../../_is-object.js'
import {
  type Answer,
  type CallOptions,
  describe,
  errorInfoOf,
  type Json,
  noAnswer,
  type Operation,
  type StreamAnswer,
  sseEvents,
  type Wire,
  type WireError,
  type WireOptions,
} from './_wire.js'

/** The HTTP+JSON binding (A2A v1.0 §11): each operation at its path, errors as google.rpc.Status. */
export function restWire(url: string, options: WireOptions): Wire {
  const base = `${url.replace(/\/+$/, '')}${options.tenant ? `/${encodeURIComponent(options.tenant)}` : ''}`
  const fetchOf = (operation: Operation, params: Json, version: string | null): Promise<Response> => {
    const { method, path, body } = route(operation, params)
    return fetch(`${base}${path}`, {
      method,
      headers: {
        ...(body !== undefined && { 'content-type': 'application/a2a+json' }),
        ...(version !== null && { 'a2a-version': version }),
        ...options.headers,
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs),
    })
  }
  return {
    transport: 'http_json',
    url,
    async call(operation, params, callOptions: CallOptions = {}) {
      let response: Response
      try {
        response = await fetchOf(operation, params, callOptions.version === undefined ? '1.0' : callOptions.version)
      } catch (error) {
        return { problem: noAnswer(error, options.timeoutMs), envelopeProblems: [] }
      }
      return readAnswer(response, options.timeoutMs)
    },
    async stream(operation, params) {
      let response: Response
      try {
        response = await fetchOf(operation, params, '1.0')
      } catch (error) {
        return { problem: noAnswer(error, options.timeoutMs), envelopeProblems: [] }
      }
      const contentType = response.headers.get('content-type') ?? ''
      if (!response.ok || !contentType.startsWith('text/event-stream')) return readAnswer(response, options.timeoutMs)
      let text: string
      try {
        text = await response.text()
      } catch (error) {
        return {
          problem: `the stream did not end: ${noAnswer(error, options.timeoutMs)}`,
          contentType,
          envelopeProblems: [],
        }
      }
      const parsed = sseEvents(text)
      if ('problem' in parsed) return { contentType, envelopeProblems: [], events: [], eventProblem: parsed.problem }
      const answer: StreamAnswer = { contentType, envelopeProblems: [], events: [] }
      for (const event of parsed.events) {
        if (isObject(event) && isObject(event.error)) answer.error = statusError(response.status, event)
        else if (isObject(event)) answer.events!.push(event)
        else answer.eventProblem ??= `an event is not a JSON object: ${describe(event)}`
      }
      return answer
    },
    close() {},
  }
}

const segment = (value: unknown) => encodeURIComponent(String(value ?? ''))

/** Where an operation lives (§11.3) and what it sends: the path's fields leave the body, GETs take a query. */
function route(operation: Operation, params: Json): { method: string; path: string; body?: Json } {
  const { id, taskId, ...rest } = params
  const task = `/tasks/${segment(operation.includes('PushNotification') ? taskId : id)}`
  switch (operation) {
    case 'SendMessage':
      return { method: 'POST', path: '/message:send', body: params }
    case 'SendStreamingMessage':
      return { method: 'POST', path: '/message:stream', body: params }
    case 'GetTask':
      return { method: 'GET', path: `${task}${query(rest)}` }
    case 'ListTasks':
      return { method: 'GET', path: `/tasks${query(params)}` }
    case 'CancelTask':
      return { method: 'POST', path: `${task}:cancel`, body: rest }
    case 'SubscribeToTask':
      return { method: 'POST', path: `${task}:subscribe`, body: rest }
    case 'CreateTaskPushNotificationConfig':
      return { method: 'POST', path: `${task}/pushNotificationConfigs`, body: { ...(id && { id }), ...rest } }
    case 'GetTaskPushNotificationConfig':
      return { method: 'GET', path: `${task}/pushNotificationConfigs/${segment(id)}` }
    case 'ListTaskPushNotificationConfigs':
      return { method: 'GET', path: `${task}/pushNotificationConfigs${query(rest)}` }
    case 'DeleteTaskPushNotificationConfig':
      return { method: 'DELETE', path: `${task}/pushNotificationConfigs/${segment(id)}` }
    case 'GetExtendedAgentCard':
      return { method: 'GET', path: '/extendedAgentCard' }
  }
}

function query(params: Json): string {
  const entries = Object.entries(params).filter(([, value]) => value !== undefined && !isObject(value))
  return entries.length === 0 ? '' : `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)]))}`
}

async function readAnswer(response: Response, timeoutMs: number): Promise<Answer> {
  const contentType = response.headers.get('content-type') ?? ''
  if (response.status === 401 || response.status === 403) {
    await response.body?.cancel()
    return { refused: response.status, contentType, envelopeProblems: [] }
  }
  let text: string
  try {
    text = await response.text()
  } catch (error) {
    return { problem: noAnswer(error, timeoutMs), contentType, envelopeProblems: [] }
  }
  let body: unknown
  try {
    body = text === '' && response.ok ? {} : JSON.parse(text)
  } catch {
    return {
      problem: `HTTP ${response.status} ${contentType || 'without a content type'}, not JSON`,
      contentType,
      envelopeProblems: [],
    }
  }
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
