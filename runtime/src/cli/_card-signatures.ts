import { existsSync } from 'node:fs'
import { base64url, calculateJwkThumbprint, decodeProtectedHeader, flattenedVerify, importJWK, type JWK } from 'jose'
import { asciiEscaped, type Coverage, literalPayload, signedPayload } from '../_card-signature.js'
import { isObject } from '../_is-object.js'
import type { Finding } from './_card-check.js'
import { type CardText, readCardFile, readCardResponse } from './_card-source.js'
import { unreachable } from './_client.js'
import { ProjectError } from './_errors.js'

/**
 * `a2a card validate --jwks`: each signature of a card (A2A v1.0 §8.4) checked against the keys the user gives,
 * a JWKS file or URL, and never against keys the card points to (`jku`) or its host serves: a card signed by
 * whoever controls the card proves nothing. A card is `verified` (a signature matches a key given), `unverifiable`
 * (signed, but no key given for it), `unsigned`, or `invalid` (a key given for a signature does not match it).
 */

/** The public keys the user trusts, and where they came from (named in the report). */
export interface KeySet {
  source: string
  keys: JWK[]
}

type CardOutcome = 'verified' | 'unverifiable' | 'unsigned' | 'invalid'

interface SignatureCheck {
  /** The JSON path of the signature (`signatures[0]`). */
  path: string
  outcome: Exclude<CardOutcome, 'unsigned'>
  alg?: string
  kid?: string
  /** The key that verified it or refused it: its `kid` in the key set and its RFC 7638 thumbprint. */
  key?: { kid?: string; thumbprint: string }
  /** What a verified signature covers: every field, or the A2A v1.0 fields only (as the official SDKs sign). */
  covers?: Coverage
  /** The fields a verified signature leaves out, by JSON path. */
  uncovered?: string[]
  reason?: string
}

export interface SignatureReport {
  outcome: CardOutcome
  signatures: SignatureCheck[]
}

/** Asymmetric JWS algorithms, and what a key needs to verify each: a symmetric or `none` signature never is. */
const KEY_FOR: Record<string, { kty: string; crv?: string }> = {
  RS256: { kty: 'RSA' },
  RS384: { kty: 'RSA' },
  RS512: { kty: 'RSA' },
  PS256: { kty: 'RSA' },
  PS384: { kty: 'RSA' },
  PS512: { kty: 'RSA' },
  ES256: { kty: 'EC', crv: 'P-256' },
  ES384: { kty: 'EC', crv: 'P-384' },
  ES512: { kty: 'EC', crv: 'P-521' },
  EdDSA: { kty: 'OKP', crv: 'Ed25519' },
  Ed25519: { kty: 'OKP', crv: 'Ed25519' },
}
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth']

/** Reads the key set of `--jwks`: a JWKS (or one JWK) from a file or an http(s) URL; one line when it cannot. */
export async function readKeySet(source: string): Promise<KeySet> {
  const what = 'the key set'
  let read: CardText
  if (/^https?:\/\//i.test(source)) {
    let response: Response
    try {
      response = await fetch(source, { signal: AbortSignal.timeout(10_000), headers: { accept: 'application/json' } })
    } catch (error) {
      throw unreachable(source, error, 'check the --jwks URL')
    }
    if (!response.ok) {
      await response.body?.cancel()
      throw new ProjectError(`--jwks ${source} answered HTTP ${response.status}`)
    }
    read = await readCardResponse(response, what)
  } else {
    if (!existsSync(source)) throw new ProjectError(`--jwks: no file at ${source} (a JWKS file, or an http(s) URL)`)
    read = readCardFile(source, what)
  }
  if ('finding' in read) throw new ProjectError(`--jwks ${source}: ${read.finding.message}`)
  const set = read.card
  const keys = isObject(set) && Array.isArray(set.keys) ? set.keys : isObject(set) && 'kty' in set ? [set] : undefined
  if (!keys) throw new ProjectError(`--jwks ${source}: not a JWKS (a JSON object with "keys": [...])`)
  // A private JWK verifies as its public half; the private members are dropped, never used.
  const publicKeys = keys.filter(isObject).map((key) => {
    const copy: Record<string, unknown> = { ...key }
    for (const member of PRIVATE_MEMBERS) delete copy[member]
    return copy as JWK
  })
  return { source, keys: publicKeys }
}

