import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { ConfigurationError } from '../errors.js'
import { type Env, envValue } from '../settings.js'

/**
 * Push configs sealed at rest: a shared store (Redis, PostgreSQL) keeps each webhook's URL, token and credentials,
 * which whoever reads the database (a backup, a replica, a dump attached to a ticket) would otherwise hold in
 * plain text. With a key, each config is sealed with AES-256-GCM (node:crypto) under a random 12-byte IV, so the
 * stored value tells nothing of the config and any change to it is refused. Without a key, configs are stored as
 * their JSON, as before; plain JSON stays readable with a key too, so data written before the key was set keeps
 * working (and is sealed when it is next saved).
 *
 * Stored form: `sealed:v1:<base64 of iv | ciphertext | tag>`. `v1` names the scheme (AES-256-GCM, one 32-byte key,
 * 12-byte IV, 16-byte tag): a later scheme (several keys for rotation, say) gets another version, and a value of a
 * version this runtime does not know is refused rather than read as something else.
 */

const PREFIX = 'sealed:'
const VERSION = 'v1'
const ALGORITHM = 'aes-256-gcm'
const KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16
const VARIABLE = 'A2A_PUSH_CONFIG_KEY'

/** `json` as a store keeps it: sealed with `key`, or as it is without one. */
export function sealConfig(json: string, key: Uint8Array | undefined): string {
  if (!key) return json
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv(ALGORITHM, key, iv)
  const sealed = Buffer.concat([iv, cipher.update(json, 'utf8'), cipher.final(), cipher.getAuthTag()])
  return `${PREFIX}${VERSION}:${sealed.toString('base64')}`
}

/**
 * The config's JSON from what a store kept: opened with `key` when it is sealed, as it is when it is not. A
 * sealed value without a key, with another key, or altered is a ConfigurationError saying so (one line).
 */
export function openConfig(stored: string, key: Uint8Array | undefined): string {
  if (!stored.startsWith(PREFIX)) return stored
  const colon = stored.indexOf(':', PREFIX.length)
  const version = stored.slice(PREFIX.length, colon === -1 ? undefined : colon)
  if (version !== VERSION)
    throw new ConfigurationError(
      `A push config in the store is sealed with a scheme this runtime does not know (${JSON.stringify(version.slice(0, 16))}); it was written by a newer version`,
    )
  if (!key)
    throw new ConfigurationError(
      `A push config in the store is sealed, and no key is set to open it: set ${VARIABLE} (pushConfigKey) to the key it was sealed with`,
    )
  const sealed = Buffer.from(stored.slice(PREFIX.length + VERSION.length + 1), 'base64')
  if (sealed.length < IV_BYTES + TAG_BYTES) throw notOpened()
  const decipher = createDecipheriv(ALGORITHM, key, sealed.subarray(0, IV_BYTES))
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES))
  try {
    return Buffer.concat([
      decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8')
  } catch {
    // GCM tells a wrong key from an altered value no better than this: neither checks out.
    throw notOpened()
  }
}

const notOpened = () =>
  new ConfigurationError(
    `A push config in the store could not be opened: ${VARIABLE} (pushConfigKey) is not the key it was sealed with, or the stored value was altered`,
  )

/**
 * The key push configs are sealed with: the store's `pushConfigKey` option, else `A2A_PUSH_CONFIG_KEY`; each the
 * base64 of 32 bytes (`openssl rand -base64 32`), the option raw bytes too. `undefined`: none (stored in plain).
 * A key of another length is a ConfigurationError naming both and the length, never the key.
 */
export function readPushConfigKey(option: string | Uint8Array | undefined, env: Env): Uint8Array | undefined {
  if (option instanceof Uint8Array) return checkedLength(new Uint8Array(option), 'bytes')
  const text = (option ?? envValue(env, VARIABLE))?.trim()
  if (text === undefined || text === '') return undefined
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text))
    throw new ConfigurationError(
      `pushConfigKey (${VARIABLE}) must be ${KEY_BYTES} bytes in base64 (openssl rand -base64 32); it is not base64`,
    )
  return checkedLength(new Uint8Array(Buffer.from(text, 'base64')), 'bytes once decoded')
}

function checkedLength(key: Uint8Array, what: string): Uint8Array {
  if (key.length !== KEY_BYTES)
    throw new ConfigurationError(
      `pushConfigKey (${VARIABLE}) must be ${KEY_BYTES} bytes in base64 (openssl rand -base64 32); got ${key.length} ${what}`,
    )
  return key
}
