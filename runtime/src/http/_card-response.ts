import { createHash } from 'node:crypto'
import { FastResponse } from 'srvx'

/** A card as served, prepared once: its bytes, a weak ETag from its content, and its response headers. */
export interface CachedCard {
  json: string
  body: Uint8Array<ArrayBuffer>
  etag: string
  headers: ReadonlyArray<readonly [string, string]>
}

/**
 * Prepares a card for serving. `variesByVersion`: the address serves another shape to another A2A-Version,
 * so caches must key on it.
 */
export function cacheableCard(card: object, variesByVersion = false): CachedCard {
  const json = JSON.stringify(card)
  const etag = `W/"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`
  const headers: Array<[string, string]> = [
    ['content-type', 'application/json'],
    // Cards change when the agent is redeployed; clients may keep one five minutes and revalidate by ETag.
    ['cache-control', 'public, max-age=300'],
    ['etag', etag],
    // When this process first rendered it (A2A v1.0 §8.6.1 MAY): the ETag decides revalidation, this dates the card.
    ['last-modified', new Date().toUTCString()],
  ]
  if (variesByVersion) headers.push(['vary', 'A2A-Version'])
  return { json, body: new TextEncoder().encode(json), etag, headers }
}

/** 200 with the card, or 304 when the client already holds this version. */
export function cardResponse(request: Request, card: CachedCard): Response {
  const held = request.headers.get('if-none-match')
  if (held?.split(',').some((tag) => tag.trim() === card.etag || tag.trim() === '*')) {
    return new FastResponse(null, { status: 304, headers: card.headers as Array<[string, string]> })
  }
  return new FastResponse(card.body, { headers: card.headers as Array<[string, string]> })
}
