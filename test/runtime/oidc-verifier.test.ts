import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  ConfigurationError,
  InsufficientScopeError,
  ServerUnavailableError,
  UnauthorizedError,
} from '../../runtime/src/errors.ts'
import { createOidcVerifier, type OidcConfig, readOidcConfig } from '../../runtime/src/http/_oidc.ts'
import { DEFAULT_OIDC_TIMING, type OidcTiming } from '../../runtime/src/http/_oidc-keys.ts'
import { VerifiedTokenCache } from '../../runtime/src/http/_oidc-token-cache.ts'
import { claimsOf, type OidcIssuer, startOidcIssuer, TEST_AUDIENCE, tampered } from '../_oidc-issuer.ts'
import { type CapturedLogger, captureLogger } from './_logger.ts'

let issuer: OidcIssuer
let logger: CapturedLogger

/** An issuer for each test of the describe block that calls it, stopped after the test. */
function useLocalIssuer() {
  beforeEach(async () => {
    issuer = await startOidcIssuer()
    logger = captureLogger()
  })
  afterEach(async () => {
    await issuer.stop()
  })
}

const now = () => Math.floor(Date.now() / 1000)

function configFor(options: { requiredScopes?: string[]; clockToleranceSeconds?: number } = {}): OidcConfig {
  return readOidcConfig({ issuer: issuer.url, audience: TEST_AUDIENCE, ...options }, {})!
}

function verifierFor(config = configFor(), timing: Partial<OidcTiming> = {}) {
  return createOidcVerifier(config, logger, { ...DEFAULT_OIDC_TIMING, ...timing })
}

/** The refusal `verify` rejects with, checked to be a one-line 401 that shows no part of the token. */
async function refusal(promise: Promise<unknown>, token: string): Promise<string> {
  const error = await promise.then(
    () => expect.fail('the token was accepted'),
    (rejected: unknown) => rejected,
  )
  expect(error).toBeInstanceOf(UnauthorizedError)
  const { message, httpStatus } = error as UnauthorizedError
  expect(httpStatus).toBe(401)
  expect(message).toMatch(/^Unauthorized: [^\n]+$/)
  for (const segment of token.split('.').filter((part) => part.length > 8)) expect(message).not.toContain(segment)
  return message
}

describe('tokens the verifier accepts', () => {
  useLocalIssuer()

  test.each(['RS256', 'ES256'] as const)('an %s token gives its subject, issuer, scopes and claims', async (alg) => {
    const verifier = verifierFor()
    const token = await issuer.mint(
      { sub: 'alice', scope: 'tasks:read tasks:write', scp: ['extra'], tenant: 'acme' },
      { alg },
    )
    const verified = await verifier.verify(token)
    expect(verified).toMatchObject({ issuer: issuer.url, subject: 'alice' })
    expect(verified.scopes).toEqual(['tasks:read', 'tasks:write', 'extra'])
    expect(verified.claims).toMatchObject({ tenant: 'acme', aud: TEST_AUDIENCE, iss: issuer.url })
    expect(Object.isFrozen(verified.claims) && Object.isFrozen(verified.claims.scp)).toBe(true)
  })

  test('discovery happens on the first token, not at creation, and is kept', async () => {
    const verifier = verifierFor()
    expect(issuer.fetches).toEqual({ discovery: 0, jwks: 0 })
    await verifier.verify(await issuer.mint())
    await verifier.verify(await issuer.mint({ sub: 'bob' }))
    await verifier.verify(await issuer.mint({ sub: 'carol' }, { alg: 'ES256' }))
    expect(issuer.fetches).toEqual({ discovery: 1, jwks: 1 })
  })

  test('an issuer ending in / is discovered without a double slash', async () => {
    const withPath = await startOidcIssuer({ path: '/realms/test/' })
    try {
      const config = readOidcConfig({ issuer: withPath.url, audience: TEST_AUDIENCE }, {})!
      const verified = await createOidcVerifier(config, logger).verify(await withPath.mint())
      expect(verified.issuer).toBe(withPath.url)
      expect(withPath.fetches.discovery).toBe(1)
    } finally {
      await withPath.stop()
    }
  })

  test('exp and nbf are allowed the clock tolerance, and no more', async () => {
    const verifier = verifierFor(configFor({ clockToleranceSeconds: 30 }))
    await expect(verifier.verify(await issuer.mint({ exp: now() - 10 }))).resolves.toBeDefined()
    await expect(verifier.verify(await issuer.mint({ nbf: now() + 10 }))).resolves.toBeDefined()
    const late = await issuer.mint({ exp: now() - 60 })
    expect(await refusal(verifier.verify(late), late)).toBe('Unauthorized: the token has expired')
  })

  test('scopes come from scp as a space-separated string too', async () => {
    const verifier = verifierFor(configFor({ requiredScopes: ['tasks:write'] }))
    const verified = await verifier.verify(await issuer.mint({ scp: 'tasks:read tasks:write' }))
    expect(verified.scopes).toEqual(['tasks:read', 'tasks:write'])
  })
})

