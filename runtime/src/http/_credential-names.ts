import type { Principal } from '../types.js'

/**
 * `name:secret` names the caller a listed credential stands for (`A2A_API_KEY=alice:k1,bob:k2`); credentials
 * without a name are together one shared caller. A name is a word of letters, digits, `.`, `_` and `-` starting
 * with a letter (up to 64); generated secrets (hex, base64url) have no colon, so none of them reads as named.
 */
const NAMED = /^([A-Za-z][\w.-]{0,63}):(.+)$/s

export interface ListedCredential {
  /** What the client sends. */
  secret: string
  /** Who it proves, made once: every request with this credential gets this object. */
  principal: Principal
}

const NO_SCOPES: readonly string[] = Object.freeze([])
const NO_CLAIMS: Readonly<Record<string, unknown>> = Object.freeze({})

/** The shared caller of unnamed credentials, and each name's. */
export function namedCredentials(scheme: 'bearer' | 'apiKey', entries: string[]): ListedCredential[] {
  return entries.map((entry) => {
    const match = NAMED.exec(entry)
    const name = match?.[1]
    return {
      secret: match ? match[2]! : entry,
      principal: Object.freeze({
        id: `credential:${name ?? ''}`,
        scheme,
        subject: name,
        issuer: undefined,
        scopes: NO_SCOPES,
        claims: NO_CLAIMS,
      }),
    }
  })
}
