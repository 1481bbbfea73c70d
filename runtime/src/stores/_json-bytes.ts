/**
 * About how many bytes `value` takes as JSON (UTF-8), without building the JSON: strings by their UTF-8 length
 * plus quotes (escapes not counted), numbers as 8, the punctuation of objects and arrays. It walks the value
 * once, so a long text costs one length read, not a copy; stores use it to count what they hold in bytes.
 */
export function jsonBytes(value: unknown): number {
  return measure(value, 0)
}

// Wire input is at most 64 levels deep; an agent's own objects could be deeper (or cyclic): past this depth
// a value counts as a small constant, so a cycle cannot hang the count.
const MAX_DEPTH = 100
const DEEP_VALUE_BYTES = 16

function measure(value: unknown, depth: number): number {
  switch (typeof value) {
    case 'string':
      return stringBytes(value)
    case 'number':
    case 'bigint':
      return 8
    case 'boolean':
      return 5
    case 'object':
      break
    default:
      return 0 // undefined and functions are left out of JSON
  }
  if (value === null) return 4
  if (depth >= MAX_DEPTH) return DEEP_VALUE_BYTES
  let bytes = 2
  if (Array.isArray(value)) {
    for (const item of value) bytes += measure(item, depth + 1) + 1
    return bytes
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue
    bytes += stringBytes(key) + 2 + measure((value as Record<string, unknown>)[key], depth + 1)
  }
  return bytes
}

function stringBytes(text: string): number {
  // UTF-8, not `length`: a text of characters outside Latin-1 takes two bytes each in memory.
  return Buffer.byteLength(text, 'utf8') + 2
}
