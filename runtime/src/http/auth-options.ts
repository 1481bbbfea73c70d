import type { Variable } from '../settings.js'
import type { AuthScheme } from '../types.js'

export interface AuthOptions {
  /** Accepted `Authorization: Bearer` tokens. Default: `A2A_BEARER_TOKEN` (comma-separated). */
  bearerTokens?: string[]
  /** Accepted `X-API-Key` values. Default: `A2A_API_KEY` (comma-separated). */
  apiKeys?: string[]
}

/** Environment variables that hold the credentials of each scheme. */
export const AUTH_ENV = { bearer: 'A2A_BEARER_TOKEN', apiKey: 'A2A_API_KEY' } as const satisfies Record<AuthScheme, Variable>
