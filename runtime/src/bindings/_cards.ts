import { type CardTemplate, cardAt } from '../core/_card.js'
import type { AuthScheme } from '../types.js'

/**
 * The one card declaration in each dialect's shape. The platform reads `/.well-known/agent.json`; A2A clients
 * read `/.well-known/agent-card.json`, v1.0 ones (A2A-Version: 1.0) in the v1.0 shape and older ones in the
 * v0.3 shape. Each shape also carries the other generation's addressing fields, so either client finds the
 * endpoint in either.
 *
 * Where slash-named methods speak the platform dialect, a v0.3 client that does not say `A2A-Version: 0.3` (the
 * 0.3 SDKs never do) gets the platform's answers: a stream of notifications, which such a client cannot read. Its
 * card (`a2a-0.3-platform`) claims only what it is served: the v0.3 shape without streaming (the 0.3 SDK then
 * sends instead of streaming, or refuses before asking).
 */

export type CardDialect = 'platform' | 'a2a-1.0' | 'a2a-0.3' | 'a2a-0.3-platform'

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

function common(template: CardTemplate, url: string) {
  const { authentication, name, description, openIdConnectUrl: _declaredBelow, extendedCard, ...rest } = template
  return {
    name,
    description,
    url,
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url, transport: 'JSONRPC' }],
    ...rest,
    schemes: authentication?.schemes ?? [],
    extended: extendedCard !== undefined,
  }
}

/**
 * The authenticated extended card in an A2A dialect: the public card with the extended card's skills added (and its
 * description, when it has one).
 */
export function renderExtendedCard(dialect: 'a2a-1.0' | 'a2a-0.3', template: CardTemplate, url: string): object {
  const extended = template.extendedCard!
  return renderCard(
    dialect,
    {
      ...template,
      description: extended.description ?? template.description,
      skills: [...template.skills, ...extended.skills],
    },
    url,
  )
}

export function renderCard(dialect: CardDialect, template: CardTemplate, url: string): object {
  if (dialect === 'platform') return cardAt(template, url)
  const { schemes, extended, ...shared } = common(template, url)
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
    ...(dialect === 'a2a-0.3-platform' && { capabilities: { ...shared.capabilities, streaming: false } }),
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
