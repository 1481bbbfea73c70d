import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { verifyAgentCardSignature } from '@a2a-js/sdk'
import { type A2AServer, createA2AApp, serveAgent } from 'a2a-runtime'
import { calculateJwkThumbprint, decodeProtectedHeader, flattenedVerify, type JWK } from 'jose'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { echoAgent } from './_agents.ts'

/** Keys of each kind a card can be signed with, made by the test, and the algorithm each must sign with. */
const KEYS = [
  { kind: 'RSA 2048', alg: 'RS256', pair: () => generateKeyPairSync('rsa', { modulusLength: 2048 }) },
  { kind: 'EC P-256', alg: 'ES256', pair: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }) },
  { kind: 'EC P-384', alg: 'ES384', pair: () => generateKeyPairSync('ec', { namedCurve: 'P-384' }) },
  { kind: 'EC P-521', alg: 'ES512', pair: () => generateKeyPairSync('ec', { namedCurve: 'P-521' }) },
  { kind: 'Ed25519', alg: 'EdDSA', pair: () => generateKeyPairSync('ed25519') },
] as const

const pem = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'pem' }) as string
const jwkOf = (key: KeyObject) => key.export({ format: 'jwk' }) as JWK

type Signature = { protected: string; signature: string }
type Card = Record<string, unknown> & { signatures?: Signature[] }
const firstSignature = (card: Card): Signature => card.signatures![0]!

const servers: A2AServer[] = []
const folders: string[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
  vi.restoreAllMocks()
})
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

async function serveSigned(cardSigning: { key: string; keyId?: string } | undefined, env: NodeJS.ProcessEnv = {}) {
  const server = await serveAgent(echoAgent, { port: 0, hostname: '127.0.0.1', handleSignals: false, env, cardSigning })
  servers.push(server)
  return server
}

async function getCard(server: A2AServer, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(new URL(path, server.url), { headers })
  expect(response.status).toBe(200)
  return { card: (await response.json()) as Card, etag: response.headers.get('etag')! }
}
const v1Card = (server: A2AServer) => getCard(server, '.well-known/agent-card.json', { 'A2A-Version': '1.0' })
const v03Card = (server: A2AServer) => getCard(server, '.well-known/agent-card.json')

