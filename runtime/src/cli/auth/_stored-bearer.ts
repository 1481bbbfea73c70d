import * as oauth from 'oauth4webapi'
import { configuredValue } from '../config/_resolve.js'
import { CommandFailure } from '../output/_failures.js'
import { shellWord } from '../output/_sanitize.js'
import { clientAuth, oauthFailure, requestOptions, tokenFromResponse } from './_oauth-calls.js'
import { readTokens, type StoredToken, tokenFilePath, writeTokens } from './_token-file.js'
import { withTokenLock } from './_token-lock.js'

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
  try {
    const stored = tokensFor(path, key)
    const valid = usable(stored)
    if (valid || stored.length === 0 || options.refresh === false) return valid
    if (!stored.some((token) => token.refreshToken !== undefined)) return expired(key, 'came without a refresh token')
    // Renewed by one command at a time, which reads the file again once it holds the lock: a command that waited
    // finds the token the other renewed, and never spends the refresh token that renewal used up.
    return await withTokenLock(path, async () => {
      const current = tokensFor(path, key)
      const renewedMeanwhile = usable(current)
      if (renewedMeanwhile) return renewedMeanwhile
      const renewable = current.find((token) => token.refreshToken !== undefined)
      if (!renewable) return expired(key, 'came without a refresh token')
      let renewed: StoredToken
      try {
        renewed = await refresh(renewable)
      } catch (error) {
        const failure = oauthFailure(error, 'The authorization server', renewable.tokenEndpoint)
        if (!(failure instanceof CommandFailure)) throw failure
        return expired(key, `could not be refreshed (${failure.message})`)
      }
      const others = readTokens(path).filter((kept) => !(kept.cardUrl === key && kept.issuer === renewed.issuer))
      writeTokens(path, [...others, renewed])
      return renewed.accessToken
    })
  } catch (error) {
    if (!(error instanceof CommandFailure)) throw error
    warn(`${error.message}${error.hint ? `: ${error.hint}` : ''}`)
    return undefined
  }
}

const tokensFor = (path: string, key: string) => readTokens(path).filter((token) => token.cardUrl === key)

/** The access token of one that is not about to expire. */
function usable(tokens: StoredToken[], now = Date.now()): string | undefined {
  return tokens.find((token) => token.expiresAt === undefined || token.expiresAt - now > RENEW_WITHIN_MS)?.accessToken
}

function expired(key: string, why: string): undefined {
  warn(
    `the stored token for ${key} has expired and ${why}: log in again: a2a auth login --agent-card ${shellWord(key)}`,
  )
  return undefined
}

/** RFC 6749 §6, as the login did it: the same client, its secret (never stored) from A2ACLI_CLIENT_SECRET. */
async function refresh(token: StoredToken): Promise<StoredToken> {
  const secret = configuredValue('A2ACLI_CLIENT_SECRET')
  if (token.clientAuth !== 'none' && secret === undefined)
    throw new CommandFailure(
      'A2ACLI_ERR_AUTH_FAILED',
      'a refresh of this client needs its secret in A2ACLI_CLIENT_SECRET',
    )
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
