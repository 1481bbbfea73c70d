import * as oauth from 'oauth4webapi'
import { type ClientIdentity, clientAuth, exchange, requestOptions } from './_oauth-calls.js'
import type { StoredToken } from './_token-file.js'

/** OAuth 2.x's client credentials grant: the client's own identity, one request, nobody to approve it. */
export function clientCredentialsLogin(
  as: oauth.AuthorizationServer,
  identity: ClientIdentity,
  method: StoredToken['clientAuth'],
  scope: string | undefined,
): Promise<oauth.TokenEndpointResponse> {
  const client: oauth.Client = { client_id: identity.clientId }
  return exchange('The token endpoint', as.token_endpoint, async () =>
    oauth.processClientCredentialsResponse(
      as,
      client,
      await oauth.clientCredentialsGrantRequest(
        as,
        client,
        clientAuth(method, identity.clientSecret),
        scope ? { scope } : {},
        requestOptions(),
      ),
    ),
  )
}
