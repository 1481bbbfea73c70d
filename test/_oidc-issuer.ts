import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  base64url,
  type CryptoKey,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  type JWK,
  type JWTPayload,
  SignJWT,
  UnsecuredJWT,
} from 'jose'

/** The audience tokens carry unless a test says otherwise. */
export const TEST_AUDIENCE = 'https://agent.test'

export type SigningAlg = 'RS256' | 'ES256'

export interface MintOptions {
  /** Which of the issuer's keys signs (default RS256). */
  alg?: SigningAlg
  /** The `kid` the header names, whatever key signs. */
  kid?: string
  /** Sign with a fresh key the issuer never publishes (its kid is new too, unless `kid` is given). */
  unpublished?: boolean
}

export interface OidcIssuer {
  /** `http://127.0.0.1:<port>` plus the path given: the `iss` of its tokens. */
  url: string
  /** Requests received (whatever they were answered). */
  fetches: { discovery: number; jwks: number }
  /**
   * A JWT for `claims` over the defaults (iss = url, sub `alice`, aud TEST_AUDIENCE, iat now, exp in 5 minutes);
   * a claim given as undefined is left out.
   */
  mint(claims?: JWTPayload, options?: MintOptions): Promise<string>
  /** Publishes a new key of each algorithm (the old ones stay published); the next `mint` signs with the new one. */
  rotate(): Promise<void>
  /** While true, discovery and keys answer 503. */
  down(isDown: boolean): void
  /** Fields that replace the discovery document's own (a wrong `issuer`, an `http:` `jwks_uri`…). */
  overrideDiscovery(fields: Record<string, unknown>): void
  stop(): Promise<void>
  /** Attacks: an unsigned `alg: none` token. */
  unsignedToken(claims?: JWTPayload): string
  /** Attacks: HS256 signed with the RS256 public key's text (SPKI PEM, or its JWK as JSON) as the HMAC secret. */
  hmacWithPublicKey(form: 'pem' | 'jwk', claims?: JWTPayload): Promise<string>
}

interface SigningKey {
  kid: string
  privateKey: CryptoKey
  publicJwk: JWK
}

/** A signed token whose payload segment is replaced by `claims` (its signature no longer covers it). */
export function tampered(token: string, claims: JWTPayload): string {
  const [header, , signature] = token.split('.')
  return `${header}.${base64url.encode(JSON.stringify(claims))}.${signature}`
}

/** The claims a token carries, read without checking it. */
export function claimsOf(token: string): JWTPayload {
  return JSON.parse(new TextDecoder().decode(base64url.decode(token.split('.')[1]!)))
}

let keyNumber = 0

async function newKey(alg: SigningAlg): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  const kid = `${alg.toLowerCase()}-${++keyNumber}`
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } }
}

/** The keys every issuer starts with, made once per test file: an RSA key takes a while on a busy machine. */
let firstKeys: Promise<Record<SigningAlg, SigningKey>> | undefined
const startingKeys = async () => ({ RS256: await newKey('RS256'), ES256: await newKey('ES256') })

/** An OpenID Connect issuer on 127.0.0.1 (a free port): its discovery document and JWKS, keys made here. */
export async function startOidcIssuer(options: { path?: string } = {}): Promise<OidcIssuer> {
  firstKeys ??= startingKeys()
  const current = { ...(await firstKeys) }
  const published: JWK[] = [current.RS256.publicJwk, current.ES256.publicJwk]
  const fetches = { discovery: 0, jwks: 0 }
  let isDown = false
  let override: Record<string, unknown> = {}

  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://issuer').pathname
    let body: unknown
    if (path === discoveryPath) {
      fetches.discovery++
      body = { issuer: url, jwks_uri: `${origin}/jwks`, ...override }
    } else if (path === '/jwks') {
      fetches.jwks++
      body = { keys: published }
    }
    if (body === undefined) response.writeHead(404).end()
    else if (isDown) response.writeHead(503).end()
    else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const url = `${origin}${options.path ?? ''}`
  const discoveryPath = `${options.path?.replace(/\/$/, '') ?? ''}/.well-known/openid-configuration`

  const payload = (claims: JWTPayload): JWTPayload => {
    const now = Math.floor(Date.now() / 1000)
    return { iss: url, sub: 'alice', aud: TEST_AUDIENCE, iat: now, exp: now + 300, ...claims }
  }

  return {
    url,
    fetches,
    async mint(claims = {}, mint = {}) {
      const alg = mint.alg ?? 'RS256'
      const key = mint.unpublished ? await newKey(alg) : current[alg]
      return new SignJWT(payload(claims))
        .setProtectedHeader({ alg, kid: mint.kid ?? key.kid, typ: 'JWT' })
        .sign(key.privateKey)
    },
    async rotate() {
      for (const alg of ['RS256', 'ES256'] as const) {
        current[alg] = await newKey(alg)
        published.push(current[alg].publicJwk)
      }
    },
    down(value) {
      isDown = value
    },
    overrideDiscovery(fields) {
      override = fields
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
    unsignedToken: (claims = {}) => new UnsecuredJWT(payload(claims)).encode(),
    async hmacWithPublicKey(form, claims = {}) {
      const rsa = await crypto.subtle.importKey(
        'jwk',
        current.RS256.publicJwk,
        { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
        true,
        ['verify'],
      )
      const secret = form === 'pem' ? await exportSPKI(rsa) : JSON.stringify(current.RS256.publicJwk)
      return new SignJWT(payload(claims))
        .setProtectedHeader({ alg: 'HS256', kid: current.RS256.kid, typ: 'JWT' })
        .sign(new TextEncoder().encode(secret))
    },
  }
}