describe('tokens the verifier refuses, each 401 with its reason', () => {
  useLocalIssuer()

  const cases: Array<[string, (issuer: OidcIssuer) => Promise<string> | string, string]> = [
    ['expired', (i) => i.mint({ exp: now() - 120 }), 'the token has expired'],
    ['not yet valid', (i) => i.mint({ nbf: now() + 120 }), 'the token is not valid yet (nbf)'],
    ['for another audience', (i) => i.mint({ aud: 'https://other-agent.test' }), 'not meant for this agent (aud)'],
    ['of another issuer', (i) => i.mint({ iss: 'https://elsewhere.test' }), 'issuer (iss) is not the one'],
    ['without a subject', (i) => i.mint({ sub: undefined }), 'the token has no "sub" claim'],
    ['with an empty subject', (i) => i.mint({ sub: '' }), 'the token\'s "sub" claim is not a valid value'],
    ['without an expiry', (i) => i.mint({ exp: undefined }), 'the token has no "exp" claim'],
    ['with an expiry that is not a number', (i) => i.mint({ exp: 'soon' as never }), '"exp" claim is not a valid'],
    ['unsigned (alg: none)', (i) => i.unsignedToken(), 'signing algorithm (alg) is not accepted'],
    ['HS256 keyed with the public key PEM', (i) => i.hmacWithPublicKey('pem'), 'signing algorithm (alg) is not'],
    ['HS256 keyed with the public JWK', (i) => i.hmacWithPublicKey('jwk'), 'signing algorithm (alg) is not'],
    [
      'with a tampered payload',
      async (i) => {
        const token = await i.mint()
        return tampered(token, { ...claimsOf(token), sub: 'admin' })
      },
      "the token's signature does not verify",
    ],
    ['signed by a key the issuer does not publish', (i) => i.mint({}, { unpublished: true }), 'signing key (kid)'],
    ['not a JWT at all', () => 'not-a-jwt-but-a-long-enough-string', 'not a well-formed signed JWT'],
  ]

  test.each(cases)('%s', async (_name, make, reason) => {
    const token = await make(issuer)
    expect(await refusal(verifierFor().verify(token), token)).toContain(reason)
    expect(logger.lines).toEqual([])
  })

  test('a token that fails before any key is needed does not make the verifier ask the issuer', async () => {
    const verifier = verifierFor()
    for (const token of ['garbage', issuer.unsignedToken(), await issuer.hmacWithPublicKey('pem')]) {
      await refusal(verifier.verify(token), token)
    }
    expect(issuer.fetches).toEqual({ discovery: 0, jwks: 0 })
  })

  test('a token without a required scope is 403, naming the scope', async () => {
    const verifier = verifierFor(configFor({ requiredScopes: ['tasks:read', 'tasks:write'] }))
    const token = await issuer.mint({ scope: 'tasks:read', scp: ['profile'] })
    const error = await verifier.verify(token).catch((rejected: unknown) => rejected)
    expect(error).toBeInstanceOf(InsufficientScopeError)
    expect(error).toMatchObject({
      httpStatus: 403,
      message: 'Forbidden: the token does not grant the scope tasks:write',
    })
    await expect(verifier.verify(await issuer.mint({ scope: 'tasks:write tasks:read' }))).resolves.toBeDefined()
  })
})

