// An OpenID Connect issuer on 127.0.0.1 for bench/auth.mjs: its discovery document and JWKS (one RS256 and one
// ES256 key, made here), and tokens signed with them. The runtime accepts an http: issuer on loopback only, which
// this is. It runs in the bench's own process, on the load generator's core: after start-up the agent asks it
// nothing more (the keys are cached), so it takes no time from the measured rounds.
import { createServer } from 'node:http'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'

/** The audience every token names and the agent requires. */
export const BENCH_AUDIENCE = 'https://bench.agent.test'

/** Starts the issuer; `mint(sub, alg)` signs a token valid for an hour, `stop()` closes it. */
export async function startBenchIssuer() {
  const keys = {}
  for (const alg of ['RS256', 'ES256']) {
    const { privateKey, publicKey } = await generateKeyPair(alg)
    keys[alg] = { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid: `bench-${alg}`, alg, use: 'sig' } }
  }
  const fetches = { discovery: 0, jwks: 0 }
  const server = createServer((request, response) => {
    let body
    if (request.url === '/.well-known/openid-configuration') {
      fetches.discovery++
      body = { issuer: url, jwks_uri: `${url}/jwks` }
    } else if (request.url === '/jwks') {
      fetches.jwks++
      body = { keys: Object.values(keys).map((key) => key.publicJwk) }
    }
    if (body === undefined) response.writeHead(404).end()
    else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${server.address().port}`
  let serial = 0
  return {
    url,
    fetches,
    /** A token for `sub`, unique by its `jti` (two tokens minted in one second would otherwise be the same). */
    mint(sub, alg = 'RS256') {
      const now = Math.floor(Date.now() / 1000)
      return new SignJWT({ scope: 'bench', jti: String(++serial) })
        .setProtectedHeader({ alg, kid: keys[alg].publicJwk.kid, typ: 'JWT' })
        .setIssuer(url)
        .setSubject(sub)
        .setAudience(BENCH_AUDIENCE)
        .setIssuedAt(now)
        .setExpirationTime(now + 3600)
        .sign(keys[alg].privateKey)
    },
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
