import * as oauth from 'oauth4webapi'
import { isLoopbackHost } from '../_loopback.js'
import { CommandFailure, UsageError } from '../output/_failures.js'
import type { StoredToken } from './_token-file.js'

/** How long one request to the authorization server may take. */
const REQUEST_TIMEOUT_MS = 15_000

/**
 * Options for every oauth4webapi request. Plain http is allowed because every endpoint has passed `checkEndpoint`
 * first (https, or http on this machine only); oauth4webapi never follows redirects, so nothing else is reached.
 */
export const requestOptions = () => ({
  signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  [oauth.allowInsecureRequests]: true,
})

/**
 * An endpoint of the authorization server: https, or http on this machine only (tokens cross it in the clear).
 * Else the failure of `code`: a usage error for a flag, the card's or the server's fault for theirs.
 */
export function checkEndpoint(value: unknown, field: string, code: CommandFailure['code']): URL {
  const url = typeof value === 'string' && URL.canParse(value) ? new URL(value) : undefined
  if (url?.protocol === 'https:' || (url?.protocol === 'http:' && isLoopbackHost(url.hostname))) return url
  const message = `${field} must be an absolute https: URL (http: only on this machine) (got ${JSON.stringify(value)})`
  throw code === 'A2ACLI_ERR_USAGE' ? new UsageError(message) : new CommandFailure(code, message)
}

/** Who the CLI is to the authorization server: a public client, or one with a secret. */
export interface ClientIdentity {
  clientId: string
  clientSecret?: string
}

/**
 * The client authentication to use: none for a public client; for a secret, basic unless the server supports only
 * client_secret_post (RFC 8414: absent, the default is client_secret_basic).
 */
export function clientAuthMethod(as: oauth.AuthorizationServer, secret: string | undefined): StoredToken['clientAuth'] {
  if (secret === undefined) return 'none'
  const supported = as.token_endpoint_auth_methods_supported
  return supported && !supported.includes('client_secret_basic') && supported.includes('client_secret_post')
    ? 'client_secret_post'
    : 'client_secret_basic'
}

export function clientAuth(method: StoredToken['clientAuth'], secret: string | undefined): oauth.ClientAuth {
  if (method === 'none' || secret === undefined) return oauth.None()
  return method === 'client_secret_post' ? oauth.ClientSecretPost(secret) : oauth.ClientSecretBasic(secret)
}

/** What the token endpoint granted, in the form kept on disk. */
export function tokenFromResponse(
  response: oauth.TokenEndpointResponse,
  context: Omit<StoredToken, 'accessToken' | 'tokenType' | 'refreshToken' | 'scope' | 'expiresAt'>,
  askedScope: string | undefined,
  previousRefreshToken?: string,
): StoredToken {
  if (response.token_type !== 'bearer')
    throw new CommandFailure(
      'A2ACLI_ERR_AUTH_FAILED',
      `The authorization server issued a ${response.token_type} token; this CLI sends bearer tokens only`,
    )
  const refreshToken = response.refresh_token ?? previousRefreshToken
  const scope = response.scope ?? askedScope
  return {
    ...context,
    accessToken: response.access_token,
    tokenType: 'bearer',
    ...(refreshToken !== undefined && { refreshToken }),
    ...(scope && { scope }),
    ...(response.expires_in !== undefined && { expiresAt: Date.now() + response.expires_in * 1000 }),
  }
}

/**
 * Runs one exchange with the authorization server, its failures said in one line: unreachable (exit 3), or the
 * server's refusal by its OAuth error code and description (exit 4).
 */
export async function exchange<T>(what: string, url: string | undefined, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    throw oauthFailure(error, what, url)
  }
}

/** A failure of an exchange with the authorization server as the CLI reports it; anything else as it is. */
export function oauthFailure(error: unknown, what: string, url: string | undefined): unknown {
  if (error instanceof CommandFailure || error instanceof UsageError) return error
  if (error instanceof oauth.ResponseBodyError) {
    const description = error.error_description ? `: ${error.error_description}` : ''
    return new CommandFailure(
      'A2ACLI_ERR_AUTH_FAILED',
      `${what} refused (HTTP ${error.status}, ${error.error}${description})`,
      HINTS[error.error],
    )
  }
  if (error instanceof oauth.WWWAuthenticateChallengeError)
    return new CommandFailure(
      'A2ACLI_ERR_AUTH_FAILED',
      `${what} refused the client's credentials (HTTP ${error.status})`,
      HINTS.invalid_client,
    )
  const name = (error as Error | undefined)?.name
  if (name === 'TimeoutError' || name === 'AbortError')
    return new CommandFailure(
      'A2ACLI_ERR_UNREACHABLE',
      `${what} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s${at(url)}`,
    )
  if (error instanceof TypeError && (error as { cause?: unknown }).cause !== undefined) {
    const cause = (error.cause as { code?: string; message?: string }).code ?? (error.cause as Error).message
    return new CommandFailure('A2ACLI_ERR_UNREACHABLE', `Cannot reach ${what.toLowerCase()}${at(url)}: ${cause}`)
  }
  if (error instanceof oauth.OperationProcessingError || error instanceof oauth.UnsupportedOperationError)
    return new CommandFailure('A2ACLI_ERR_AUTH_FAILED', `${what} answered out of protocol${at(url)}: ${error.message}`)
  return error
}

const at = (url: string | undefined) => (url ? ` (${url})` : '')

/** What to do about the OAuth errors a person can act on. */
const HINTS: Record<string, string> = {
  invalid_client: 'check --client-id and --client-secret (or A2ACLI_CLIENT_SECRET)',
  unauthorized_client: 'this client may not use this flow: try the other --flow, or ask for a client that may',
  invalid_scope: 'ask for scopes the server knows (--scope), or none',
  access_denied: 'the request was denied when asked to approve it: run a2a auth login again to retry',
  invalid_grant: 'log in again: a2a auth login',
}
