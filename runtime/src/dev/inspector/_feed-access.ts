import type { IncomingHttpHeaders } from 'node:http'
import { A2AError } from '../../errors.js'
import type { AuthCheck } from '../../http/_auth.js'

/**
 * Which tasks a request of the inspector's page may see, decided by the credential check of the agent served now:
 * every task when its card declares no authentication, the caller's own when the check proves who it is, none
 * (and why) when the credential is missing or wrong.
 */
export type FeedAccess =
  | { kind: 'all' }
  | { kind: 'own'; owner: string; check: AuthCheck; expiresAt: number | undefined }
  | { kind: 'refused'; status: number; reason: string; check: AuthCheck }

const ALL: FeedAccess = { kind: 'all' }

/** The only headers a check reads: the page's credential, sent the way the agent's own methods take it. */
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key'] as const

/**
 * Checks the page's credential with `check`, the very one the served agent applies to JSON-RPC (a JWT is verified
 * exactly as there). Awaits only a JWT's verification.
 */
export async function feedAccess(check: AuthCheck | undefined, headers: IncomingHttpHeaders): Promise<FeedAccess> {
  if (!check) return ALL
  const given = new Headers()
  for (const name of CREDENTIAL_HEADERS) {
    const value = headers[name]
    if (typeof value === 'string') given.set(name, value)
  }
  const outcome = await check(given)
  if (outcome instanceof A2AError)
    return { kind: 'refused', status: outcome.httpStatus, reason: outcome.message, check }
  // A JWT's page stops hearing of new tasks when the token expires (it reconnects and is refused then).
  const exp = outcome.claims.exp
  return {
    kind: 'own',
    owner: outcome.id,
    check,
    expiresAt: typeof exp === 'number' ? exp * 1000 : undefined,
  }
}
