import { randomFillSync } from 'node:crypto'

// Node's randomUUID() returns a rope of ~20 concatenated pieces (about 490 bytes on the heap); a task keeps
// three ids for as long as it is retained, which made ids most of a stored task's memory. These ids are the
// same random version-4 UUIDs, written as one flat 36-byte string.

const POOL_BYTES = 16 * 256
const pool = Buffer.allocUnsafe(POOL_BYTES)
let offset = POOL_BYTES
// latin1Slice is what toString('latin1') calls, minus its argument checks.
const out = Buffer.allocUnsafe(36) as Buffer & { latin1Slice(start: number, end: number): string }
const HEX = Buffer.from('0123456789abcdef')

/** A random (version 4) UUID, as `crypto.randomUUID()` gives, stored compactly. */
export function newId(): string {
  if (offset === POOL_BYTES) {
    randomFillSync(pool)
    offset = 0
  }
  let at = 0
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) out[at++] = 0x2d // '-'
    let byte = pool[offset + i]!
    if (i === 6)
      byte = (byte & 0x0f) | 0x40 // version 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80 // RFC 4122 variant
    out[at++] = HEX[byte >> 4]!
    out[at++] = HEX[byte & 0x0f]!
  }
  offset += 16
  return out.latin1Slice(0, 36)
}
