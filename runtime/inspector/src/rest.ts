import { errorIn, isObject, type Operation, resultIn } from './dialects'
import type { Update } from './model'

/**
 * A2A v1.0 over HTTP+JSON (REST, spec §11): each operation at its own path and HTTP method, the params in the body
 * (a GET's in its query), the result bare — no JSON-RPC envelope —, an error as a google.rpc.Status in a 4xx or
 * 5xx answer. The objects are v1.0's, as in JSON-RPC (dialects.ts builds and reads them).
 */

type Json = Record<string, unknown>

export interface RestRequest {
  method: 'GET' | 'POST'
  /** Path and query, on the page's own origin. */
  path: string
  body?: string
}

/** Each operation's method and path; `byId`: the task's id goes in the path, not the body. */
const ROUTES: Record<Operation, { method: 'GET' | 'POST'; path: string; byId: boolean }> = {
  send: { method: 'POST', path: '/message:send', byId: false },
  stream: { method: 'POST', path: '/message:stream', byId: false },
  subscribe: { method: 'POST', path: '/tasks/{id}:subscribe', byId: true },
  get: { method: 'GET', path: '/tasks/{id}', byId: true },
  cancel: { method: 'POST', path: '/tasks/{id}:cancel', byId: true },
  list: { method: 'GET', path: '/tasks', byId: false },
}

const scalar = (value: unknown) => ['string', 'number', 'boolean'].includes(typeof value)

/** A GET's params as its query (§11.5): scalars as they are, a list as the name repeated. */
function queryOf(params: Json): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) {
    for (const item of Array.isArray(value) ? value : [value]) if (scalar(item)) query.append(name, String(item))
  }
  const text = query.toString()
  return text ? `?${text}` : ''
}

/**
 * `operation` with the params JSON-RPC would carry, sent to the REST interface at `base` (a path without its
 * trailing slash). A POST with nothing left to say has no body, as the official SDK client sends `:cancel`.
 */
export function restRequest(base: string, operation: Operation, params: Json): RestRequest {
  const route = ROUTES[operation]
  const { id, ...others } = params
  const rest = route.byId ? others : params
  const path = base + route.path.replace('{id}', encodeURIComponent(String(id ?? '')))
  if (route.method === 'GET') return { method: 'GET', path: path + queryOf(rest) }
  return Object.keys(rest).length
    ? { method: 'POST', path, body: JSON.stringify(rest, null, 2) }
    : { method: 'POST', path }
}

/** The request as the timeline shows it: its line and the headers that make it A2A v1.0 REST, then its body. */
export const restRequestText = ({ method, path, body }: RestRequest): string =>
  `${method} ${path}\nA2A-Version: 1.0${body === undefined ? '' : `\nContent-Type: application/a2a+json\n\n${body}`}`

/** An answer's JSON, or a stream event's: a google.rpc.Status error, else the bare result or StreamResponse. */
export const restAnswerIn = (json: unknown): Update[] =>
  isObject(json) && isObject(json.error) ? [errorIn(json.error)] : resultIn(json)

/**
 * The path of the card's HTTP+JSON interface for A2A v1.0, without its trailing slash (`''` at the root); undefined
 * when the card lists none. Only its path: the agent's own server serves the page, the card may name that server
 * by another host (`A2A_PUBLIC_URL` behind a proxy), and the page's policy lets it call its own origin only.
 */
export function restAddressIn(card: unknown): string | undefined {
  const listed = isObject(card) && Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : []
  const rest = listed.find(
    (entry): entry is Json =>
      isObject(entry) &&
      entry.protocolBinding === 'HTTP+JSON' &&
      typeof entry.url === 'string' &&
      /^1\./.test(String(entry.protocolVersion ?? '1.0')),
  )
  if (!rest) return undefined
  try {
    return new URL(String(rest.url), 'http://agent.invalid').pathname.replace(/\/+$/, '')
  } catch {
    return undefined
  }
}
