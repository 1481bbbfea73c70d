import type { Variable } from '../settings.js'
import type { AuthScheme } from '../types.js'

/** Credentials for the schemes the card declares (`authentication.schemes`); `createA2AApp`'s `auth` option. */
export interface AuthOptions {
  /**
   * Accepted `Authorization: Bearer` tokens; `name:token` names the caller the token stands for (tokens without
   * a name are one shared caller).
   * @default A2A_BEARER_TOKEN (comma-separated), else none
   */
  bearerTokens?: string[]
  /**
   * Accepted `X-API-Key` values; `name:key` names the caller the key stands for (keys without a name are one
   * shared caller).
   * @default A2A_API_KEY (comma-separated), else none
   */
  apiKeys?: string[]
  /** The OpenID Connect issuer whose JWTs are accepted (the `oidc` scheme). */
  oidc?: OidcOptions
}

/** Which JWTs the `oidc` scheme accepts as `Authorization: Bearer` tokens. */
export interface OidcOptions {
  /**
   * The issuer (`iss`), whose `/.well-known/openid-configuration` names its keys: `https:`, or `http:` on a
   * loopback address only (tests, local development).
   * @default A2A_OIDC_ISSUER
   */
  issuer?: string
  /**
   * The audience a token must name in `aud` (one of these, when several).
   * @default A2A_OIDC_AUDIENCE (comma-separated)
   */
  audience?: string | string[]
  /**
   * Scopes every token must grant (its `scope` or `scp` claim).
   * @default A2A_OIDC_SCOPES (comma-separated), else none
   */
  requiredScopes?: string[]
  /**
   * The signature algorithms accepted: asymmetric ones only (never `none`, never HS*).
   * @default ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']
   */
  algorithms?: string[]
  /**
   * Seconds a token's `exp` and `nbf` may be off, for clocks that disagree a little.
   * @default 30
   */
  clockToleranceSeconds?: number
}

/** Environment variables that hold the credentials of each scheme (the issuer, for `oidc`). */
export const AUTH_ENV = {
  bearer: 'A2A_BEARER_TOKEN',
  apiKey: 'A2A_API_KEY',
  oidc: 'A2A_OIDC_ISSUER',
} as const satisfies Record<AuthScheme, Variable>
