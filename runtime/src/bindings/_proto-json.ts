import { InvalidParamsError } from '../errors.js'

/**
 * Field names in A2A v1.0 params. ProtoJSON writes a field in lowerCamelCase (`historyLength`), and its parsers
 * must also accept the field's name in the .proto file (`history_length`): the official SDK servers do, and the
 * conformance kit and some clients send those. The binding reads a field by its JSON name through `field`, which
 * looks at both spellings in place: params are read once per request, so nothing is copied or renamed.
 */

type Json = Record<string, unknown>

// Computed once per field name: a request reads the same few names again and again.
const protoNames = new Map<string, string>()

/** The .proto name of a lowerCamelCase JSON name: `historyLength` → `history_length`. */
export function protoName(jsonName: string): string {
  let name = protoNames.get(jsonName)
  if (name === undefined) {
    name = jsonName.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)
    protoNames.set(jsonName, name)
  }
  return name
}

/**
 * The value of the field `jsonName` of `object`, given under either name (undefined when under neither). Both
 * names with different values is a request that contradicts itself: -32602 naming both (`path` is where
 * `object` sits, such as `params.configuration`).
 */
export function field(object: Json, jsonName: string, path: string): unknown {
  const value = object[jsonName]
  const other = object[protoName(jsonName)]
  if (other === undefined) return value
  if (value === undefined || sameJson(value, other, 0)) return other
  throw new InvalidParamsError(`\`${path}.${jsonName}\` and \`${path}.${protoName(jsonName)}\` are the same field with different values; give it once`)
}

/** The name the client gave the field under, for an error about its value: the JSON name unless only the .proto one is there. */
export function givenName(object: Json, jsonName: string): string {
  return object[jsonName] === undefined && object[protoName(jsonName)] !== undefined ? protoName(jsonName) : jsonName
}

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
  for (const key of keys) if (!Object.hasOwn(b, key) || !sameJson((a as Json)[key], (b as Json)[key], depth + 1)) return false
  return true
}
