import type { JWTPayload, JWTVerifyOptions } from 'jose'
import { heapBytes } from '../_heap-bytes.js'
import { InsufficientScopeError, ServerUnavailableError, UnauthorizedError } from '../errors.js'
import type { Logger } from '../logger.js'
import { loadJose } from './_jose.js'
import type { OidcConfig } from './_oidc-config.js'
import { IssuerUnavailable } from './_oidc-issuer-link.js'
import { DEFAULT_OIDC_TIMING, issuerKeys, type OidcTiming } from './_oidc-keys.js'
import { type JoseErrors, refusalFor } from './_oidc-refusals.js'
import { VerifiedTokenCache } from './_oidc-token-cache.js'

export { type OidcConfig, readOidcConfig } from './_oidc-config.js'

/** What a verified token says about its caller. */
export interface VerifiedToken {
  issuer: string
  subject: string
  /** From `scope` (space-separated) and `scp` (an array, or a space-separated string). */
  scopes: string[]
  /** Every claim of the token, frozen: requests presenting the same token may share it. */
  claims: Record<string, unknown>
}

export interface OidcVerifier {
  /**
   * Resolves the verified token; rejects with UnauthorizedError (401; the message says why, never the token or a
   * key), InsufficientScopeError (403) for a missing required scope, or ServerUnavailableError (503) when the
   * issuer's discovery document or keys cannot be fetched.
   */
  verify(token: string): Promise<VerifiedToken>
}

/** `timing` paces the requests to the issuer (tests shorten it). */
export function createOidcVerifier(
  config: OidcConfig,
  logger: Logger,
  timing: OidcTiming = DEFAULT_OIDC_TIMING,
): OidcVerifier {
  const keys = issuerKeys(config.issuer, logger, timing)
  const options: JWTVerifyOptions = {
    issuer: config.issuer,
    audience: config.audience,
    // Pinned: `none` and HS* never reach a key, so a token cannot choose how it is checked.
    algorithms: config.algorithms,
    clockTolerance: config.clockToleranceSeconds,
    requiredClaims: ['exp', 'sub'],
  }
  const verified = new VerifiedTokenCache<VerifiedToken>()
  return {
    async verify(token) {
      const cached = verified.get(token)
      if (cached) return cached
      const jose = await loadJose()
      let payload: JWTPayload
      try {
        ;({ payload } = await jose.jwtVerify(token, keys, options))
      } catch (error) {
        throw unverified(error, logger, jose.errors)
      }
      const accepted = acceptedToken(payload, config)
      // `requiredClaims` made jose check that `exp` is there and a number.
      verified.set(token, accepted, payload.exp!, heapBytes(accepted.claims))
      return accepted
    },
  }
}

function unverified(error: unknown, logger: Logger, joseErrors: JoseErrors): Error {
  if (error instanceof IssuerUnavailable) {
    return new ServerUnavailableError('Service unavailable: the token issuer cannot be reached; retry later', 503)
  }
  const refusal = refusalFor(error, joseErrors)
  if (refusal) return refusal
  // Not about the token as far as we know (a key the issuer published that cannot be used, say): refused all the
  // same, the detail for the operator only. The error carries no token.
  logger.warn('OpenID Connect: a token could not be verified', error)
  return new UnauthorizedError('Unauthorized: the token could not be verified')
}

function acceptedToken(payload: JWTPayload, config: OidcConfig): VerifiedToken {
  if (typeof payload.sub !== 'string' || payload.sub === '') {
    throw new UnauthorizedError('Unauthorized: the token\'s "sub" claim is not a valid value')
  }
  const scopes = grantedScopes(payload)
  const missing = config.requiredScopes.filter((scope) => !scopes.includes(scope))
  if (missing.length > 0) throw new InsufficientScopeError(missing)
  return { issuer: config.issuer, subject: payload.sub, scopes, claims: deepFreeze(payload) }
}

/** Entries that are not strings are ignored: fewer scopes never grant more. */
function grantedScopes(payload: JWTPayload): string[] {
  const words = (value: unknown): string[] =>
    typeof value === 'string'
      ? value.split(' ')
      : Array.isArray(value)
        ? value.filter((entry) => typeof entry === 'string')
        : []
  return [...new Set([...words(payload.scope), ...words(payload.scp)])].filter((scope) => scope !== '')
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const entry of Object.values(value)) deepFreeze(entry)
  }
  return value
}