/** Checks every signature of the card against the keys given (none: each is unverifiable). */
export async function checkSignatures(card: unknown, keySet: KeySet | undefined): Promise<SignatureReport> {
  const signatures = isObject(card) ? card.signatures : undefined
  if (!isObject(card) || signatures === undefined || (Array.isArray(signatures) && signatures.length === 0))
    return { outcome: 'unsigned', signatures: [] }
  if (!Array.isArray(signatures))
    return {
      outcome: 'invalid',
      signatures: [{ path: 'signatures', outcome: 'invalid', reason: 'not a list of signatures' }],
    }
  const checks: SignatureCheck[] = []
  for (const [index, signature] of signatures.entries())
    checks.push(await checkOne(card, signature, `signatures[${index}]`, keySet))
  const outcome = checks.some((check) => check.outcome === 'invalid')
    ? 'invalid'
    : checks.some((check) => check.outcome === 'verified')
      ? 'verified'
      : 'unverifiable'
  return { outcome, signatures: checks }
}

async function checkOne(
  card: Record<string, unknown>,
  signature: unknown,
  path: string,
  keySet: KeySet | undefined,
): Promise<SignatureCheck> {
  const invalid = (reason: string, more: Partial<SignatureCheck> = {}): SignatureCheck => ({
    path,
    outcome: 'invalid',
    ...more,
    reason,
  })
  if (!isObject(signature) || typeof signature.protected !== 'string' || typeof signature.signature !== 'string')
    return invalid('not a signature: "protected" and "signature" must be strings')
  if (signature.header !== undefined && !isObject(signature.header))
    return invalid('its unprotected "header" must be a JSON object')
  let header: Record<string, unknown>
  try {
    header = decodeProtectedHeader({ protected: signature.protected })
  } catch {
    return invalid('its protected header is not base64url-encoded JSON')
  }
  const alg = typeof header.alg === 'string' ? header.alg : undefined
  const kid = typeof header.kid === 'string' ? header.kid : undefined
  const named = { ...(alg && { alg }), ...(kid !== undefined && { kid }) }
  if (!alg || !Object.hasOwn(KEY_FOR, alg))
    return invalid(`alg ${JSON.stringify(alg ?? null)} is not a public-key signature algorithm`, named)
  if (kid === undefined) return invalid('its protected header has no kid (the spec requires alg and kid)', named)
  if (!keySet) return { path, outcome: 'unverifiable', ...named, reason: 'no keys given' }
  const candidates = keySet.keys.filter((key) => fits(key, alg, kid))
  if (!candidates.length)
    return { path, outcome: 'unverifiable', ...named, reason: `no ${alg} key with kid "${kid}" in ${keySet.source}` }
  const payloads = payloadsOf(card)
  let refusedBy: JWK | undefined
  for (const jwk of candidates) {
    const key = await importJWK(jwk, alg).catch(() => undefined)
    if (!key) continue
    refusedBy ??= jwk
    for (const { payload, covers, uncovered } of payloads) {
      const jws = {
        payload: base64url.encode(payload),
        protected: signature.protected,
        signature: signature.signature,
        ...(signature.header !== undefined && { header: signature.header }),
      }
      const verified = await flattenedVerify(jws, key, { algorithms: [alg] }).then(
        () => true,
        () => false,
      )
      if (verified) return { path, outcome: 'verified', ...named, key: await keyName(jwk), covers, uncovered }
    }
  }
  if (!refusedBy)
    return { path, outcome: 'unverifiable', ...named, reason: `the keys with kid "${kid}" could not be read` }
  return invalid('the signature does not match the card: it was changed after signing, or signed with another key', {
    ...named,
    key: await keyName(refusedBy),
  })
}

