import { H3, type H3Event } from 'h3'
import type { CardDialect } from '../bindings/_cards.js'
import { restAllow } from '../bindings/_rest-routes.js'
import { type CachedCard, cardResponse } from './_card-response.js'
import { V1_VERSION } from './_dialect-router.js'
import { headerOf } from './_node-headers.js'
import type { GuardedPaths, WebOriginGuard } from './_web-origin.js'

const CARD_PATH = '/.well-known/agent.json'
const A2A_CARD_PATH = '/.well-known/agent-card.json'
/** JSON-RPC: the platform dialect and A2A v1.0 (or v0.3, by setting) at `/` and `/jsonrpc`, A2A v0.3 at `/v0.3`. */
const RPC_PATHS = ['/', '/jsonrpc', '/v0.3'] as const
const V03_PATH = '/v0.3'
/** Every path the app serves besides the HTTP+JSON binding's (the request log prints these as they are). */
export const SERVED_PATHS: ReadonlySet<string> = new Set([CARD_PATH, A2A_CARD_PATH, ...RPC_PATHS])
const SERVED_ALLOW = 'GET, POST, OPTIONS'

/** What the web-origin guard knows of the app's paths: how to refuse on each, what an OPTIONS request is told. */
export const GUARDED_PATHS: GuardedPaths = {
  rpc: new Set(RPC_PATHS),
  allowOf: (path) => (SERVED_PATHS.has(path) ? SERVED_ALLOW : restAllow(path)),
  rest: (path) => !SERVED_PATHS.has(path) && restAllow(path) !== undefined,
}

/** An agent's handlers: its cards in each dialect, JSON-RPC (and in v0.3 at `/v0.3`), the HTTP+JSON binding. */
export interface AgentHandlers {
  cardFor: (dialect: CardDialect, event: H3Event) => CachedCard | Promise<CachedCard>
  rpc: (request: Request) => Promise<Response>
  rpcV03: (request: Request) => Promise<Response>
  /** `pathname` is the request's path below the agent's base path (`/message:send`). */
  rest: (request: Request, pathname: string, search: string) => Promise<Response>
}

/** A route that answers only requests the web-origin guard lets through. */
export type GuardedRoute = (
  route: (event: H3Event) => Response | Promise<Response>,
) => (event: H3Event) => Response | Promise<Response>

/** Wraps routes in the guard: a foreign `Host` or `Origin` never reaches them. */
export const guardedBy =
  (webOrigin: WebOriginGuard): GuardedRoute =>
  (route) =>
  (event) =>
    webOrigin.check(event) ?? route(event)

/**
 * The app's routes: the card at `/.well-known/agent.json` (platform) and `/.well-known/agent-card.json` (A2A),
 * JSON-RPC at `POST /` and `POST /jsonrpc`, in the A2A v0.3 dialect at `POST /v0.3` (the address the A2A
 * cards give v0.3 clients), and A2A v1.0's HTTP+JSON binding on every other path (`POST /message:send`,
 * `GET /tasks/{id}`…: one route that reads the path itself, answering 404 for a path none of its operations has).
 * A foreign `Host` or `Origin` never reaches the agent: every route, and any other path or method, is checked first.
 */
export function createRoutes(
  webOrigin: WebOriginGuard,
  cardFor: AgentHandlers['cardFor'],
  rpc: AgentHandlers['rpc'],
  rpcV03: AgentHandlers['rpcV03'],
  rest: AgentHandlers['rest'],
): H3 {
  const h3 = new H3({ silent: true })
  addAgentRoutes(h3, '', guardedBy(webOrigin), { cardFor, rpc, rpcV03, rest })
  return h3
}

/**
 * One agent's routes under `base` (`''` for the app's one agent, `/planner` for one of several): the routes
 * `createRoutes` lists, each below the base path, and the HTTP+JSON binding on every other path below it (given the
 * path without the base).
 */
export function addAgentRoutes(h3: H3, base: string, checked: GuardedRoute, handlers: AgentHandlers): void {
  const { cardFor, rpc, rpcV03, rest } = handlers
  // A signed card is a promise until its first signature is made; afterwards, as an unsigned one, it is at hand.
  const respond = (event: H3Event, card: CachedCard | Promise<CachedCard>) =>
    card instanceof Promise ? card.then((made) => cardResponse(event.req, made)) : cardResponse(event.req, card)
  const platformCard = checked((event) => respond(event, cardFor('platform', event)))
  // A2A clients: v1.0 ones say so in A2A-Version; any other request gets the v0.3 shape.
  const a2aCard = checked((event) =>
    respond(event, cardFor(V1_VERSION.test(headerOf(event.req, 'a2a-version') ?? '') ? 'a2a-1.0' : 'a2a-0.3', event)),
  )
  for (const [path, card] of [
    [CARD_PATH, platformCard],
    [A2A_CARD_PATH, a2aCard],
  ] as const) {
    h3.get(base + path, card)
    // HEAD as GET without the body (RFC 9110 §9.3.2): a cache or a monitor checks the card's ETag and length.
    h3.head(base + path, async (event) => withoutBody(await card(event)))
  }
  const rpcRoute = checked((event) => rpc(event.req as Request))
  // `/planner/` and `/planner` are one route (h3 matches either).
  for (const path of RPC_PATHS) if (path !== V03_PATH) h3.post(base + path, rpcRoute)
  h3.post(
    base + V03_PATH,
    checked((event) => rpcV03(event.req as Request)),
  )
  // Any other path or method: refused as the routes are, a preflight answered, anything else the HTTP+JSON binding's.
  h3.all(
    `${base}/**`,
    checked((event) => rest(event.req as Request, event.url.pathname.slice(base.length) || '/', event.url.search)),
  )
}

export function withoutBody(response: Response): Response {
  void response.body?.cancel()
  return new Response(null, { status: response.status, headers: response.headers })
}
