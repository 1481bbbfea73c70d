import * as oauth from 'oauth4webapi'
import { configuredValue } from '../config/_resolve.js'
import { shellWord } from '../output/_sanitize.js'
import { AuthError } from './_auth-error.js'
import { asAuthError, clientAuth, requestOptions, tokenFromResponse } from './_oauth-calls.js'
import { readTokens, type StoredToken, tokenFilePath, writeTokens } from './_token-file.js'

/** A token this close to its expiry is renewed first: it could expire on its way to the agent. */
const RENEW_WITHIN_MS = 30_000

/**
 * The access token `a2a auth login` stored for the agent whose card is at `cardUrl`, for its calls to that agent:
 * a token that expired (or expires within 30 s) is renewed with its refresh token first and the new pair saved.
 * undefined when there is none, or it cannot be renewed: then one line on stderr says to log in again.
 * `refresh: false` never contacts the authorization server (an expiring token then counts as none).
 */
export async function storedBearer(cardUrl: string, options: { refresh?: boolean } = {}): Promise<string | undefined> {
  const key = URL.canParse(cardUrl) ? new URL(cardUrl).href : cardUrl
  const path = tokenFilePath()
  let stored: StoredToken[]
  try {
    stored = readTokens(path).filter((token) => token.cardUrl === key)
  } catch (error) {
    if (!(error instanceof AuthError)) throw error
    warn(`${error.message}${error.hint ? `: ${error.hint}` : ''}`)
    return undefined
  }
  const now = Date.now()
  const valid = stored.find((token) => token.expiresAt === undefined || token.expiresAt - now > RENEW_WITHIN_MS)
  if (valid) return valid.accessToken
  if (stored.length === 0) return undefined
  const again = `log in again: a2a auth login --agent-card ${shellWord(key)}`
  if (options.refresh === false) return undefined
  const renewable = stored.find((token) => token.refreshToken !== undefined)
  if (!renewable) {
    warn(`the stored token for ${key} has expired and came without a refresh token: ${again}`)
    return undefined
  }
  try {
    const renewed = await refresh(renewable)
    const others = readTokens(path).filter((kept) => !(kept.cardUrl === key && kept.issuer === renewed.issuer))
    writeTokens(path, [...others, renewed])
    return renewed.accessToken
  } catch (error) {
    const failure = asAuthError(error, 'The authorization server', renewable.tokenEndpoint)
    if (!(failure instanceof AuthError)) throw failure
    warn(`the stored token for ${key} has expired and could not be refreshed (${failure.message}): ${again}`)
    return undefined
  }
}

/** RFC 6749 §6, as the login did it: the same client, its secret (never stored) from A2ACLI_CLIENT_SECRET. */
async function refresh(token: StoredToken): Promise<StoredToken> {
  const secret = configuredValue('A2ACLI_CLIENT_SECRET')
  if (token.clientAuth !== 'none' && secret === undefined)
    throw new AuthError('A2ACLI_ERR_AUTH_FAILED', 'a refresh of this client needs its secret in A2ACLI_CLIENT_SECRET')
  const as: oauth.AuthorizationServer = { issuer: token.issuer, token_endpoint: token.tokenEndpoint }
  const client: oauth.Client = { client_id: token.clientId }
  const response = await oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(
      as,
      client,
      clientAuth(token.clientAuth, secret),
      token.refreshToken!,
      requestOptions(),
    ),
  )
  const { accessToken: _old, tokenType: _type, refreshToken, scope, expiresAt: _expired, ...context } = token
  return tokenFromResponse(response, context, scope, refreshToken)
}

const warn = (line: string) => process.stderr.write(`a2a: ${line}\n`)