/** RFC 8785 for what a card holds (strings, booleans, lists, objects): keys sorted by code unit, no whitespace. */
const jcs = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(jcs).join(',')}]`
    : typeof value === 'object' && value !== null
      ? `{${Object.keys(value)
          .sort()
          .map((key) => `${JSON.stringify(key)}:${jcs((value as Record<string, unknown>)[key])}`)
          .join(',')}}`
      : JSON.stringify(value)

/** Verifies the card's one signature with jose against `publicKey`, over the card as served less `signatures`. */
async function verifiesAsServed(card: Card, publicKey: KeyObject) {
  expect(card.signatures).toHaveLength(1)
  const { signatures, ...content } = card
  const payload = Buffer.from(jcs(content)).toString('base64url')
  return flattenedVerify({ ...firstSignature({ signatures }), payload }, publicKey).then(
    () => true,
    () => false,
  )
}

describe('signed cards over HTTP', () => {
  it.each(KEYS)('a $kind key (PEM) signs both A2A cards with $alg, kid its thumbprint', async ({ alg, pair }) => {
    const { privateKey, publicKey } = pair()
    const server = await serveSigned({ key: pem(privateKey) })
    const thumbprint = await calculateJwkThumbprint(jwkOf(publicKey))
    for (const { card } of [await v1Card(server), await v03Card(server)]) {
      expect(decodeProtectedHeader(firstSignature(card))).toEqual({ alg, typ: 'JOSE', kid: thumbprint })
    }
    // The v0.3 shape is covered whole: every field of the card as served.
    const { card: v03 } = await v03Card(server)
    expect(v03.protocolVersion).toBe('0.3.0')
    expect(await verifiesAsServed(v03, publicKey)).toBe(true)
    expect(await verifiesAsServed({ ...v03, description: 'Changed after signing' }, publicKey)).toBe(false)
    // The v1.0 shape as the official SDK verifies it (its own canonical form, the v1.0 fields).
    const { card: v1 } = await v1Card(server)
    const sdkVerify = verifyAgentCardSignature(async () => publicKey)
    // The SDK logs each refused signature at debug level: the tampered card below has one.
    vi.spyOn(console, 'debug').mockImplementation(() => {})
    await expect(sdkVerify(v1 as never)).resolves.toBeUndefined()
    await expect(sdkVerify({ ...v1, name: 'Impostor' } as never)).rejects.toThrow(/No valid signatures/)
  })

  it('a JWK key signs with keyId as kid when given, else the JWK own kid', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const jwk = JSON.stringify({ ...jwkOf(privateKey), kid: 'jwk-own' })
    const named = await serveSigned({ key: jwk, keyId: 'agent-2026' })
    expect(decodeProtectedHeader(firstSignature((await v1Card(named)).card)).kid).toBe('agent-2026')
    const own = await serveSigned({ key: jwk })
    const { card } = await v03Card(own)
    expect(decodeProtectedHeader(firstSignature(card)).kid).toBe('jwk-own')
    expect(await verifiesAsServed(card, publicKey)).toBe(true)
  })

  it('reads A2A_CARD_SIGNING_KEY from a file; the platform card stays unsigned', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519')
    const folder = mkdtempSync(join(tmpdir(), 'card-key-'))
    folders.push(folder)
    writeFileSync(join(folder, 'card-key.pem'), pem(privateKey))
    const server = await serveSigned(undefined, { A2A_CARD_SIGNING_KEY: join(folder, 'card-key.pem') })
    expect(await verifiesAsServed((await v03Card(server)).card, publicKey)).toBe(true)
    const { card: platform } = await getCard(server, '.well-known/agent.json')
    expect(platform).not.toHaveProperty('signatures')
    expect(platform.name).toBe('Test Agent')
  })

  it('signs once: the same bytes and ETag on every request, 304 for a client that holds them', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const server = await serveSigned({ key: pem(privateKey) })
    // ECDSA signatures are randomised: a second signing would give other bytes and another ETag.
    const concurrent = await Promise.all(Array.from({ length: 5 }, () => v1Card(server)))
    const first = concurrent[0]!
    expect(first.card.signatures).toHaveLength(1)
    for (const again of [...concurrent, await v1Card(server)]) {
      expect(again.card.signatures).toEqual(first.card.signatures)
      expect(again.etag).toBe(first.etag)
    }
    expect((await v03Card(server)).etag).not.toBe(first.etag)
    const held = await fetch(new URL('.well-known/agent-card.json', server.url), {
      headers: { 'A2A-Version': '1.0', 'If-None-Match': first.etag },
    })
    expect(held.status).toBe(304)
  })

  it('an agent without a key serves cards without signatures', async () => {
    const server = await serveSigned(undefined)
    expect((await v1Card(server)).card).not.toHaveProperty('signatures')
    expect((await v03Card(server)).card).not.toHaveProperty('signatures')
  })
})

describe('a key that cannot sign stops start-up', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const folder = mkdtempSync(join(tmpdir(), 'card-bad-key-'))
  folders.push(folder)
  const file = (name: string, text: string) => {
    writeFileSync(join(folder, name), text)
    return join(folder, name)
  }
  const cases = [
    ['a missing file', join(folder, 'nowhere.pem'), /no such file/],
    ['a folder', folder, /a folder, not a key file/],
    ['a public key', file('public.pem', publicKey.export({ type: 'spki', format: 'pem' }) as string), /a public key/],
    ['a public JWK', file('public.jwk', JSON.stringify(jwkOf(publicKey))), /a public key \(no "d"\)/],
    ['a symmetric key', file('secret.jwk', JSON.stringify({ kty: 'oct', k: 'c2VjcmV0' })), /a symmetric key/],
    ['a JWK set', file('set.json', JSON.stringify({ keys: [jwkOf(privateKey)] })), /a JWK set/],
    ['text', file('notes.txt', 'not a key'), /neither a PEM private key/],
    [
      'a broken PEM',
      file('broken.pem', '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'),
      /not a readable/,
    ],
    [
      'an RSA key under 2048 bits',
      file('short.pem', pem(generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey)),
      /does not support/,
    ],
  ] as const

  it.each(cases)('%s: createA2AApp throws naming the setting and the file', (_what, path, reason) => {
    expect(() => createA2AApp(echoAgent, { env: { A2A_CARD_SIGNING_KEY: path } })).toThrow(
      expect.objectContaining({ name: 'ConfigurationError', message: expect.stringMatching(reason) }),
    )
    expect(() => createA2AApp(echoAgent, { env: { A2A_CARD_SIGNING_KEY: path } })).toThrow(
      `cardSigning.key (A2A_CARD_SIGNING_KEY): ${path}: `,
    )
  })

  it('the option given: the error names cardSigning.key', () => {
    expect(() => createA2AApp(echoAgent, { cardSigning: { key: 'not a key' } })).toThrow(
      /^cardSigning\.key: neither a PEM private key/,
    )
    expect(() => createA2AApp(echoAgent, { cardSigning: { key: pem(privateKey), keyId: '' } })).toThrow(
      /cardSigning\.keyId must be a non-empty string/,
    )
  })
})

describe('signing where the agent knows no address of its own', () => {
  it('serves the cards unsigned (one warning) rather than sign an address a request Host chose; with publicUrl it signs', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const warned: string[] = []
    const logger = { debug() {}, info() {}, warn: (line: string) => warned.push(line), error() {} }
    const app = createA2AApp(echoAgent, { cardSigning: { key: pem(privateKey) }, logger, env: {} })
    for (const host of ['127.0.0.2', '127.0.0.3:1', 'localhost:2']) {
      const response = await app.fetch(
        new Request(`http://${host}/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } }),
      )
      const card = (await response.json()) as Card
      expect(card.signatures, host).toBeUndefined()
      expect(card.supportedInterfaces).toEqual(
        expect.arrayContaining([expect.objectContaining({ url: `http://${host}/` })]),
      )
    }
    expect(warned).toEqual([
      'The cards are served unsigned: the agent knows no address of its own to sign; set A2A_PUBLIC_URL',
    ])
    await app.close()
    const known = createA2AApp(echoAgent, {
      cardSigning: { key: pem(privateKey) },
      publicUrl: 'https://agent.example/',
      logger,
      env: {},
    })
    const signed = (await (
      await known.fetch(
        new Request('http://127.0.0.2/.well-known/agent-card.json', { headers: { 'a2a-version': '1.0' } }),
      )
    ).json()) as Card
    expect(signed.signatures).toHaveLength(1)
    await known.close()
  })
})
