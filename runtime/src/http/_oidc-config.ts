import { ConfigurationError } from '../errors.js'
import { type Env, envList, envValue } from '../settings.js'
import type { OidcOptions } from './auth-options.js'

/** What the `oidc` scheme accepts, read and checked once at start-up. */
export interface OidcConfig {
  /** Exactly as configured: discovery's `issuer` and each token's `iss` must equal it character for character. */
  issuer: string
  audience: string[]
  requiredScopes: string[]
  algorithms: string[]
  clockToleranceSeconds: number
}

/**
 * Asymmetric signatures only: `none` would accept anything, and an HS* algorithm would let anyone who has the
 * issuer's public key (everyone) sign tokens with it as the HMAC secret.
 */
const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const

const DEFAULT_CLOCK_TOLERANCE_SECONDS = 30

/** RFC 6749 §3.3: a scope is printable ASCII without space, `"` or `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/

const ISSUER_FIELD = 'auth.oidc.issuer (A2A_OIDC_ISSUER)'

/** undefined when no issuer is set (option or A2A_OIDC_ISSUER); ConfigurationError (errors.ts) for a bad setting. */
export function readOidcConfig(options: OidcOptions | undefined, env: Env): OidcConfig | undefined {
  const issuer = options?.issuer ?? envValue(env, 'A2A_OIDC_ISSUER')?.trim()
  if (issuer === undefined) return undefined
  const issuerUrl = secureUrl(issuer, ISSUER_FIELD)
  if (/[?#]/.test(issuerUrl.href)) {
    throw new ConfigurationError(`${ISSUER_FIELD} must have no query or fragment (got ${JSON.stringify(issuer)})`)
  }
  return {
    issuer,
    audience: readAudience(options?.audience, env),
    requiredScopes: readScopes(options?.requiredScopes, env),
    algorithms: readAlgorithms(options?.algorithms),
    clockToleranceSeconds: readClockTolerance(options?.clockToleranceSeconds),
  }
}

/**
 * An absolute `https:` URL, or `http:` on this machine (tests, local development): keys fetched in the clear
 * from anywhere else could be swapped on the way, and with them whose tokens are accepted.
 */
export function secureUrl(value: unknown, field: string): URL {
  const url = typeof value === 'string' && URL.canParse(value) ? new URL(value) : undefined
  if (url?.protocol === 'https:' || (url?.protocol === 'http:' && isLoopbackHostname(url.hostname))) return url
  throw new ConfigurationError(
    `${field} must be an absolute https: URL (http: only on a loopback address) (got ${JSON.stringify(value)})`,
  )
}

/**
 * `localhost`, 127.0.0.0/8 or ::1, as the URL parser writes them (it turns `127.1` into `127.0.0.1` and
 * `[0:0::1]` into `[::1]`); a name other than `localhost` is never resolved. No node:net here: the verifier runs
 * in Workers too.
 */
function isLoopbackHostname(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
}

function readAudience(given: string | string[] | undefined, env: Env): string[] {
  const field = 'auth.oidc.audience (A2A_OIDC_AUDIENCE)'
  const list = given === undefined ? envList(env, 'A2A_OIDC_AUDIENCE') : typeof given === 'string' ? [given] : given
  if (list === undefined) throw new ConfigurationError(`${field} is required with ${ISSUER_FIELD}`)
  if (!Array.isArray(list) || list.length === 0 || !list.every((entry) => typeof entry === 'string' && entry.trim())) {
    throw new ConfigurationError(`${field} must be one or more non-empty strings (got ${JSON.stringify(given)})`)
  }
  return list.map((entry) => entry.trim())
}

function readScopes(given: string[] | undefined, env: Env): string[] {
  const list = given ?? envList(env, 'A2A_OIDC_SCOPES') ?? []
  if (!Array.isArray(list) || !list.every((scope) => typeof scope === 'string' && SCOPE_TOKEN.test(scope))) {
    const field = 'auth.oidc.requiredScopes (A2A_OIDC_SCOPES)'
    throw new ConfigurationError(`${field} must be scopes without spaces or quotes (got ${JSON.stringify(list)})`)
  }
  return list
}

function readAlgorithms(given: string[] | undefined): string[] {
  if (given === undefined) return [...ASYMMETRIC_ALGORITHMS]
  const allowed: readonly string[] = ASYMMETRIC_ALGORITHMS
  if (!Array.isArray(given) || given.length === 0 || !given.every((alg) => allowed.includes(alg))) {
    const choices = `one or more of ${allowed.join(', ')}: asymmetric ones only, never none or HS*`
    throw new ConfigurationError(`auth.oidc.algorithms must be ${choices} (got ${JSON.stringify(given)})`)
  }
  return [...new Set(given)]
}

function readClockTolerance(given: number | undefined): number {
  const seconds = given ?? DEFAULT_CLOCK_TOLERANCE_SECONDS
  if (!Number.isSafeInteger(seconds) || seconds < 0) {
    throw new ConfigurationError(
      `auth.oidc.clockToleranceSeconds must be a whole number of seconds from 0 (got ${JSON.stringify(given)})`,
    )
  }
  return seconds
}
