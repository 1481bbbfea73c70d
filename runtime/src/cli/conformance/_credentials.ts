import { isObject } from '../../_is-object.js'
import { type AppliedCredentials, applyCredentials, type CallerCredentials } from '../../client/_credentials.js'
import type { AgentCard } from '../../client/types.js'
import type { Json } from './_wire.js'

/** The caller's credentials, and those not to send to a card that declares no scheme. */
export type Credentials = Pick<CallerCredentials, 'bearer' | 'apiKey' | 'withholdWithoutScheme'>

/**
 * Where the credentials go for this card: the client core's choice (`a2a send` makes the same), per the schemes the
 * card declares: a bearer token where a scheme takes one, an API key in the header, query parameter or cookie its
 * scheme names. Only the card's security declarations are read, and only where they have the right shape: the card
 * under check may be malformed (its checks say so).
 */
export function credentialsFor(card: Json, credentials: Credentials): AppliedCredentials {
  const declarations = {
    ...(isObject(card.securitySchemes) && { securitySchemes: card.securitySchemes }),
    ...(Array.isArray(card.securityRequirements) && {
      securityRequirements: card.securityRequirements.filter(isObject),
    }),
  }
  return applyCredentials(declarations as AgentCard, credentials)
}

/** A request's URL and headers with the credentials placed as `credentialsFor` chose. */
export function withCredentials(
  url: string,
  headers: Record<string, string>,
  credentials: AppliedCredentials | undefined,
): { url: string; headers: Record<string, string> } {
  if (!credentials) return { url, headers }
  const placed = new URL(url)
  if (credentials.query) placed.searchParams.set(...credentials.query)
  const all = { ...headers, ...credentials.headers }
  if (credentials.cookie) all.cookie = `${credentials.cookie[0]}=${credentials.cookie[1]}`
  return { url: placed.href, headers: all }
}
