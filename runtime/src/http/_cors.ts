import { ConfigurationError } from '../errors.js'
import { type Env, envValue, type Variable } from '../settings.js'

/**
 * Which other web origins may call the agent from a browser. A browser marks every cross-origin request with
 * `Origin`; one from an origin not listed here is refused before it reaches the agent, so a page elsewhere can
 * neither read the agent's answers nor make it act (a form or `no-cors` POST needs no preflight).
 */

export const CORS_ORIGINS_ENV: Variable = 'A2A_CORS_ORIGINS'

/**
 * `true` allows any origin; otherwise exact origins (`https://app.example.com`, port included when not the default).
 */
export type CorsOriginsSetting = string[] | true

/** The option, else `A2A_CORS_ORIGINS` (comma-separated, `*` for any), else none. */
export function readCorsOrigins(option: unknown, env: Env): CorsOriginsSetting {
  if (option !== undefined) {
    if (!Array.isArray(option))
      throw new ConfigurationError(
        `corsOrigins must be an array of origins such as "https://app.example.com", or ["*"] for any (got ${JSON.stringify(option)})`,
      )
    return entries(option, 'corsOrigins')
  }
  const raw = envValue(env, CORS_ORIGINS_ENV)
  if (raw === undefined) return []
  return entries(raw.split(','), CORS_ORIGINS_ENV)
}

function entries(values: unknown[], source: string): CorsOriginsSetting {
  const origins: string[] = []
  for (const value of values) {
    const entry = typeof value === 'string' ? value.trim() : ''
    if (entry === '*') return true
    if (entry === '' && typeof value === 'string' && source === CORS_ORIGINS_ENV) continue // "a,,b" or a trailing comma
    const origin = originOf(entry)
    if (origin === undefined) {
      throw new ConfigurationError(
        `${source} must list origins (scheme, host and port only) like "https://app.example.com" or "http://localhost:5173", or "*" for any (got ${JSON.stringify(typeof value === 'string' ? value.slice(0, 100) : value)})`,
      )
    }
    origins.push(origin)
  }
  return origins
}

/** The origin as browsers write it, when `entry` is one and nothing more (a trailing slash is forgiven). */
function originOf(entry: string): string | undefined {
  let url: URL
  try {
    url = new URL(entry)
  } catch {
    return undefined
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.origin.toLowerCase() !== entry.replace(/\/$/, '').toLowerCase()
  )
    return undefined
  return url.origin
}

/** The request headers a browser may send across origins: the A2A ones and the credentials this runtime reads. */
const ALLOWED_REQUEST_HEADERS = 'Content-Type, Authorization, X-API-Key, A2A-Version, A2A-Extensions, Last-Event-ID'
/** Response headers a browser client needs to see beyond the safelisted ones. */
const EXPOSED_HEADERS = 'WWW-Authenticate, Retry-After, ETag, A2A-Version'
/** How long a browser may reuse a preflight answer, in seconds (Chromium caps it at 7,200). */
const PREFLIGHT_MAX_AGE = '7200'

/**
 * What an answer varies by once origins are listed: a cache must not hand an answer made for one origin (or for
 * none) to another. The card also varies by A2A-Version, and a header set here replaces the response's own.
 */
export const VARY = 'Origin, A2A-Version'

/** Headers on every answer to an allowed cross-origin request. */
export function corsHeaders(origin: string): Array<[string, string]> {
  return [
    ['access-control-allow-origin', origin],
    ['access-control-expose-headers', EXPOSED_HEADERS],
    ['vary', VARY],
  ]
}

/** The headers of a preflight (`OPTIONS`) answer for an allowed origin, on a path that takes the methods `allow`. */
export function preflightHeaders(origin: string, allow: string): Array<[string, string]> {
  return [
    ['access-control-allow-origin', origin],
    ['access-control-allow-methods', allow],
    ['access-control-allow-headers', ALLOWED_REQUEST_HEADERS],
    ['access-control-max-age', PREFLIGHT_MAX_AGE],
    ['vary', VARY],
    ['allow', allow],
  ]
}
