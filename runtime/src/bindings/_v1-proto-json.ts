import { InvalidParamsError } from '../errors.js'

type Json = Record<string, unknown>

/**
 * Field names in A2A v1.0 params. ProtoJSON writes a field in lowerCamelCase (`historyLength`), and its parsers
 * must also accept the field's name in the .proto file (`history_length`): the official SDK servers do, and the
 * conformance kit and some clients send those. The binding reads both spellings in place, nothing is copied or
 * renamed; the caller reads the two properties by name (`field(config.historyLength, config.history_length, …)`),
 * as a read by a computed name costs a lookup each (a few hundred ns per message/send), a named read next to nothing.
 */

// Computed once per field name (for errors, and the name a client gave a field under).
const protoNames = new Map<string, string>()

/** The .proto name of a lowerCamelCase JSON name: `historyLength` → `history_length`. */
function protoName(jsonName: string): string {
  let name = protoNames.get(jsonName)
  if (name === undefined) {
    name = jsonName.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)
    protoNames.set(jsonName, name)
  }
  return name
}

/**
 * The value of the field `jsonName` (at `path`, such as `params.configuration`), given as `value` under that name
 * and as `protoValue` under its .proto name; undefined when under neither. Both with different values is a
 * request that contradicts itself: -32602 naming both.
 */
export function field(value: unknown, protoValue: unknown, path: string, jsonName: string): unknown {
  if (protoValue === undefined) return value
  if (value === undefined || sameJson(value, protoValue, 0)) return protoValue
  throw new InvalidParamsError(
    `\`${path}.${jsonName}\` and \`${path}.${protoName(jsonName)}\` are the same field with different values; give it once`,
  )
}

/**
 * The name a field that `field` found was given under, for an error about its value: `value` is the one under
 * `jsonName`.
 */
export const givenName = (value: unknown, jsonName: string): string =>
  value === undefined ? protoName(jsonName) : jsonName

/** Deeper than any value the binding accepts (64 levels): two values this deep count as different, and are refused. */
const MAX_DEPTH = 64

/** Whether two parsed JSON values are equal: the same primitives, or arrays and objects with equal members. */
function sameJson(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || depth >= MAX_DEPTH) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i], depth + 1)) return false
    return true
  }
  if (Array.isArray(b)) return false
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  for (const key of keys)
    if (!Object.hasOwn(b, key) || !sameJson((a as Json)[key], (b as Json)[key], depth + 1)) return false
  return true
}
