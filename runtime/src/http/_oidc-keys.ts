import type { FetchImplementation, JWTVerifyGetKey } from 'jose'
import { isObject } from '../_is-object.js'
import { ConfigurationError } from '../errors.js'
import type { Logger } from '../logger.js'
import { loadJose } from './_jose.js'
import { secureUrl } from './_oidc-config.js'
import { createIssuerLink, type IssuerLink } from './_oidc-issuer-link.js'

/** How the verifier paces its requests to the issuer. */
export interface OidcTiming {
  /** After a failed fetch of the discovery document or the keys, how long tokens get 503 before it is asked again. */
  retryAfterFailureMs: number
  /** An unknown `kid` fetches the keys again at most once per this (a flood of made-up kids costs one fetch). */
  keyRefetchCooldownMs: number
  /** Keys older than this are fetched again before use. */
  keyMaxAgeMs: number
  /** One fetch's time limit. */
  fetchTimeoutMs: number
}

export const DEFAULT_OIDC_TIMING: OidcTiming = {
  retryAfterFailureMs: 5_000,
  keyRefetchCooldownMs: 30_000,
  keyMaxAgeMs: 10 * 60_000,
  fetchTimeoutMs: 5_000,
}

/**
 * The issuer's signing keys, for `jwtVerify`. Discovery happens on the first token that needs a key, not at start:
 * a server must start while its issuer is down. Its result is kept; a failed one is tried again (no sooner than
 * the issuer link allows).
 */
export function issuerKeys(issuer: string, logger: Logger, timing: OidcTiming): JWTVerifyGetKey {
  const link = createIssuerLink(issuer, logger, timing)
  let keySet: JWTVerifyGetKey | undefined
  let discovering: Promise<JWTVerifyGetKey> | undefined

  const discovered = (): Promise<JWTVerifyGetKey> => {
    if (keySet) return Promise.resolve(keySet)
    discovering ??= discover(issuer, link, timing)
      .then((keys) => {
        keySet = keys
        return keys
      })
      .finally(() => {
        discovering = undefined
      })
    return discovering
  }
  return async (header, token) => (await discovered())(header, token)
}

/** OpenID Connect Discovery §4: the issuer without its trailing `/`, then `/.well-known/openid-configuration`. */
export function discoveryUrl(issuer: string): URL {
  return new URL(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`)
}

async function discover(issuer: string, link: IssuerLink, timing: OidcTiming): Promise<JWTVerifyGetKey> {
  let jwksUri: URL | undefined
  await link.getJson(discoveryUrl(issuer), (body) => {
    const document = isObject(body) ? body : {}
    // §4.3: the document's issuer is the configured one exactly, else it speaks for another issuer.
    if (document.issuer !== issuer) return `names the issuer ${JSON.stringify(document.issuer)}, not ${issuer}`
    try {
      jwksUri = secureUrl(document.jwks_uri, 'its jwks_uri')
    } catch (error) {
      if (error instanceof ConfigurationError) return error.message
      throw error
    }
    return undefined
  })
  const { createRemoteJWKSet, customFetch } = await loadJose()
  // jose keeps the keys, refetches them for an unknown kid at most once per cooldown and shares one fetch among
  // the requests that wait for it; every fetch goes through the link, so an outage is paced and logged once.
  return createRemoteJWKSet(jwksUri!, {
    cooldownDuration: timing.keyRefetchCooldownMs,
    cacheMaxAge: timing.keyMaxAgeMs,
    timeoutDuration: timing.fetchTimeoutMs,
    [customFetch]: (async (url, init) =>
      Response.json(await link.getJson(new URL(url), checkKeySet, init.signal))) satisfies FetchImplementation,
  })
}

/** The shape jose requires of a JWKS (`keys`, an array of objects), checked here so a bad one counts as an outage. */
const checkKeySet = (body: unknown): string | undefined =>
  isObject(body) && Array.isArray(body.keys) && body.keys.every(isObject) ? undefined : 'is not a JSON Web Key Set'
