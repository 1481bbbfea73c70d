import type { errors } from 'jose'
import { UnauthorizedError } from '../errors.js'

/**
 * Why a token was refused, as the client reads it: the reason only, never the token, a claim's value or a key.
 * undefined for an error that is not about the token. `joseErrors` is jose's `errors`, loaded by the verification.
 */
export function refusalFor(error: unknown, joseErrors: JoseErrors): UnauthorizedError | undefined {
  const reason = error instanceof joseErrors.JOSEError ? reasonFor(error, joseErrors) : undefined
  return reason === undefined ? undefined : new UnauthorizedError(`Unauthorized: ${reason}`)
}

export type JoseErrors = typeof errors

function reasonFor(error: errors.JOSEError, joseErrors: JoseErrors): string | undefined {
  switch (error.code) {
    case joseErrors.JWTExpired.code:
      return 'the token has expired'
    case joseErrors.JWTClaimValidationFailed.code:
      return claimReason(error as errors.JWTClaimValidationFailed)
    case joseErrors.JOSEAlgNotAllowed.code:
      return "the token's signing algorithm (alg) is not accepted"
    case joseErrors.JWSSignatureVerificationFailed.code:
      return "the token's signature does not verify"
    case joseErrors.JWKSNoMatchingKey.code:
      return "the token's signing key (kid) is not one the issuer publishes"
    case joseErrors.JWKSMultipleMatchingKeys.code:
      return "the token does not say which of the issuer's keys signed it (kid)"
    case joseErrors.JWSInvalid.code:
    case joseErrors.JWTInvalid.code:
      return 'the token is not a well-formed signed JWT'
    case joseErrors.JOSENotSupported.code:
      return 'the token uses an algorithm or header this agent does not support'
    default:
      return undefined
  }
}

/** jose names the claim (one of the registered ones it checks, never the token's own text) and what failed. */
function claimReason({ claim, reason }: errors.JWTClaimValidationFailed): string {
  if (reason === 'missing') return `the token has no "${claim}" claim`
  if (reason === 'invalid') return `the token's "${claim}" claim is not a valid value`
  switch (claim) {
    case 'nbf':
      return 'the token is not valid yet (nbf)'
    case 'iss':
      return "the token's issuer (iss) is not the one this agent trusts"
    case 'aud':
      return 'the token is not meant for this agent (aud)'
    default:
      return `the token's "${claim}" claim does not check`
  }
}
