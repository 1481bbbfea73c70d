import { setTimeout as sleep } from 'node:timers/promises'
import * as oauth from 'oauth4webapi'
import { CommandFailure } from '../output/_failures.js'
import { type ClientIdentity, clientAuth, exchange, oauthFailure, requestOptions } from './_oauth-calls.js'
import type { StoredToken } from './_token-file.js'

/** RFC 8628 §3.2: the wait between polls when the server names none, and what each `slow_down` adds (§3.5). */
const DEFAULT_INTERVAL_S = 5
const SLOW_DOWN_S = 5
/** However short an interval the server names, polls are at least this far apart. */
const MIN_INTERVAL_S = 1

/**
 * RFC 8628's device authorization grant: asks for a user code, tells the user (on stderr, through `say`) where to
 * enter it, then polls the token endpoint at the server's pace until the user approves, denies, or the code expires.
 * Never reads input: the approval happens in a browser, on any device.
 */
export async function deviceCodeLogin(
  as: oauth.AuthorizationServer,
  identity: ClientIdentity,
  method: StoredToken['clientAuth'],
  scope: string | undefined,
  say: (line: string) => void,
): Promise<oauth.TokenEndpointResponse> {
  const client: oauth.Client = { client_id: identity.clientId }
  const auth = () => clientAuth(method, identity.clientSecret)
  const endpoint = as.device_authorization_endpoint
  const grant = await exchange('The device authorization endpoint', endpoint, async () =>
    oauth.processDeviceAuthorizationResponse(
      as,
      client,
      await oauth.deviceAuthorizationRequest(as, client, auth(), scope ? { scope } : {}, requestOptions()),
    ),
  )
  const startedAt = Date.now()
  const deadline = startedAt + grant.expires_in * 1000
  say(`Verification URL: ${grant.verification_uri_complete ?? grant.verification_uri}`)
  say(`User code: ${grant.user_code}`)
  say(`Expires in: ${grant.expires_in} s`)
  say('Open the address, check that it shows the same code, and approve; waiting for the approval…')

  let interval = Math.max(MIN_INTERVAL_S, grant.interval ?? DEFAULT_INTERVAL_S)
  for (;;) {
    if (Date.now() + interval * 1000 >= deadline) throw expired(grant.expires_in)
    await sleep(interval * 1000)
    try {
      const response = await oauth.deviceCodeGrantRequest(as, client, auth(), grant.device_code, requestOptions())
      return await oauth.processDeviceCodeResponse(as, client, response)
    } catch (error) {
      if (!(error instanceof oauth.ResponseBodyError))
        throw oauthFailure(error, 'The token endpoint', as.token_endpoint)
      switch (error.error) {
        case 'authorization_pending':
          continue
        case 'slow_down':
          interval += SLOW_DOWN_S
          continue
        case 'expired_token':
          throw expired(grant.expires_in)
        case 'access_denied':
          throw new CommandFailure(
            'A2ACLI_ERR_AUTH_FAILED',
            'The login was denied at the verification URL',
            'run a2a auth login again and approve it',
          )
        default:
          throw oauthFailure(error, 'The token endpoint', as.token_endpoint)
      }
    }
  }
}

/** No login happened, as when it is denied: A2ACLI_ERR_TIMEOUT (exit 5) is what --timeout's deadline says. */
const expired = (seconds: number) =>
  new CommandFailure(
    'A2ACLI_ERR_AUTH_FAILED',
    `The user code expired (after ${seconds} s) before the login was approved`,
    'run a2a auth login again and approve it at the verification URL in time',
  )
