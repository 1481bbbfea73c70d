import { expect } from 'vitest'
import type { Target } from './_transports.ts'

/** Requests of A2A v1.0's HTTP+JSON binding, as its clients send them: `A2A-Version: 1.0`, JSON bodies. */

export const V1_HEADER = { 'a2a-version': '1.0' } as const

export interface RestReply {
  status: number
  headers: Headers
  /** The parsed JSON body (undefined when there is none). */
  body: any
}

export interface RestInit {
  /** A value sent as JSON (`application/json`), or a string sent as it is. */
  body?: unknown
  headers?: Record<string, string>
  signal?: AbortSignal
}

/** The raw answer to `method path` (the path under the agent's base address, with its query). */
export function restFetch(target: Target, method: string, path: string, init: RestInit = {}): Promise<Response> {
  const { body, headers = {}, signal } = init
  const typed = body !== undefined && typeof body !== 'string'
  return target.fetch(path, {
    method,
    headers: { ...V1_HEADER, ...(typed && { 'content-type': 'application/json' }), ...headers },
    ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    ...(signal && { signal }),
  })
}

/** `method path` answered and read. */
export async function rest(target: Target, method: string, path: string, init: RestInit = {}): Promise<RestReply> {
  const response = await restFetch(target, method, path, init)
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined }
}

/** A successful answer's body: 200 with `application/a2a+json`. */
export async function restResult(target: Target, method: string, path: string, init: RestInit = {}): Promise<any> {
  const reply = await rest(target, method, path, init)
  expect(reply.body?.error, JSON.stringify(reply.body)).toBeUndefined()
  expect(reply.status).toBe(200)
  expect(reply.headers.get('content-type')).toBe('application/a2a+json')
  return reply.body
}

/** The ErrorInfo detail of an A2A error. */
export const errorInfo = (reason: string) => ({
  '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
  reason,
  domain: 'a2a-protocol.org',
})

/**
 * Checks an answer is a `google.rpc.Status` of HTTP status `code` and canonical code `status` (with `reason`'s
 * ErrorInfo when given) and returns its `error`.
 */
export function expectStatus(reply: RestReply, code: number, status: string, reason?: string): any {
  expect(reply.status, JSON.stringify(reply.body)).toBe(code)
  expect(reply.headers.get('content-type')).toBe('application/a2a+json')
  expect(reply.body).toEqual({ error: expect.objectContaining({ code, status, message: expect.any(String) }) })
  const keys = Object.keys(reply.body.error).sort()
  expect(keys.filter((key) => key !== 'details')).toEqual(['code', 'message', 'status'])
  if (reason) expect(reply.body.error.details).toContainEqual(expect.objectContaining(errorInfo(reason)))
  return reply.body.error
}
