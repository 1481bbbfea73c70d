import { createHash } from 'node:crypto'

/** How many verified tokens are kept: a few hundred callers each with a token or two, a few KB each. */
const MAX_ENTRIES = 1_000
/**
 * How long past its verification a token is served from here at most, however late its `exp`: a key the issuer
 * withdraws stops working within the age of the key set plus this.
 */
const MAX_AGE_MS = 60_000

/**
 * Tokens already verified, so a caller presenting the same one request after request pays a hash and a lookup
 * instead of a signature check (tens of microseconds for RS256, more for ES256). Only tokens that passed every
 * check are kept, never past their `exp`; the key is the token's SHA-256, so a lookup compares digests, not the
 * token's text.
 */
export class VerifiedTokenCache<T> {
  readonly #entries = new Map<string, { value: T; expiresAtMs: number }>()

  constructor(private readonly maxEntries = MAX_ENTRIES) {}

  get(token: string): T | undefined {
    const key = digest(token)
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    if (Date.now() < entry.expiresAtMs) return entry.value
    this.#entries.delete(key)
    return undefined
  }

  /** `expSeconds`: the token's `exp` (a NumericDate); it is never served at or after that second. */
  set(token: string, value: T, expSeconds: number): void {
    const expiresAtMs = Math.min(expSeconds * 1000, Date.now() + MAX_AGE_MS)
    if (!(expiresAtMs > Date.now())) return
    const key = digest(token)
    this.#entries.delete(key)
    // A Map iterates in insertion order: the first key is the oldest entry.
    while (this.#entries.size > 0 && this.#entries.size >= this.maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value!)
    }
    if (this.maxEntries < 1) return
    this.#entries.set(key, { value, expiresAtMs })
  }

  get size(): number {
    return this.#entries.size
  }
}

const digest = (token: string): string => createHash('sha256').update(token).digest('base64')
