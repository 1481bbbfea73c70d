import { createHash } from 'node:crypto'
import { FastResponse } from 'srvx/node'

export interface CachedCard {
  json: string
  etag: string
}

/** A card as served: its JSON and a weak ETag from its content, computed once. */
export function cacheableCard(card: object): CachedCard {
  const json = JSON.stringify(card)
  return { json, etag: `W/"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"` }
}

const HEADERS = {
  'content-type': 'application/json',
  'access-control-allow-origin': '*',
  // Cards change when the agent is redeployed; clients may keep one five minutes and revalidate by ETag.
  'cache-control': 'public, max-age=300',
} as const

/** 200 with the card, or 304 when the client already holds this version. */
export function cardResponse(request: Request, card: CachedCard, variesByVersion = false): Response {
  const headers: Record<string, string> = { ...HEADERS, etag: card.etag }
  if (variesByVersion) headers.vary = 'A2A-Version'
  const held = request.headers.get('if-none-match')
  if (held && held.split(',').some((tag) => tag.trim() === card.etag || tag.trim() === '*')) return new FastResponse(null, { status: 304, headers })
  return new FastResponse(card.json, { headers })
}
