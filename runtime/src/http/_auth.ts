import { createHash, timingSafeEqual } from 'node:crypto'
import { ConfigurationError, UnauthorizedError } from '../errors.js'
import type { Logger } from '../logger.js'
import { type Env, envList, processEnv } from '../settings.js'
import type { AuthScheme } from '../types.js'
import { AUTH_ENV, type AuthOptions } from './auth-options.js'

export type AuthCheck = (headers: Headers) => UnauthorizedError | undefined

const digest = (value: string): Buffer => createHash('sha256').update(value).digest()

/**
 * Checks a presented credential against the accepted ones in a time that says nothing about them: both sides
 * are SHA-256 digests, so the comparison never sees the secret's length nor stops at its first wrong byte
 * (`timingSafeEqual`), and every accepted digest is compared without stopping early, so timing says neither
 * how much of a guess was right nor which credential matched.
 */
export function credentialMatcher(accepted: string[]): (candidate: string) => boolean {
  const digests = accepted.map(digest)
  return (candidate) => {
    const given = digest(candidate)
    let match = false
    for (const expected of digests) match = timingSafeEqual(given, expected) || match
    return match
  }
}

/**
 * Builds the check for exactly the schemes the card declares. A declared scheme without credentials, or
 * credentials given for a scheme the card does not declare, stops start-up: card and server must agree.
 */
export function createAuthCheck(
  schemes: AuthScheme[] | undefined,
  options: AuthOptions = {},
  logger: Logger,
  env: Env = processEnv(),
): AuthCheck | undefined {
  const declared = new Set(schemes ?? [])
  const given: Record<AuthScheme, string[] | undefined> = {
    bearer: options.bearerTokens ?? envList(env, AUTH_ENV.bearer),
    apiKey: options.apiKeys ?? envList(env, AUTH_ENV.apiKey),
  }
  const option: Record<AuthScheme, string> = { bearer: 'auth.bearerTokens', apiKey: 'auth.apiKeys' }
  for (const scheme of ['bearer', 'apiKey'] as const) {
    if (declared.has(scheme) && !given[scheme]?.length) {
      throw new ConfigurationError(
        `The agent card declares the "${scheme}" authentication scheme but no credential is configured: set ${AUTH_ENV[scheme]} (or the ${option[scheme]} option)`,
      )
    }
    if (!declared.has(scheme) && (scheme === 'bearer' ? options.bearerTokens : options.apiKeys)?.length) {
      throw new ConfigurationError(
        `The ${option[scheme]} option is set but the agent card does not declare the "${scheme}" scheme; add it to card.authentication.schemes`,
      )
    }
    if (!declared.has(scheme) && given[scheme]) {
      logger.warn(
        `${AUTH_ENV[scheme]} is set but the agent card does not declare the "${scheme}" scheme, so it is not checked`,
      )
    }
  }
  if (declared.size === 0) return undefined

  const bearer = declared.has('bearer') ? credentialMatcher(given.bearer!) : undefined
  const apiKey = declared.has('apiKey') ? credentialMatcher(given.apiKey!) : undefined
  const expected = [bearer && 'Authorization: Bearer <token>', apiKey && 'X-API-Key: <key>']
    .filter(Boolean)
    .join(' or ')

  return (headers) => {
    let presented = false
    if (bearer) {
      const header = headers.get('authorization')
      if (header !== null) {
        presented = true
        const token = /^Bearer\s+(.+)$/i.exec(header)?.[1]
        if (token !== undefined && bearer(token.trim())) return undefined
      }
    }
    if (apiKey) {
      const key = headers.get('x-api-key')
      if (key !== null) {
        presented = true
        if (apiKey(key)) return undefined
      }
    }
    return new UnauthorizedError(presented ? 'Unauthorized: invalid credentials' : `Unauthorized: send ${expected}`)
  }
}
