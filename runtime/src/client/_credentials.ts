import { type Secrets, SHORTEST_ECHOED_VALUE } from './_wire.js'
import type { AgentCard } from './types.js'

/**
 * Where the caller's credentials go, per the schemes the card declares (A2A v1.0 §4.5, §7.3): a bearer token as
 * `Authorization: Bearer` when a scheme accepts one (HTTP auth `Bearer`, OAuth 2.0, OpenID Connect); an API key in
 * the header, query parameter or cookie its scheme names. A credential no declared scheme accepts is not sent.
 * A card that declares no scheme says nothing of where a credential goes: what the caller does not withhold goes
 * where agents usually look (`Authorization: Bearer`, `X-API-Key`), and is reported, since the card asked for none.
 * Service parameters travel as request headers (§3.2.6).
 */

type Credential = 'bearer' | 'apiKey'

export interface CallerCredentials {
  bearer?: string
  apiKey?: string
  serviceParams?: Record<string, string>
  /** Credentials not to send to an agent whose card declares no scheme. */
  withholdWithoutScheme?: readonly Credential[]
  /** More values to redact wherever they appear (a push config's token the caller will send). */
  secrets?: readonly string[]
}

export interface AppliedCredentials {
  headers: Record<string, string>
  /** The API key as a query parameter: [name, value]. */
  query?: [string, string]
  /** The API key as a cookie: [name, value]. */
  cookie?: [string, string]
  /** Whether a request carries a credential (a 401 then means refused, not missing). */
  sent: boolean
  /** The caller's credentials that no scheme of the card accepts (or withheld from a card without one): not sent. */
  unused: Credential[]
  /** The caller's credentials sent though the card declares no scheme. */
  undeclared: Credential[]
  secrets: Secrets
}

type Scheme = Record<string, unknown>

/** Scheme names in the order the card's security requirements name them, then the rest as declared. */
function orderedSchemes(card: AgentCard): Array<[string, Scheme]> {
  const declared = card.securitySchemes ?? {}
  const names: string[] = []
  for (const requirement of card.securityRequirements ?? [])
    for (const name of Object.keys(requirement?.schemes ?? {})) if (!names.includes(name)) names.push(name)
  for (const name of Object.keys(declared)) if (!names.includes(name)) names.push(name)
  return names.flatMap((name) => {
    const scheme = declared[name]
    return scheme && typeof scheme === 'object' ? [[name, scheme as Scheme]] : []
  })
}

const takesBearer = (scheme: Scheme) => {
  const http = scheme.httpAuthSecurityScheme as { scheme?: unknown } | undefined
  if (http && typeof http.scheme === 'string' && http.scheme.toLowerCase() === 'bearer') return true
  return Boolean(scheme.oauth2SecurityScheme || scheme.openIdConnectSecurityScheme)
}

interface ApiKeyPlace {
  location: 'header' | 'query' | 'cookie'
  name: string
}

function apiKeyPlace(scheme: Scheme): ApiKeyPlace | undefined {
  const apiKey = scheme.apiKeySecurityScheme as { location?: unknown; name?: unknown } | undefined
  if (!apiKey || typeof apiKey.name !== 'string' || !apiKey.name) return undefined
  const location = typeof apiKey.location === 'string' ? apiKey.location.toLowerCase() : 'header'
  if (location !== 'header' && location !== 'query' && location !== 'cookie') return undefined
  return { location, name: apiKey.name }
}

/** Service parameters that carry a credential when the caller puts one there. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'x-api-key', 'cookie', 'proxy-authorization'])

export function applyCredentials(card: AgentCard, caller: CallerCredentials): AppliedCredentials {
  const schemes = orderedSchemes(card)
  const declaresNone = schemes.length === 0
  const withheld = (credential: Credential) => declaresNone && (caller.withholdWithoutScheme ?? []).includes(credential)
  const headers: Record<string, string> = {}
  const secretHeaders = new Set<string>()
  const unused: Credential[] = []
  const undeclared: Credential[] = []
  let query: [string, string] | undefined
  let cookie: [string, string] | undefined
  let sent = false

  for (const [name, value] of Object.entries(caller.serviceParams ?? {})) {
    const lower = name.toLowerCase()
    headers[lower] = value
    secretHeaders.add(lower)
    if (CREDENTIAL_HEADERS.has(lower)) sent = true
  }

  if (caller.bearer) {
    if (withheld('bearer') || !(declaresNone || schemes.some(([, scheme]) => takesBearer(scheme))))
      unused.push('bearer')
    else {
      headers.authorization = `Bearer ${caller.bearer}`
      secretHeaders.add('authorization')
      sent = true
      if (declaresNone) undeclared.push('bearer')
    }
  }

  if (caller.apiKey) {
    const place = declaresNone
      ? { location: 'header' as const, name: 'X-API-Key' }
      : schemes.map(([, scheme]) => apiKeyPlace(scheme)).find(Boolean)
    if (!place || withheld('apiKey')) unused.push('apiKey')
    else {
      sent = true
      if (declaresNone) undeclared.push('apiKey')
      if (place.location === 'header') {
        headers[place.name.toLowerCase()] = caller.apiKey
        secretHeaders.add(place.name.toLowerCase())
      } else if (place.location === 'query') query = [place.name, caller.apiKey]
      else cookie = [place.name, caller.apiKey]
    }
  }

  return {
    headers,
    ...(query && { query }),
    ...(cookie && { cookie }),
    sent,
    unused,
    undeclared,
    secrets: {
      headers: secretHeaders,
      ...(query && { query: query[0] }),
      ...(cookie && { cookie: cookie[0] }),
      values: secretValues(caller),
    },
  }
}

/**
 * Every secret the caller gave, sent or not (a server may echo one it was never sent): the bearer token, the API key,
 * the secrets named, and service parameters' values (those too short to be worth the search only in their headers).
 */
export function secretValues(caller: CallerCredentials): string[] {
  const values = [caller.bearer ?? '', caller.apiKey ?? '', ...(caller.secrets ?? [])]
  for (const [name, value] of Object.entries(caller.serviceParams ?? {}))
    if (CREDENTIAL_HEADERS.has(name.toLowerCase()) || value.length >= SHORTEST_ECHOED_VALUE) values.push(value)
  return values.filter(Boolean)
}
