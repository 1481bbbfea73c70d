import type { Artifact, Message, Part } from './types.js'

/**
 * What a value costs on the heap, counted without writing it anywhere: the budgets (maxTaskBytes, maxRunningBytes,
 * the stores' maxBytes) count memory, not JSON text. JSON text is a poor measure of memory: 1 MB of `[{},{},…]`
 * parses to about 21 MB of objects, while 1 MB of text is 1 MB. The prices are V8's on a 64-bit machine without
 * pointer compression (how Node ships), measured on values `JSON.parse` builds, rounded up:
 * test/runtime/heap-bytes.test.ts holds them to the heap a process really spends, shape by shape.
 *
 * Each value pays for itself; its slot in the array or object that holds it is paid by that container. A value
 * JSON cannot hold (a BigInt, a cycle, or nesting deeper than a wire message may have) counts as endless: no task
 * can take it.
 */

/** A pointer in an object or array. */
const SLOT = 8
/** A string's header with its rounding to 8 bytes; its characters take one byte each, or two past Latin-1. */
const STRING = 24
/** A number that is not a small integer is boxed. */
const HEAP_NUMBER = 16
/** An array, and the store of its elements when it has any. */
const ARRAY = 32
const ELEMENTS = 16
/** An object's header; an empty one has room for four fields. */
const OBJECT = 24
const EMPTY_OBJECT = 56
/**
 * A key of an object whose shape (its keys in their order) the walk has not met: V8 gives each new shape a hidden
 * class of its own per key (its map and descriptors; the key's string too, the first time), and a large object a
 * hash table entry per key. Objects of one shape share all of that, so a shape met before pays its slots only; a
 * shape is its whole key sequence, as the same keys in another order make other hidden classes.
 */
const NEW_KEY = 160
const LARGE_OBJECT_KEYS = 32
/** Deeper than the 64 levels a wire message may have (and than any cycle can hide). */
const MAX_DEPTH = 100
/** Small integers live in their slot. */
const SMALL_INTEGER = 2 ** 30

/** A character past Latin-1 makes V8 store the whole string with two bytes a character. */
const WIDE = /[\u0100-\uffff]/

/** The heap a string takes. The test costs nothing on a string V8 stores one byte a character. */
export function stringHeapBytes(text: string): number {
  const length = text.length
  // The empty string and those of one Latin-1 character are shared ones V8 keeps anyway.
  if (length <= 1) return length === 0 || text.charCodeAt(0) <= 0xff ? 0 : STRING + 2
  return STRING + (WIDE.test(text) ? 2 * length : length)
}

/** The heap a free-form JSON value takes (`data`, `metadata`, what an agent hands over). */
export function heapBytes(value: unknown): number {
  return new Walk().value(value, 0)
}

// The parts and messages the runtime builds have known fields: counted field by field, without a walk.
/** A message object with every field of `Message`; its kind and role are shared strings. */
const MESSAGE = OBJECT + 7 * SLOT
/** A part object with every field of its kind. */
const TEXT_PART = OBJECT + 4 * SLOT
const FILE_PART = OBJECT + 3 * SLOT + OBJECT + 4 * SLOT
const DATA_PART = OBJECT + 4 * SLOT
/** An id the server makes (36 characters). */
export const ID_HEAP_BYTES = STRING + 36

/** The heap of a message with the fields of `Message` and parts of the fields of their kind. */
export function messageHeapBytes(message: Message): number {
  let bytes = MESSAGE + stringHeapBytes(message.messageId) + partsHeapBytes(message.parts)
  if (message.contextId !== undefined) bytes += stringHeapBytes(message.contextId)
  if (message.taskId !== undefined) bytes += stringHeapBytes(message.taskId)
  if (message.metadata !== undefined) bytes += heapBytes(message.metadata)
  return bytes
}

/** The heap of an array of parts and the parts. */
export function partsHeapBytes(parts: Part[]): number {
  let bytes = arrayBytes(parts.length)
  for (let i = 0; i < parts.length; i++) bytes += partHeapBytes(parts[i]!)
  return bytes
}

