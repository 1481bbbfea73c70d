import { createHash } from 'node:crypto'

/** How many verified tokens are kept: a few hundred callers each with a token or two, a few KB each. */
const MAX_ENTRIES = 1_000
/**
 * Bytes of memory the kept tokens may take, their claims as the heap holds them: an issuer that signs large tokens
 * (many groups, say) fills this before the count.
 */
const MAX_BYTES = 8 * 1024 * 1024
/** A kept entry without its value: the Map's slot, the digest and the entry object. */
const ENTRY_BYTES = 200
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
  readonly #entries = new Map<string, { value: T; expiresAtMs: number; bytes: number }>()
  #bytes = 0

  constructor(
    private readonly maxEntries = MAX_ENTRIES,
    private readonly maxBytes = MAX_BYTES,
  ) {}

  get(token: string): T | undefined {
    const key = digest(token)
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    if (Date.now() < entry.expiresAtMs) return entry.value
    this.#delete(key)
    return undefined
  }

  /**
   * `expSeconds`: the token's `exp` (a NumericDate); it is never served at or after that second. `valueBytes`: what
   * the value holds in memory (its claims).
   */
  set(token: string, value: T, expSeconds: number, valueBytes: number): void {
    const expiresAtMs = Math.min(expSeconds * 1000, Date.now() + MAX_AGE_MS)
    if (!(expiresAtMs > Date.now())) return
    const key = digest(token)
    this.#delete(key)
    const bytes = valueBytes + ENTRY_BYTES
    if (this.maxEntries < 1 || bytes > this.maxBytes) return
    // A Map iterates in insertion order: the first key is the oldest entry.
    while (this.#entries.size >= this.maxEntries || this.#bytes + bytes > this.maxBytes)
      this.#delete(this.#entries.keys().next().value!)
    this.#entries.set(key, { value, expiresAtMs, bytes })
    this.#bytes += bytes
  }

  /** Bytes the kept tokens take, as counted. */
  get bytes(): number {
    return this.#bytes
  }

  #delete(key: string): void {
    const entry = this.#entries.get(key)
    if (!entry) return
    this.#entries.delete(key)
    this.#bytes -= entry.bytes
  }

  get size(): number {
    return this.#entries.size
  }
}

const digest = (token: string): string => createHash('sha256').update(token).digest('base64')
