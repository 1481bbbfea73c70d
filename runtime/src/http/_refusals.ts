import type { A2AError } from '../errors.js'

/**
 * The headers an answer that refuses a request carries, the same in every HTTP binding: the challenge of a refused
 * credential, and for a refused body or a server going away a closed connection (the rest of the body is still on
 * it; the client is better served elsewhere), with when to try again.
 */

/** RFC 6750 §3.1: a token that proves the caller but lacks a scope the agent requires. */
const INSUFFICIENT_SCOPE = { 'www-authenticate': 'Bearer error="insufficient_scope"' } as const
const CLOSE_CONNECTION = { connection: 'close' } as const
const RETRY_LATER = { 'retry-after': '1' } as const
const CLOSE_RETRY_LATER = { ...CLOSE_CONNECTION, ...RETRY_LATER } as const

/** The headers of a refused credential: the agent's challenge for a 401, `insufficient_scope` for a 403. */
export function credentialRefusalHeaders(
  error: A2AError,
  challenge: Record<string, string> | undefined,
): Record<string, string> | undefined {
  if (error.httpStatus === 401) return challenge
  if (error.httpStatus === 403) return INSUFFICIENT_SCOPE
  // The issuer cannot be reached (503): try again, as any other 503.
  return errorHeaders(error.httpStatus)
}

/** The headers of an error answered with `status`, if any. */
export function errorHeaders(status: number): Record<string, string> | undefined {
  if (status === 503) return CLOSE_RETRY_LATER
  if (status === 413) return CLOSE_CONNECTION
  if (status === 429) return RETRY_LATER
  return undefined
}

/** Node's error for a request whose connection closed before its body was read: no server error, nobody to answer. */
export function clientLeft(error: unknown): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === 'ECONNRESET' && error.message === 'aborted'
}
