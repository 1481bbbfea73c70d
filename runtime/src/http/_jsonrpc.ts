import { FastResponse } from 'srvx'
import { isObject } from '../_is-object.js'
import { type A2AError, InvalidRequestError } from '../errors.js'
import { LARGE_ANSWER_CHARS, largeJsonResponse } from './_large-answer.js'
import type { Outgoing } from './_outgoing.js'

export type JsonRpcId = string | number | null

export interface JsonRpcCall {
  /** `null` for a request that gave none (see `readCall`). */
  id: JsonRpcId
  method: string
  params: unknown
}

const JSON_HEADERS = { 'content-type': 'application/json' } as const
// As [name, value] pairs the response writer takes them as they are (an object is turned into pairs each time).
const JSON_HEADER_PAIRS: Array<[string, string]> = [['content-type', 'application/json']]

/** The request id when the body has a usable one, so even an invalid request gets its id echoed. */
export function idOf(body: unknown): JsonRpcId {
  if (!isObject(body)) return null
  const { id } = body
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null
}

/** Checks the JSON-RPC 2.0 envelope; the message names what is wrong. */
export function readCall(body: unknown): JsonRpcCall {
  if (Array.isArray(body))
    throw new InvalidRequestError('batch requests (arrays) are not supported; send one request object')
  if (!isObject(body)) throw new InvalidRequestError('the body must be a JSON-RPC request object')
  if (body.jsonrpc !== '2.0') throw new InvalidRequestError('`jsonrpc` must be "2.0"')
  if (typeof body.method !== 'string' || body.method === '')
    throw new InvalidRequestError('`method` must be a non-empty string')
  const id = idOf(body)
  // A request without an id is a notification to JSON-RPC, but over HTTP its sender waits for an answer: it gets
  // one, with `id: null`, its result or the error it deserves (an unknown method, bad params) as any request.
  if (id === null && body.id !== undefined && body.id !== null)
    throw new InvalidRequestError('`id` must be a string, a number or null')
  return { id, method: body.method, params: body.params }
}

/**
 * The answer carrying `result`. With `outgoing`, a large one is handed to the connection as the client reads it,
 * counted against the server's budget of unread bytes (and refused with a 503 error when it does not fit).
 */
export function resultResponse(id: JsonRpcId, result: unknown, outgoing?: Outgoing): Response {
  const json = JSON.stringify({ jsonrpc: '2.0', id, result })
  if (outgoing !== undefined && json.length > LARGE_ANSWER_CHARS) return largeJsonResponse(json, outgoing)
  return new FastResponse(json, { headers: JSON_HEADER_PAIRS })
}

export function errorResponse(id: JsonRpcId, error: A2AError, headers?: Record<string, string>): Response {
  const detail =
    error.data === undefined
      ? { code: error.code, message: error.message }
      : { code: error.code, message: error.message, data: error.data }
  const body = JSON.stringify({ jsonrpc: '2.0', id, error: detail })
  return new FastResponse(body, {
    status: error.httpStatus,
    headers: headers ? { ...JSON_HEADERS, ...headers } : JSON_HEADERS,
  })
}
