import { type CardTemplate, cardAt } from '../core/_card.js'
import type { AuthScheme } from '../types.js'

/**
 * The one card declaration in each dialect's shape. The platform reads `/.well-known/agent.json`; A2A clients
 * read `/.well-known/agent-card.json`, v1.0 ones (A2A-Version: 1.0) in the v1.0 shape and older ones in the
 * v0.3 shape. Each shape also carries the other generation's addressing fields, so either client finds its
 * endpoint in either: v1.0 clients read `supportedInterfaces` (every binding the agent serves, each at its
 * address), v0.3 clients the top-level `url` / `preferredTransport` / `additionalInterfaces`, which name the
 * address where the whole v0.3 dialect is served (`POST /v0.3`, or `POST /` when slash-named methods speak v0.3
 * there): the platform dialect shares v0.3's method names on `POST /` but not its streams.
 */

/** Where each binding is served, for one base address of the agent. */
export interface Addresses {
  /** JSON-RPC, A2A v1.0 (and the platform dialect): the agent's base address. */
  jsonRpc: string
  /** JSON-RPC in the A2A v0.3 dialect. */
  v03: string
  /** The gRPC binding's `host:port`, when it listens. */
  grpc?: string | undefined
  /**
   * The tenant the v1.0 interfaces name (one agent of several in a server: its path segment). A v1.0 request carries
   * it (JSON-RPC and gRPC in `tenant`, HTTP+JSON as the path's first segment: `/planner/message:send` under the
   * interface's URL); the v0.3 interface has no such field.
   */
  tenant?: string | undefined
}

/** The addresses of an agent served at `url` (its base address, ending in `/`). */
export function addressesAt(url: string, v03OnRoot: boolean, grpc?: string, tenant?: string): Addresses {
  return { jsonRpc: url, v03: v03OnRoot ? url : `${url.endsWith('/') ? url : `${url}/`}v0.3`, grpc, tenant }
}

export type CardDialect = 'platform' | 'a2a-1.0' | 'a2a-0.3'

const V1_SCHEMES: Record<AuthScheme, (openIdConnectUrl: string | undefined) => unknown> = {
  bearer: () => ({ httpAuthSecurityScheme: { scheme: 'Bearer' } }),
  apiKey: () => ({ apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } }),
  oidc: (openIdConnectUrl) => ({ openIdConnectSecurityScheme: { openIdConnectUrl } }),
}

const V03_SCHEMES: Record<AuthScheme, (openIdConnectUrl: string | undefined) => unknown> = {
  bearer: () => ({ type: 'http', scheme: 'bearer' }),
  apiKey: () => ({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
  oidc: (openIdConnectUrl) => ({ type: 'openIdConnect', openIdConnectUrl }),
}

function common(template: CardTemplate, at: Addresses) {
  const { authentication, name, description, openIdConnectUrl: _declaredBelow, extendedCard, ...rest } = template
  const tenant = at.tenant ? { tenant: at.tenant } : undefined
  return {
    name,
    description,
    url: at.v03,
    // The first is the one a v1.0 client prefers (§8.3).
    supportedInterfaces: [
      { url: at.jsonRpc, protocolBinding: 'JSONRPC', ...tenant, protocolVersion: '1.0' },
      // HTTP+JSON's paths (`/message:send`…) hang off the same base address, given without its trailing slash: clients
      // append the path to it (`${url}/message:send`), and `//message:send` would be another path.
      { url: at.jsonRpc.replace(/\/+$/, ''), protocolBinding: 'HTTP+JSON', ...tenant, protocolVersion: '1.0' },
      ...(at.grpc ? [{ url: at.grpc, protocolBinding: 'GRPC', ...tenant, protocolVersion: '1.0' }] : []),
      { url: at.v03, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url: at.v03, transport: 'JSONRPC' }],
    ...rest,
    schemes: authentication?.schemes ?? [],
    extended: extendedCard !== undefined,
  }
}

/**
 * The authenticated extended card in an A2A dialect: the public card with the extended card's skills added (and its
 * description, when it has one).
 */
export function renderExtendedCard(dialect: 'a2a-1.0' | 'a2a-0.3', template: CardTemplate, at: Addresses): object {
  const extended = template.extendedCard!
  return renderCard(
    dialect,
    {
      ...template,
      description: extended.description ?? template.description,
      skills: [...template.skills, ...extended.skills],
    },
    at,
  )
}

export function renderCard(dialect: CardDialect, template: CardTemplate, at: Addresses): object {
  if (dialect === 'platform') return cardAt(template, at.jsonRpc)
  const { schemes, extended, ...shared } = common(template, at)
  const card = extended ? { ...shared, capabilities: { ...shared.capabilities, extendedAgentCard: true } } : shared
  if (dialect === 'a2a-1.0') {
    if (!schemes.length) return card
    return {
      ...card,
      securitySchemes: Object.fromEntries(
        schemes.map((scheme) => [scheme, V1_SCHEMES[scheme](template.openIdConnectUrl)]),
      ),
      // Any one of the schemes is enough: the list is an OR.
      securityRequirements: schemes.map((scheme) => ({ schemes: { [scheme]: { list: [] } } })),
    }
  }
  const v03 = {
    protocolVersion: '0.3.0',
    ...shared,
    ...(extended && { supportsAuthenticatedExtendedCard: true }),
  }
  if (!schemes.length) return v03
  return {
    ...v03,
    securitySchemes: Object.fromEntries(
      schemes.map((scheme) => [scheme, V03_SCHEMES[scheme](template.openIdConnectUrl)]),
    ),
    security: schemes.map((scheme) => ({ [scheme]: [] })),
  }
}