function partHeapBytes(part: Part): number {
  let bytes: number
  switch (part.kind) {
    case 'text':
      bytes = TEXT_PART + stringHeapBytes(part.text)
      break
    case 'file': {
      const { file } = part
      bytes =
        FILE_PART +
        optionalString(file.bytes) +
        optionalString(file.uri) +
        optionalString(file.name) +
        optionalString(file.mimeType)
      break
    }
    case 'data':
      bytes = DATA_PART + heapBytes(part.data)
      break
    default:
      // Not a part of the data model (an agent's mistake): whatever it holds.
      return heapBytes(part)
  }
  if (part.kind !== 'file' && part.mediaType !== undefined) bytes += stringHeapBytes(part.mediaType)
  if (part.metadata !== undefined) bytes += heapBytes(part.metadata)
  return bytes
}

/** The heap of `[{ kind: 'text', text }]`, the parts the runtime makes of an agent's string. */
function textPartsHeapBytes(text: string): number {
  return arrayBytes(1) + TEXT_PART + stringHeapBytes(text)
}

/** An artifact object with every field of `Artifact`. */
const ARTIFACT = OBJECT + 6 * SLOT

/** The heap of an artifact with the fields of `Artifact` and parts of the fields of their kind. */
export function artifactHeapBytes(artifact: Artifact): number {
  let bytes = ARTIFACT + stringHeapBytes(artifact.artifactId) + partsHeapBytes(artifact.parts)
  if (artifact.name !== undefined) bytes += stringHeapBytes(artifact.name)
  if (artifact.description !== undefined) bytes += stringHeapBytes(artifact.description)
  if (artifact.metadata !== undefined) bytes += heapBytes(artifact.metadata)
  return bytes
}

/** The heap of an artifact holding one text part, with the server's id. */
export function textArtifactHeapBytes(text: string): number {
  return ARTIFACT + ID_HEAP_BYTES + textPartsHeapBytes(text)
}

/**
 * What `text` adds when it is joined to the text part before it (`previous + text`): the joined string is a pair
 * of the two (a small object) until V8 flattens it into one, which is never more than what the pairs held.
 */
const JOINED_STRING = 32

export function joinedTextHeapBytes(text: string): number {
  return JOINED_STRING + stringHeapBytes(text)
}

function arrayBytes(length: number): number {
  return length === 0 ? ARRAY : ARRAY + ELEMENTS + length * SLOT
}

function optionalString(text: string | undefined): number {
  return typeof text === 'string' ? stringHeapBytes(text) : 0
}

/** One count over a value: remembers the shapes of the objects it met, which later objects of that shape share. */
class Walk {
  #shapes: Set<string> | undefined

  value(value: unknown, depth: number): number {
    switch (typeof value) {
      case 'string':
        return stringHeapBytes(value)
      case 'number':
        return Number.isInteger(value) && value < SMALL_INTEGER && value >= -SMALL_INTEGER ? 0 : HEAP_NUMBER
      case 'object': {
        if (value === null) return 0
        if (depth > MAX_DEPTH) return Number.POSITIVE_INFINITY
        if (Array.isArray(value)) {
          let bytes = arrayBytes(value.length)
          for (let i = 0; i < value.length; i++) bytes += this.value(value[i], depth + 1)
          return bytes
        }
        return this.#object(value as Record<string, unknown>, depth)
      }
      case 'bigint':
        return Number.POSITIVE_INFINITY
      default:
        // A boolean or undefined lives in its slot; a function or symbol is the agent's own and shared.
        return 0
    }
  }

  #object(value: Record<string, unknown>, depth: number): number {
    let bytes = OBJECT
    let fields = 0
    let keyBytes = 0
    let shape = ''
    // Own keys only: parsed JSON and object literals have no enumerable inherited ones worth counting.
    for (const key in value) {
      fields++
      bytes += SLOT + this.value(value[key], depth + 1)
      keyBytes += NEW_KEY + key.length
      if (fields <= LARGE_OBJECT_KEYS) shape += `${key}\u0000`
    }
    if (fields === 0) return EMPTY_OBJECT
    // A large object pays for every key (and is not remembered: a walk of a huge object holds no copy of its keys).
    return fields > LARGE_OBJECT_KEYS || !this.#met(shape) ? bytes + keyBytes : bytes
  }

  /** Whether the walk met this shape before (and remembers it from now on). */
  #met(shape: string): boolean {
    this.#shapes ??= new Set()
    if (this.#shapes.has(shape)) return true
    this.#shapes.add(shape)
    return false
  }
}