describe('keys', () => {
  useLocalIssuer()

  test('an unknown kid is refused, then a rotated-in key is accepted after one fetch of the keys', async () => {
    const verifier = verifierFor(configFor(), { keyRefetchCooldownMs: 0 })
    await verifier.verify(await issuer.mint())
    expect(issuer.fetches.jwks).toBe(1)
    const unknown = await issuer.mint({}, { unpublished: true })
    await refusal(verifier.verify(unknown), unknown)

    await issuer.rotate()
    const before = issuer.fetches.jwks
    for (const alg of ['RS256', 'ES256'] as const) {
      await expect(verifier.verify(await issuer.mint({ sub: `rotated-${alg}` }, { alg }))).resolves.toBeDefined()
    }
    expect(issuer.fetches.jwks).toBe(before + 1)
  })

  test('50 tokens with made-up kids make the verifier fetch the keys once at most', async () => {
    const verifier = verifierFor()
    await verifier.verify(await issuer.mint())
    for (let n = 0; n < 50; n++) {
      const token = await issuer.mint({}, { kid: `made-up-${n}` })
      expect(await refusal(verifier.verify(token), token)).toContain('signing key (kid)')
    }
    expect(issuer.fetches.jwks).toBeLessThanOrEqual(2)
    expect(issuer.fetches.discovery).toBe(1)
  })

  test('a token stays verified only until its exp', async () => {
    const verifier = verifierFor(configFor({ clockToleranceSeconds: 0 }))
    const token = await issuer.mint({ exp: now() + 2 })
    const first = await verifier.verify(token)
    expect(await verifier.verify(token)).toBe(first)
    await expect
      .poll(
        () =>
          verifier.verify(token).then(
            () => 'accepted',
            (error: Error) => error.message,
          ),
        { timeout: 10_000 },
      )
      .toBe('Unauthorized: the token has expired')
  })

  test('the cache of verified tokens keeps its newest entries up to its size', () => {
    const cache = new VerifiedTokenCache<number>(3)
    const exp = now() + 300
    for (const n of [1, 2, 3, 4]) cache.set(`token-${n}`, n, exp, 100)
    expect([1, 2, 3, 4].map((n) => cache.get(`token-${n}`))).toEqual([undefined, 2, 3, 4])
    cache.set('expired', 5, now() - 1, 100)
    expect(cache.get('expired')).toBeUndefined()
    expect(cache.size).toBe(3)
    const none = new VerifiedTokenCache<number>(0)
    none.set('token', 1, exp, 100)
    expect(none.get('token')).toBeUndefined()
  })

  test('the cache of verified tokens keeps within its bytes: the oldest go first, one larger than all is not kept', () => {
    // Each entry counts its value's bytes and 200 of its own: three of 1,000 fit in 3,600, a fourth pushes one out.
    const cache = new VerifiedTokenCache<number>(100, 3_600)
    const exp = now() + 300
    for (const n of [1, 2, 3, 4]) cache.set(`token-${n}`, n, exp, 1_000)
    expect([1, 2, 3, 4].map((n) => cache.get(`token-${n}`))).toEqual([undefined, 2, 3, 4])
    expect(cache.bytes).toBe(3_600)
    cache.set('huge', 5, exp, 10_000)
    expect(cache.get('huge')).toBeUndefined()
    expect(cache.bytes).toBe(3_600)
    cache.set('token-2', 2, exp, 1_000)
    expect(cache.bytes).toBe(3_600)
  })
})

describe('an issuer that does not answer', () => {
  useLocalIssuer()

  test('answers 503, asks again at most once per interval, logs the outage once, and recovers', async () => {
    issuer.down(true)
    const verifier = verifierFor(configFor(), { retryAfterFailureMs: 1_500 })
    const token = await issuer.mint()
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () => verifier.verify(token).catch((error: unknown) => error)),
    )
    for (let n = 0; n < 20; n++) outcomes.push(await verifier.verify(token).catch((error: unknown) => error))
    for (const outcome of outcomes) {
      expect(outcome).toBeInstanceOf(ServerUnavailableError)
      expect(outcome).toMatchObject({ httpStatus: 503 })
    }
    expect(issuer.fetches.discovery).toBe(1)
    // Still down when the interval has passed: asked again, and the outage is not logged a second time.
    await expect
      .poll(async () => {
        await verifier.verify(token).catch(() => {})
        return issuer.fetches.discovery
      })
      .toBe(2)

    issuer.down(false)
    await expect.poll(() => verifier.verify(token).then((verified) => verified.subject, String)).toBe('alice')
    const warnings = logger.lines.filter((line) => line.level === 'warn')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]!.message).toContain(`${issuer.url}/.well-known/openid-configuration answered HTTP 503`)
    expect(logger.text('info')).toContain('answers again')
  })

  test('keys already fetched keep working while the issuer is down; a key it must fetch is 503', async () => {
    const verifier = verifierFor(configFor(), { keyRefetchCooldownMs: 0 })
    await verifier.verify(await issuer.mint())
    issuer.down(true)
    await expect(verifier.verify(await issuer.mint({ sub: 'bob' }))).resolves.toMatchObject({ subject: 'bob' })
    const unknown = await issuer.mint({}, { unpublished: true })
    await expect(verifier.verify(unknown)).rejects.toBeInstanceOf(ServerUnavailableError)
    expect(logger.text('warn')).toContain('/jwks answered HTTP 503')
  })

  test.each([
    [{ issuer: 'https://elsewhere.test' }, 'names the issuer "https://elsewhere.test"'],
    [{ jwks_uri: 'http://keys.example/jwks' }, 'its jwks_uri must be an absolute https: URL'],
    [{ jwks_uri: undefined }, 'its jwks_uri must be an absolute https: URL'],
  ])('a discovery document with %o is not used (503, logged)', async (fields, logged) => {
    issuer.overrideDiscovery(fields)
    const token = await issuer.mint()
    await expect(verifierFor().verify(token)).rejects.toBeInstanceOf(ServerUnavailableError)
    expect(logger.text('warn')).toContain(logged)
    expect(issuer.fetches.jwks).toBe(0)
  })
})

