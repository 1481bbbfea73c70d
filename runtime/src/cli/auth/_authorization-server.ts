import * as oauth from 'oauth4webapi'
import type { AgentCard } from '../../client/types.js'
import { CommandFailure, UsageError } from '../output/_failures.js'
import { checkEndpoint, exchange, requestOptions } from './_oauth-calls.js'

export type Flow = 'device' | 'client-credentials'

/** The authorization server to log in at, and how. */
export interface LoginTarget {
  as: oauth.AuthorizationServer
  flow: Flow
  /** Asked for when the user names none: the card's security requirements for the scheme, else its flow's scopes. */
  defaultScopes: string[]
  /** Where the server was found, in words: `the card's scheme "oauth"`, or `--issuer`. */
  source: string
}

/** One scheme of the card that leads to an authorization server, before any discovery. */
interface OAuthScheme {
  name: string
  /** Endpoints the card names per flow (an oauth2 scheme's `flows`). */
  device?: { deviceAuthorizationUrl: URL; tokenUrl: URL; scopes: string[] }
  clientCredentials?: { tokenUrl: URL; scopes: string[] }
  /** An RFC 8414 or OpenID discovery document's URL (`oauth2MetadataUrl`, `openIdConnectUrl`). */
  metadataUrl?: URL
}

const WELL_KNOWN = [
  { suffix: '/.well-known/openid-configuration', algorithm: 'oidc' },
  { suffix: '/.well-known/oauth-authorization-server', algorithm: 'oauth2' },
] as const

/**
 * The authorization server for `flow` (or the first flow found: device code where any scheme offers it, else client
 * credentials): `--issuer` when given, else the card's OAuth 2.0 and OpenID Connect schemes in the card's order.
 */
export async function findLoginTarget(
  card: AgentCard,
  options: { issuer?: string; flow?: Flow },
): Promise<LoginTarget> {
  if (options.issuer !== undefined) {
    const issuer = checkEndpoint(options.issuer, '--issuer', 'A2ACLI_ERR_USAGE')
    const as = await discoverIssuer(issuer)
    const flow = options.flow ?? (as.device_authorization_endpoint ? 'device' : 'client-credentials')
    return { as, flow, defaultScopes: [], source: '--issuer' }
  }
  // Read only without --issuer: a card whose own schemes are unusable is what --issuer gets around.
  const schemes = oauthSchemes(card)
  if (schemes.length === 0)
    throw new UsageError(
      'The agent card declares no OAuth 2.0 or OpenID Connect security scheme',
      'name the authorization server with --issuer <url>',
    )
  const found: LoginTarget[] = []
  for (const scheme of schemes) {
    const targets = await targetsOf(scheme, scopesRequired(card, scheme.name))
    const chosen = targets.find((target) => target.flow === (options.flow ?? 'device'))
    if (chosen) return chosen
    found.push(...targets)
  }
  if (options.flow === undefined && found[0]) return found[0]
  const offered = [...new Set(found.map((target) => target.flow))]
  throw new UsageError(
    `The agent card's OAuth schemes offer no ${options.flow ?? 'device'} flow` +
      (offered.length ? ` (they offer ${offered.join(', ')})` : ''),
    offered.length ? `use --flow ${offered[0]}` : 'name the authorization server with --issuer <url>',
  )
}

/** The flows one scheme offers, each with its server: the card's endpoints, completed by discovery. */
async function targetsOf(scheme: OAuthScheme, required: string[] | undefined): Promise<LoginTarget[]> {
  const discovered = scheme.metadataUrl && (await discoverFrom(scheme.metadataUrl, scheme.name))
  const source = `the card's scheme ${JSON.stringify(scheme.name)}`
  const targets: LoginTarget[] = []
  const device = scheme.device
  const deviceEndpoint = device?.deviceAuthorizationUrl.href ?? discovered?.device_authorization_endpoint
  const deviceToken = device?.tokenUrl.href ?? discovered?.token_endpoint
  if (deviceEndpoint && deviceToken) {
    const as = { ...discovered, issuer: discovered?.issuer ?? deviceToken, token_endpoint: deviceToken }
    as.device_authorization_endpoint = deviceEndpoint
    targets.push({ as, flow: 'device', defaultScopes: required ?? device?.scopes ?? [], source })
  }
  const clientToken = scheme.clientCredentials?.tokenUrl.href ?? discovered?.token_endpoint
  if (clientToken) {
    const as = { ...discovered, issuer: discovered?.issuer ?? clientToken, token_endpoint: clientToken }
    const scopes = required ?? scheme.clientCredentials?.scopes ?? []
    targets.push({ as, flow: 'client-credentials', defaultScopes: scopes, source })
  }
  return targets
}

