import type { DurableObjectStorageLike } from 'a2a-runtime/workers'

/** Cloudflare's limits on a Durable Object's key-value storage, which the stand-in enforces as the platform does. */
const MAX_KEYS_PER_CALL = 128
const MAX_VALUE_BYTES = 128 * 1024

/**
 * A Durable Object's storage as the store sees it, in memory, for the contract suite on Node: values are copied
 * in and out (structured clone), `list` is in key order, and a call past the platform's limits (keys per call,
 * bytes per value) throws as the platform does. The real storage is covered by the Workers behaviour suite.
 */
export class DurableObjectStorageStandIn implements DurableObjectStorageLike {
  readonly #values = new Map<string, unknown>()
  /** Puts and deletes done, for tests that count them. */
  calls = 0

  async list<T = unknown>({ prefix }: { prefix: string }): Promise<Map<string, T>> {
    const keys = [...this.#values.keys()].filter((key) => key.startsWith(prefix)).sort()
    return new Map(keys.map((key) => [key, structuredClone(this.#values.get(key)) as T]))
  }

  async put<T>(entries: Record<string, T>): Promise<void> {
    const pairs = Object.entries(entries)
    if (pairs.length > MAX_KEYS_PER_CALL)
      throw new RangeError(`put: ${pairs.length} keys in one call (at most ${MAX_KEYS_PER_CALL})`)
    for (const [key, value] of pairs) {
      const bytes =
        typeof value === 'string' ? Buffer.byteLength(value, 'utf16le') : Buffer.byteLength(JSON.stringify(value))
      if (bytes > MAX_VALUE_BYTES)
        throw new RangeError(`put: the value of ${key} is ${bytes} bytes (at most ${MAX_VALUE_BYTES})`)
    }
    this.calls++
    for (const [key, value] of pairs) this.#values.set(key, structuredClone(value))
  }

  async delete(keys: string[]): Promise<number> {
    if (keys.length > MAX_KEYS_PER_CALL)
      throw new RangeError(`delete: ${keys.length} keys in one call (at most ${MAX_KEYS_PER_CALL})`)
    this.calls++
    let deleted = 0
    for (const key of keys) if (this.#values.delete(key)) deleted++
    return deleted
  }

  get keys(): string[] {
    return [...this.#values.keys()]
  }
}