/** A key that may verify this signature: its kid, a type and curve the algorithm uses, and no other purpose. */
function fits(key: JWK, alg: string, kid: string): boolean {
  const needs = KEY_FOR[alg]!
  return (
    key.kid === kid &&
    key.kty === needs.kty &&
    (needs.crv === undefined || key.crv === needs.crv) &&
    (key.alg === undefined || key.alg === alg) &&
    (key.use === undefined || key.use === 'sig')
  )
}

/**
 * The forms a signer may have signed, the widest coverage first: the whole card as the runtime and the spec sign
 * it, the v1.0 fields as the official SDKs do, the card kept literally (empty required fields included), and
 * a2a-python's ASCII-escaped JSON of the first two. Each is the same card: a match in any proves its content.
 */
function payloadsOf(
  card: Record<string, unknown>,
): Array<{ payload: Uint8Array; covers: Coverage; uncovered?: string[] }> {
  const whole = signedPayload(card, 'whole').payload
  const v1 = signedPayload(card, 'a2a-1.0-fields')
  const forms: Array<[string, Coverage, string[]?]> = [
    [whole, 'whole'],
    [literalPayload(card), 'whole'],
    [v1.payload, 'a2a-1.0-fields', v1.uncovered],
    [asciiEscaped(whole), 'whole'],
    [asciiEscaped(v1.payload), 'a2a-1.0-fields', v1.uncovered],
  ]
  const seen = new Set<string>()
  return forms.flatMap(([text, covers, uncovered]) => {
    if (seen.has(text)) return []
    seen.add(text)
    return [{ payload: new TextEncoder().encode(text), covers, ...(uncovered?.length && { uncovered }) }]
  })
}

async function keyName(jwk: JWK): Promise<{ kid?: string; thumbprint: string }> {
  return { ...(jwk.kid !== undefined && { kid: jwk.kid }), thumbprint: await calculateJwkThumbprint(jwk) }
}

const JWKS_HINT = 'pass --jwks <file-or-url> with the public keys of the agent, from a source you trust'

/** The findings a report adds to the card's: a warning per unverifiable signature, an error per invalid one. */
export function signatureFindings(report: SignatureReport, keySet: KeySet | undefined): Finding[] {
  return report.signatures.flatMap((check): Finding[] => {
    const signed = `${check.alg ?? 'a'} signature${check.kid !== undefined ? ` with kid "${check.kid}"` : ''}`
    if (check.outcome === 'unverifiable')
      return [
        {
          level: 'warning',
          path: check.path,
          message: `unverifiable: ${signed}, ${check.reason}`,
          hint: keySet ? `add the key with kid "${check.kid}" to ${keySet.source}, from a source you trust` : JWKS_HINT,
        },
      ]
    if (check.outcome === 'invalid')
      return [
        {
          level: 'error',
          path: check.path,
          message: `invalid: ${signed}: ${check.reason}${check.key ? ` (key ${describeKey(check.key)})` : ''}`,
          hint: 'do not trust this card: fetch it again from the agent, or ask its operator which key signs it',
        },
      ]
    return []
  })
}

/** The lines that say what the report found beside the findings: the verified signatures, or that none is there. */
export function signatureLines(report: SignatureReport, keySet: KeySet | undefined): string[] {
  if (report.outcome === 'unsigned') return ['note    signatures: unsigned (signing is optional)']
  return report.signatures.flatMap((check) => {
    if (check.outcome !== 'verified' || !check.key) return []
    const covers =
      check.covers === 'whole'
        ? 'covers every field'
        : `covers the A2A v1.0 fields${check.uncovered ? `, not ${check.uncovered.join(', ')}` : ''}`
    const by = `key ${describeKey(check.key)} of ${keySet?.source}`
    return [`verified ${check.path}: ${check.alg} signature with kid "${check.kid}" verified by ${by}; ${covers}`]
  })
}

const describeKey = (key: { kid?: string; thumbprint: string }) =>
  key.kid === key.thumbprint
    ? `"${key.kid}" (its thumbprint)`
    : `${key.kid !== undefined ? `"${key.kid}" ` : ''}(thumbprint ${key.thumbprint})`
