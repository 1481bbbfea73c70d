import { UsageError } from '../output/_failures.js'
import { cardUrlOf, fetchCard } from './_agent-card.js'
import { type Flow, findLoginTarget } from './_authorization-server.js'
import { clientCredentialsLogin } from './_client-credentials.js'
import { deviceCodeLogin } from './_device-flow.js'
import { clientAuthMethod, tokenFromResponse } from './_oauth-calls.js'
import { readTokens, type StoredToken, tokenFilePath, writeTokens } from './_token-file.js'
import { withTokenLock } from './_token-lock.js'

export interface LoginRequest {
  agentCard?: string
  flow?: Flow
  clientId?: string
  clientSecret?: string
  /** Scopes as given: each may hold several, space-separated. */
  scope?: string[]
  issuer?: string
}

/**
 * `a2a auth login`: the agent's card (fetched without credentials) names the authorization server, the flow gets a
 * token, and the token is stored for the card, replacing one from the same server.
 */
export async function login(
  request: LoginRequest,
  say: (line: string) => void,
): Promise<{ token: StoredToken; path: string }> {
  const clientId = request.clientId
  if (!clientId)
    throw new UsageError(
      'a2a auth login needs the client id the authorization server knows this CLI by',
      'pass --client-id <id> (or set A2ACLI_CLIENT_ID)',
    )
  if (request.flow === 'client-credentials' && !request.clientSecret) throw secretMissing()
  // The token file is checked before anyone is asked to approve anything: a file others can read is refused.
  const path = tokenFilePath()
  readTokens(path)

  const url = (await cardUrlOf(request.agentCard, process.cwd())).href
  const card = await fetchCard(new URL(url))
  const target = await findLoginTarget(card, {
    ...(request.issuer !== undefined && { issuer: request.issuer }),
    ...(request.flow !== undefined && { flow: request.flow }),
  })
  if (target.flow === 'client-credentials' && !request.clientSecret) throw secretMissing()
  const scopes = request.scope?.flatMap((scope) => scope.split(/\s+/).filter(Boolean)) ?? target.defaultScopes
  const scope = scopes.length ? scopes.join(' ') : undefined
  const { as } = target
  const identity = { clientId, ...(request.clientSecret !== undefined && { clientSecret: request.clientSecret }) }
  const method = clientAuthMethod(as, request.clientSecret)
  say(`Logging in for ${url} at ${as.issuer} (${target.flow}; found through ${target.source})`)

  const response =
    target.flow === 'device'
      ? await deviceCodeLogin(as, identity, method, scope, say)
      : await clientCredentialsLogin(as, identity, method, scope)
  const token = tokenFromResponse(
    response,
    {
      cardUrl: url,
      issuer: as.issuer,
      tokenEndpoint: as.token_endpoint!,
      clientId,
      clientAuth: method,
      flow: target.flow,
    },
    scope,
  )
  // Read again, holding the lock: another command may have stored or renewed tokens meanwhile.
  await withTokenLock(path, async () => {
    const others = readTokens(path).filter((kept) => !(kept.cardUrl === url && kept.issuer === token.issuer))
    writeTokens(path, [...others, token])
  })
  return { token, path }
}

const secretMissing = () =>
  new UsageError(
    'The client credentials flow needs the client secret',
    'set A2ACLI_CLIENT_SECRET (or pass --client-secret, which other users can see in the process list)',
  )
