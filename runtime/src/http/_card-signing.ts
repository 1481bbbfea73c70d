import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto'
import type { JWK } from 'jose'
import { type Coverage, signedPayload } from '../_card-signature.js'
import { isObject } from '../_is-object.js'
import { ConfigurationError } from '../errors.js'
import { type Env, envValue } from '../settings.js'
import { loadJose } from './_jose.js'
import type { A2AAppOptions } from './app-options.js'

/** The algorithm each supported curve signs with; RSA keys sign RS256 and Ed25519 keys EdDSA. */
const EC_ALGORITHMS: Record<string, string> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' }
const SUPPORTED = 'RSA (2048 bits or more), EC P-256, P-384 or P-521, or Ed25519'

/**
 * Signs the A2A cards with one private key (A2A v1.0 §8.4): a JWS with a detached payload, the card's canonical
 * form, in the card's `signatures`. The key is read and checked when the app is made; the signing itself is
 * asynchronous (Web Crypto), done once per card shape and address by the caller's cache.
 */
export class CardSigner {
  readonly #key: KeyObject
  readonly #keyId: string | undefined
  readonly algorithm: string
  #ready: Promise<{ key: CryptoKey | Uint8Array; kid: string }> | undefined

  constructor(key: KeyObject, algorithm: string, keyId: string | undefined) {
    this.#key = key
    this.algorithm = algorithm
    this.#keyId = keyId
  }

  /** The card with one more signature; `coverage` says which of its fields the signature covers. */
  async sign(card: Record<string, unknown>, coverage: Coverage): Promise<Record<string, unknown>> {
    const { key, kid } = await this.#prepared()
    const { payload } = signedPayload(card, coverage)
    const { FlattenedSign } = await loadJose()
    const jws = await new FlattenedSign(new TextEncoder().encode(payload))
      .setProtectedHeader({ alg: this.algorithm, typ: 'JOSE', kid })
      .sign(key)
    const signatures = Array.isArray(card.signatures) ? card.signatures : []
    return { ...card, signatures: [...signatures, { protected: jws.protected, signature: jws.signature }] }
  }

  /** The Web Crypto key and the `kid`, made on first use and kept. */
  #prepared(): Promise<{ key: CryptoKey | Uint8Array; kid: string }> {
    this.#ready ??= (async () => {
      const { calculateJwkThumbprint, importJWK } = await loadJose()
      const key = await importJWK(this.#key.export({ format: 'jwk' }) as JWK, this.algorithm)
      const kid = this.#keyId ?? (await calculateJwkThumbprint(createPublicKey(this.#key).export({ format: 'jwk' })))
      return { key, kid }
    })()
    return this.#ready
  }
}

/**
 * The signer the `cardSigning` option, else `A2A_CARD_SIGNING_KEY` (a file), asks for; undefined when neither is
 * set. A key that cannot sign is a ConfigurationError naming the setting, so the app does not start.
 */
export function readCardSigning(option: A2AAppOptions['cardSigning'], env: Env): CardSigner | undefined {
  if (option !== undefined) {
    if (!isObject(option) || typeof option.key !== 'string' || !option.key.trim())
      throw new ConfigurationError('cardSigning.key must be the text of a private key (PEM or JWK)')
    if (option.keyId !== undefined && (typeof option.keyId !== 'string' || !option.keyId.trim()))
      throw new ConfigurationError(`cardSigning.keyId must be a non-empty string (got ${JSON.stringify(option.keyId)})`)
    return signerOf(option.key, option.keyId, (reason) => `cardSigning.key: ${reason}`)
  }
  const path = envValue(env, 'A2A_CARD_SIGNING_KEY')?.trim()
  if (path === undefined) return undefined
  const problem = (reason: string) => `cardSigning.key (A2A_CARD_SIGNING_KEY): ${path}: ${reason}`
  return signerOf(readKeyFile(path, problem), undefined, problem)
}

function readKeyFile(path: string, problem: (reason: string) => string): string {
  // Through getBuiltinModule: the app also runs where there is no file system (Workers), with the option.
  const fs = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.(
    'node:fs',
  ) as typeof import('node:fs') | undefined
  if (!fs) throw new ConfigurationError(problem('no file system here: pass the key itself as cardSigning.key'))
  try {
    return fs.readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new ConfigurationError(
      problem(
        code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a folder, not a key file' : `unreadable (${code})`,
      ),
    )
  }
}

function signerOf(text: string, keyId: string | undefined, problem: (reason: string) => string): CardSigner {
  const { key, kid } = privateKeyOf(text.trim(), problem)
  const algorithm = algorithmOf(key)
  if (!algorithm) throw new ConfigurationError(problem(`a key card signing does not support; use ${SUPPORTED}`))
  return new CardSigner(key, algorithm, keyId ?? kid)
}

/** The private key in the text, PEM or JWK, and the JWK's own `kid`. */
function privateKeyOf(text: string, problem: (reason: string) => string): { key: KeyObject; kid?: string } {
  const refuse = (reason: string) => new ConfigurationError(problem(reason))
  if (text.startsWith('{')) {
    let jwk: unknown
    try {
      jwk = JSON.parse(text)
    } catch {
      throw refuse('not valid JSON (a JWK is one JSON object)')
    }
    if (!isObject(jwk)) throw refuse('not a JWK (a JSON object with "kty")')
    if (Array.isArray(jwk.keys)) throw refuse('a JWK set: give the one private key to sign with')
    if (jwk.kty === 'oct')
      throw refuse('a symmetric key (kty "oct"): cards are signed with a private key, verified with its public key')
    if (jwk.d === undefined) throw refuse('a public key (no "d"): give the private key')
    try {
      return {
        key: createPrivateKey({ key: jwk, format: 'jwk' }),
        ...(typeof jwk.kid === 'string' && { kid: jwk.kid }),
      }
    } catch {
      throw refuse(`not a private key Node.js can read (${SUPPORTED})`)
    }
  }
  if (/-----BEGIN (RSA |EC )?PUBLIC KEY-----/.test(text)) throw refuse('a public key: give the private key')
  if (text.includes('-----BEGIN CERTIFICATE-----')) throw refuse('a certificate: give the private key')
  if (text.includes('-----BEGIN ENCRYPTED PRIVATE KEY-----'))
    throw refuse('an encrypted key: decrypt it first (openssl pkey -in <file> -out <plain file>)')
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text))
    throw refuse('neither a PEM private key (-----BEGIN PRIVATE KEY-----) nor a JWK (a JSON object)')
  try {
    return { key: createPrivateKey(text) }
  } catch {
    throw refuse('a PEM block that is not a readable private key')
  }
}

function algorithmOf(key: KeyObject): string | undefined {
  const details = key.asymmetricKeyDetails
  if (key.asymmetricKeyType === 'rsa') return (details?.modulusLength ?? 0) >= 2048 ? 'RS256' : undefined
  if (key.asymmetricKeyType === 'ec') return EC_ALGORITHMS[details?.namedCurve ?? '']
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA'
  return undefined
}
