import { isObject } from '../../_is-object.js'
import type { Json } from './_wire.js'

export interface Credentials {
  bearer?: string
  apiKey?: string
}

/**
 * The headers that carry the credentials given: a bearer token as `Authorization`, an API key in the header the
 * card's API key scheme names (`X-API-Key` when it names none in a header).
 */
export function credentialHeaders(card: Json | undefined, credentials: Credentials): Record<string, string> {
  const headers: Record<string, string> = {}
  if (credentials.bearer) headers.authorization = `Bearer ${credentials.bearer}`
  if (credentials.apiKey) headers[apiKeyHeader(card)] = credentials.apiKey
  return headers
}

function apiKeyHeader(card: Json | undefined): string {
  const schemes = isObject(card?.securitySchemes) ? Object.values(card.securitySchemes) : []
  for (const scheme of schemes) {
    const apiKey = isObject(scheme) ? scheme.apiKeySecurityScheme : undefined
    if (isObject(apiKey) && String(apiKey.location).toLowerCase() === 'header' && typeof apiKey.name === 'string')
      return apiKey.name.toLowerCase()
  }
  return 'x-api-key'
}