describe('readOidcConfig', () => {
  test('no issuer, no OIDC', () => {
    expect(readOidcConfig(undefined, {})).toBeUndefined()
    expect(readOidcConfig({ audience: 'x' }, { A2A_OIDC_ISSUER: '  ' })).toBeUndefined()
  })

  test('reads the variables, with the defaults', () => {
    const env = {
      A2A_OIDC_ISSUER: 'https://idp.example/realms/a',
      A2A_OIDC_AUDIENCE: 'agent-a, agent-b',
      A2A_OIDC_SCOPES: 'tasks:read,tasks:write',
    }
    expect(readOidcConfig(undefined, env)).toEqual({
      issuer: 'https://idp.example/realms/a',
      audience: ['agent-a', 'agent-b'],
      requiredScopes: ['tasks:read', 'tasks:write'],
      algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'],
      clockToleranceSeconds: 30,
    })
    expect(readOidcConfig({ issuer: 'https://other.example', audience: 'x', requiredScopes: [] }, env)).toMatchObject({
      issuer: 'https://other.example',
      audience: ['x'],
      requiredScopes: [],
    })
  })

  test.each(['http://localhost:8080', 'http://127.0.0.2:9000/', 'http://[::1]:9000', 'http://127.1'])(
    'accepts the loopback issuer %s over http:',
    (url) => {
      expect(readOidcConfig({ issuer: url, audience: 'x' }, {})?.issuer).toBe(url)
    },
  )

  const issuerField = 'auth.oidc.issuer (A2A_OIDC_ISSUER)'
  test.each([
    [{ issuer: 'http://idp.example', audience: 'x' }, `${issuerField} must be an absolute https: URL`],
    [{ issuer: 'http://127.0.0.1.nip.io', audience: 'x' }, issuerField],
    [{ issuer: 'http://localhost.example', audience: 'x' }, issuerField],
    [{ issuer: 'http://[::ffff:127.0.0.1]', audience: 'x' }, issuerField],
    [{ issuer: 'idp.example', audience: 'x' }, issuerField],
    [{ issuer: 'ftp://idp.example', audience: 'x' }, issuerField],
    [{ issuer: 'https://idp.example/?tenant=a', audience: 'x' }, `${issuerField} must have no query or fragment`],
    [{ issuer: 'https://idp.example/#', audience: 'x' }, `${issuerField} must have no query or fragment`],
    [{ issuer: 'https://idp.example' }, 'auth.oidc.audience (A2A_OIDC_AUDIENCE) is required'],
    [{ issuer: 'https://idp.example', audience: [] }, 'auth.oidc.audience (A2A_OIDC_AUDIENCE) must be'],
    [{ issuer: 'https://idp.example', audience: 'x', algorithms: ['HS256'] }, 'auth.oidc.algorithms must be'],
    [{ issuer: 'https://idp.example', audience: 'x', algorithms: ['none'] }, 'never none or HS*'],
    [{ issuer: 'https://idp.example', audience: 'x', algorithms: ['RS256', 'HS512'] }, '(got ["RS256","HS512"])'],
    [{ issuer: 'https://idp.example', audience: 'x', algorithms: [] }, 'auth.oidc.algorithms must be'],
    [{ issuer: 'https://idp.example', audience: 'x', clockToleranceSeconds: -1 }, 'clockToleranceSeconds must'],
    [{ issuer: 'https://idp.example', audience: 'x', clockToleranceSeconds: 1.5 }, '(got 1.5)'],
    [{ issuer: 'https://idp.example', audience: 'x', requiredScopes: ['a b'] }, 'auth.oidc.requiredScopes'],
  ])('refuses %o', (options, message) => {
    const read = () => readOidcConfig(options, {})
    expect(read).toThrow(ConfigurationError)
    expect(read).toThrow(message)
    expect(() => read()).toThrow(/^[^\n]+$/)
  })

  test('names the variable and its value when the issuer comes from the environment', () => {
    expect(() => readOidcConfig(undefined, { A2A_OIDC_ISSUER: 'http://idp.example', A2A_OIDC_AUDIENCE: 'x' })).toThrow(
      'auth.oidc.issuer (A2A_OIDC_ISSUER) must be an absolute https: URL (http: only on a loopback address) (got "http://idp.example")',
    )
  })
})
