import type { Variable } from '../settings.js'
import type { AuthScheme } from '../types.js'

/** Credentials for the schemes the card declares (`authentication.schemes`); `createA2AApp`'s `auth` option. */
export interface AuthOptions {
  /**
   * Accepted `Authorization: Bearer` tokens.
   * @default A2A_BEARER_TOKEN (comma-separated), else none
   */
  bearerTokens?: string[]
  /**
   * Accepted `X-API-Key` values.
   * @default A2A_API_KEY (comma-separated), else none
   */
  apiKeys?: string[]
}

/** Environment variables that hold the credentials of each scheme. */
export const AUTH_ENV = { bearer: 'A2A_BEARER_TOKEN', apiKey: 'A2A_API_KEY' } as const satisfies Record<
  AuthScheme,
  Variable
>