/** The card's schemes that lead to an authorization server (OAuth 2.0, OpenID Connect), in its order. */
function oauthSchemes(card: AgentCard): OAuthScheme[] {
  const schemes: OAuthScheme[] = []
  for (const [name, scheme] of Object.entries(card.securitySchemes ?? {})) {
    if (!isRecord(scheme)) continue
    const field = `the card's securitySchemes.${name}`
    const { oauth2SecurityScheme: oauth2, openIdConnectSecurityScheme: oidc } = scheme
    if (isRecord(oauth2)) {
      const path = `${field}.oauth2SecurityScheme`
      schemes.push({ name, ...flowsOf(oauth2.flows, `${path}.flows`), ...metadata(oauth2.oauth2MetadataUrl, path) })
    } else if (isRecord(oidc)) {
      const path = `${field}.openIdConnectSecurityScheme.openIdConnectUrl`
      schemes.push({ name, metadataUrl: checkEndpoint(oidc.openIdConnectUrl, path, CARD) })
    }
  }
  return schemes
}

const CARD = 'A2ACLI_ERR_CARD_INVALID'

function metadata(value: unknown, path: string): Pick<OAuthScheme, 'metadataUrl'> {
  return value === undefined || value === ''
    ? {}
    : { metadataUrl: checkEndpoint(value, `${path}.oauth2MetadataUrl`, CARD) }
}

function flowsOf(flows: unknown, path: string): Pick<OAuthScheme, 'device' | 'clientCredentials'> {
  if (!isRecord(flows)) return {}
  const result: Pick<OAuthScheme, 'device' | 'clientCredentials'> = {}
  const device = flows.deviceCode
  if (isRecord(device))
    result.device = {
      deviceAuthorizationUrl: checkEndpoint(
        device.deviceAuthorizationUrl,
        `${path}.deviceCode.deviceAuthorizationUrl`,
        CARD,
      ),
      tokenUrl: checkEndpoint(device.tokenUrl, `${path}.deviceCode.tokenUrl`, CARD),
      scopes: scopeNames(device.scopes),
    }
  const client = flows.clientCredentials
  if (isRecord(client))
    result.clientCredentials = {
      tokenUrl: checkEndpoint(client.tokenUrl, `${path}.clientCredentials.tokenUrl`, CARD),
      scopes: scopeNames(client.scopes),
    }
  return result
}

const scopeNames = (scopes: unknown): string[] => (isRecord(scopes) ? Object.keys(scopes) : [])

/** The scopes the card's security requirements list for a scheme. */
function scopesRequired(card: AgentCard, scheme: string): string[] | undefined {
  for (const requirement of card.securityRequirements ?? []) {
    const list: unknown =
      isRecord(requirement) && isRecord(requirement.schemes) ? requirement.schemes[scheme] : undefined
    if (isRecord(list) && Array.isArray(list.list) && list.list.length) return list.list.filter(isString)
  }
  return undefined
}

/**
 * Discovery from a document's URL the card gives. oauth4webapi checks that the document names the issuer its
 * address implies, so the address must be a well-known one (RFC 8414 or OpenID Connect Discovery).
 */
async function discoverFrom(metadataUrl: URL, scheme: string): Promise<oauth.AuthorizationServer> {
  const path = metadataUrl.pathname
  for (const { suffix, algorithm } of WELL_KNOWN) {
    // OpenID appends the suffix to the issuer's path; RFC 8414 inserts it before the path.
    if (algorithm === 'oidc' && path.endsWith(suffix))
      return discover(new URL(path.slice(0, -suffix.length) || '/', metadataUrl.origin), algorithm)
    if (algorithm === 'oauth2' && path.startsWith(suffix))
      return discover(new URL(path.slice(suffix.length) || '/', metadataUrl.origin), algorithm)
  }
  throw new CommandFailure(
    CARD,
    `The card's scheme ${JSON.stringify(scheme)} names its authorization server's metadata at ${metadataUrl.href}, ` +
      'not at a well-known address (…/.well-known/openid-configuration or /.well-known/oauth-authorization-server/…)',
    'name the authorization server with --issuer <url>',
  )
}

/** `--issuer`: OpenID Connect discovery first, then RFC 8414's, as servers publish one or the other. */
async function discoverIssuer(issuer: URL): Promise<oauth.AuthorizationServer> {
  try {
    return await discover(issuer, 'oidc')
  } catch (error) {
    if (error instanceof CommandFailure && error.code === 'A2ACLI_ERR_UNREACHABLE') throw error
    return discover(issuer, 'oauth2')
  }
}

async function discover(issuer: URL, algorithm: 'oidc' | 'oauth2'): Promise<oauth.AuthorizationServer> {
  const as = await exchange('The authorization server', issuer.href, async () =>
    oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm, ...requestOptions() })),
  )
  for (const field of ['token_endpoint', 'device_authorization_endpoint'] as const)
    if (as[field] !== undefined)
      checkEndpoint(as[field], `The metadata of ${issuer.href}: ${field}`, 'A2ACLI_ERR_AUTH_FAILED')
  return as
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

const isString = (value: unknown): value is string => typeof value === 'string'
