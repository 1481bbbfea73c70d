import { createHash, timingSafeEqual } from 'node:crypto'
import { A2AError, ConfigurationError, UnauthorizedError } from '../errors.js'
import type { Logger } from '../logger.js'
import { type Env, envList, processEnv } from '../settings.js'
import type { AuthScheme, MaybePromise, Principal } from '../types.js'
import { namedCredentials } from './_credential-names.js'
import { createOidcVerifier, type OidcVerifier, readOidcConfig, type VerifiedToken } from './_oidc.js'
import { AUTH_ENV, type AuthOptions } from './auth-options.js'

/** Who the request is from, or why it is refused (401; 403 for a token without a required scope; 503). */
type AuthOutcome = Principal | A2AError

/** Checks a request's credentials: synchronous for credential lists, a promise only when a JWT is verified. */
export type AuthCheck = (headers: Headers) => MaybePromise<AuthOutcome>

const digest = (value: string): Buffer => createHash('sha256').update(value).digest()

/**
 * Checks a presented credential against the accepted ones in a time that says nothing about them: both sides
 * are SHA-256 digests, so the comparison never sees the secret's length nor stops at its first wrong byte
 * (`timingSafeEqual`), and every accepted digest is compared without stopping early, so timing says neither
 * how much of a guess was right nor which credential matched. Answers the index of the match, or -1.
 */
export function credentialMatcher(accepted: string[]): (candidate: string) => number {
  const digests = accepted.map(digest)
  return (candidate) => {
    const given = digest(candidate)
    let match = -1
    for (let i = 0; i < digests.length; i++) if (timingSafeEqual(given, digests[i]!) && match < 0) match = i
    return match
  }
}

/**
 * The scheme's credentials as the matcher sees them, and the principal each one proves. The names read are said
 * once: an entry `name:secret` is named, so a secret that was written with a colon shows up here.
 */
function credentialCheck(
  scheme: 'bearer' | 'apiKey',
  entries: string[],
  /** Where the entries come from, as the line says it: the variable or the option. */
  source: string,
  logger: Logger,
): (candidate: string) => Principal | undefined {
  const credentials = namedCredentials(scheme, entries)
  const names = credentials.flatMap(({ principal }) => (principal.subject === undefined ? [] : [principal.subject]))
  if (names.length > 0)
    logger.info(
      `${source}: ${names.length} named credential${names.length === 1 ? '' : 's'} (${[...new Set(names)].join(', ')}), ${credentials.length - names.length} unnamed`,
    )
  const matches = credentialMatcher(credentials.map((credential) => credential.secret))
  return (candidate) => credentials[matches(candidate)]?.principal
}

const BEARER = /^Bearer\s+(.+)$/i
/** A compact JWS: three base64url parts. A listed bearer token of this shape is still checked as listed first. */
const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/

/**
 * Builds the check for exactly the schemes the card declares. A declared scheme without credentials (or, for
 * `oidc`, without an issuer), or credentials given for a scheme the card does not declare, stops start-up: card and
 * server must agree.
 */
export function createAuthCheck(
  schemes: AuthScheme[] | undefined,
  options: AuthOptions = {},
  logger: Logger,
  env: Env = processEnv(),
): AuthCheck | undefined {
  const declared = new Set(schemes ?? [])
  const lists: Record<'bearer' | 'apiKey', string[] | undefined> = {
    bearer: options.bearerTokens ?? envList(env, AUTH_ENV.bearer),
    apiKey: options.apiKeys ?? envList(env, AUTH_ENV.apiKey),
  }
  const optionNames: Record<AuthScheme, string> = {
    bearer: 'auth.bearerTokens',
    apiKey: 'auth.apiKeys',
    oidc: 'auth.oidc.issuer',
  }
  const oidcConfig = readOidcConfig(options.oidc, env)
  const given: Record<AuthScheme, boolean> = {
    bearer: Boolean(lists.bearer?.length),
    apiKey: Boolean(lists.apiKey?.length),
    oidc: oidcConfig !== undefined,
  }
  const byOption: Record<AuthScheme, boolean> = {
    bearer: Boolean(options.bearerTokens?.length),
    apiKey: Boolean(options.apiKeys?.length),
    oidc: options.oidc?.issuer !== undefined,
  }
  for (const scheme of ['bearer', 'apiKey', 'oidc'] as const) {
    if (declared.has(scheme) && !given[scheme]) {
      throw new ConfigurationError(
        `The agent card declares the "${scheme}" authentication scheme but no ${scheme === 'oidc' ? 'issuer' : 'credential'} is configured: set ${AUTH_ENV[scheme]} (or the ${optionNames[scheme]} option)`,
      )
    }
    if (!declared.has(scheme) && byOption[scheme]) {
      throw new ConfigurationError(
        `The ${optionNames[scheme]} option is set but the agent card does not declare the "${scheme}" scheme; add it to card.authentication.schemes`,
      )
    }
    if (!declared.has(scheme) && given[scheme]) {
      logger.warn(
        `${AUTH_ENV[scheme]} is set but the agent card does not declare the "${scheme}" scheme, so it is not checked`,
      )
    }
  }
  if (declared.size === 0) return undefined

  const sourceOf = (scheme: 'bearer' | 'apiKey') => (byOption[scheme] ? optionNames[scheme] : AUTH_ENV[scheme])
  const bearer = declared.has('bearer')
    ? credentialCheck('bearer', lists.bearer!, sourceOf('bearer'), logger)
    : undefined
  const apiKey = declared.has('apiKey')
    ? credentialCheck('apiKey', lists.apiKey!, sourceOf('apiKey'), logger)
    : undefined
  const oidc: OidcVerifier | undefined = declared.has('oidc') ? createOidcVerifier(oidcConfig!, logger) : undefined
  const expected = [(bearer || oidc) && 'Authorization: Bearer <token>', apiKey && 'X-API-Key: <key>']
    .filter(Boolean)
    .join(' or ')
  const missing = new UnauthorizedError(`Unauthorized: send ${expected}`)
  const invalid = new UnauthorizedError('Unauthorized: invalid credentials')

  return (headers) => {
    let presented = false
    if (bearer || oidc) {
      const header = headers.get('authorization')
      if (header !== null) {
        presented = true
        const token = BEARER.exec(header)?.[1]?.trim()
        if (token !== undefined) {
          const listed = bearer?.(token)
          if (listed) return listed
          if (oidc && JWT_SHAPE.test(token)) return verified(oidc, token)
        }
      }
    }
    if (apiKey) {
      const key = headers.get('x-api-key')
      if (key !== null) {
        presented = true
        const listed = apiKey(key)
        if (listed) return listed
      }
    }
    return presented ? invalid : missing
  }
}

// A token the verifier remembers comes back as the same object: its principal is made once too.
const principals = new WeakMap<VerifiedToken, Principal>()

/** The principal a verified token proves; its refusal (an A2AError) as the outcome, not a rejection. */
async function verified(oidc: OidcVerifier, token: string): Promise<AuthOutcome> {
  try {
    const verifiedToken = await oidc.verify(token)
    let principal = principals.get(verifiedToken)
    if (!principal) {
      const { issuer, subject, scopes, claims } = verifiedToken
      const frozenScopes = Object.freeze([...scopes])
      principal = Object.freeze({
        id: `${issuer} ${subject}`,
        scheme: 'oidc',
        subject,
        issuer,
        scopes: frozenScopes,
        claims,
      })
      principals.set(verifiedToken, principal)
    }
    return principal
  } catch (error) {
    if (error instanceof A2AError) return error
    throw error
  }
}
