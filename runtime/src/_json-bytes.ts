import type { Message, Part } from './types.js'

/**
 * The UTF-8 length of `value` as JSON, as `JSON.stringify` would write it, counted without writing it: sizing each
 * message and artifact must cost the hot path next to nothing. A value JSON cannot hold (a cycle, a BigInt), or
 * nested deeper than a wire message may be, counts as endless: no task can take it.
 */
export function jsonBytes(value: unknown): number {
  return valueBytes(value, 0) ?? 0
}

// The text artifacts the runtime builds from a string (`task.artifact('…')`) have a known shape: counted without
// a walk, as the fixed JSON around their id and text.
const TEXT_PARTS_FIXED = '[{"kind":"text","text":}]'.length
const TEXT_CHUNK_FIXED = '{"artifactId":,"parts":,"lastChunk":}'.length

/** The bytes of `[{"kind":"text","text":<text>}]`, as `jsonBytes` counts them. */
export function textPartsBytes(text: string): number {
  return TEXT_PARTS_FIXED + stringBytes(text)
}

/** The bytes of `{"artifactId":<id>,"parts":[{"kind":"text","text":<text>}],"lastChunk":<bool>}`, as `jsonBytes` counts them. */
export function textChunkBytes(artifactId: string, text: string, lastChunk: boolean): number {
  return TEXT_CHUNK_FIXED + stringBytes(artifactId) + textPartsBytes(text) + (lastChunk ? 4 : 5)
}

// A message as the runtime holds it (each binding builds the user's from the known fields only) has the fields
// of `Message` and parts of the fields of their kind: counted field by field, without the walk over its keys that
// weighed a few per cent of message/send.
const MESSAGE_FIXED = '{"kind":"message","messageId":,"role":,"parts":}'.length
const CONTEXT_ID_FIELD = ',"contextId":'.length
const TASK_ID_FIELD = ',"taskId":'.length
const METADATA_FIELD = ',"metadata":'.length
const MEDIA_TYPE_FIELD = ',"mediaType":'.length
const TEXT_PART_FIXED = '{"kind":"text","text":}'.length

/** The bytes of a message with only the fields of `Message` (and text parts with only theirs), as `jsonBytes` counts them. */
export function messageBytes(message: Message): number {
  let bytes = MESSAGE_FIXED + stringBytes(message.messageId) + stringBytes(message.role) + partsBytes(message.parts)
  if (message.contextId !== undefined) bytes += CONTEXT_ID_FIELD + stringBytes(message.contextId)
  if (message.taskId !== undefined) bytes += TASK_ID_FIELD + stringBytes(message.taskId)
  if (message.metadata !== undefined) bytes += METADATA_FIELD + jsonBytes(message.metadata)
  return bytes
}

function partsBytes(parts: Part[]): number {
  let bytes = parts.length === 0 ? 2 : parts.length + 1
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (part.kind !== 'text') bytes += jsonBytes(part)
    else {
      bytes += TEXT_PART_FIXED + stringBytes(part.text)
      if (part.mediaType !== undefined) bytes += MEDIA_TYPE_FIELD + stringBytes(part.mediaType)
      if (part.metadata !== undefined) bytes += METADATA_FIELD + jsonBytes(part.metadata)
    }
  }
  return bytes
}

/** Deeper than the 64 levels a wire message may have (and than any cycle can hide). */
const MAX_DEPTH = 100
/** Longer strings are measured by the engine's own JSON writer, faster per character than a loop here. */
const SHORT_STRING = 128

/** `undefined` for what JSON leaves out (undefined, a function, a symbol). */
function valueBytes(value: unknown, depth: number): number | undefined {
  switch (typeof value) {
    case 'string':
      return stringBytes(value)
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4
    case 'boolean':
      return value ? 4 : 5
    case 'object':
      if (value === null) return 4
      if (depth > MAX_DEPTH) return Number.POSITIVE_INFINITY
      if (Array.isArray(value)) {
        let bytes = value.length === 0 ? 2 : value.length + 1
        for (let i = 0; i < value.length; i++) bytes += valueBytes(value[i], depth + 1) ?? 4
        return bytes
      }
      // Parsed JSON and object literals are plain; anything else may write itself differently (a Date, toJSON).
      if (!isPlain(value)) return written(value)
      return objectBytes(value as Record<string, unknown>, depth)
    case 'bigint':
      return Number.POSITIVE_INFINITY
    default:
      return undefined
  }
}

function isPlain(value: object): boolean {
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

function objectBytes(value: Record<string, unknown>, depth: number): number {
  let bytes = 2
  let fields = 0
  // A plain object enumerates only its own keys.
  for (const key in value) {
    const item = valueBytes(value[key], depth + 1)
    if (item === undefined) {
      // An object that writes itself another way.
      if (key === 'toJSON' && typeof value[key] === 'function') return written(value)
      continue
    }
    bytes += keyBytes(key) + 1 + item
    fields++
  }
  return fields === 0 ? bytes : bytes + fields - 1
}

/**
 * The keys of the data model (messages, parts, artifacts) as JSON: every message and artifact has them, so they
 * are not counted character by character (a comparison of interned strings is a pointer comparison).
 */
function keyBytes(key: string): number {
  switch (key) {
    case 'kind':
    case 'text':
    case 'role':
    case 'data':
    case 'file':
    case 'name':
      return 6
    case 'parts':
      return 7
    case 'taskId':
      return 8
    case 'metadata':
    case 'mimeType':
      return 10
    case 'messageId':
    case 'contextId':
    case 'lastChunk':
    case 'mediaType':
      return 11
    case 'artifactId':
      return 12
    default:
      return stringBytes(key)
  }
}

/** A string of these characters is written as it is: one byte each, between its quotes. */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/

function stringBytes(text: string): number {
  const length = text.length
  if (length > SHORT_STRING) return written(text)
  // Ids and the like: one native scan beats the loop below from a few dozen characters.
  if (length >= 24 && PLAIN_ASCII.test(text)) return length + 2
  let bytes = 2
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i)
    if (code >= 0x20 && code < 0x7f) bytes += code === 0x22 || code === 0x5c ? 2 : 1
    else if (code < 0x20) bytes += code === 8 || code === 9 || code === 10 || code === 12 || code === 13 ? 2 : 6
    else if (code < 0x800) bytes += code === 0x7f ? 1 : 2
    else if (code < 0xd800 || code > 0xdfff) bytes += 3
    // A surrogate pair is one 4-byte character; a lone surrogate is written as \uXXXX.
    else if (code <= 0xdbff && i + 1 < length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4
      i++
    } else bytes += 6
  }
  return bytes
}

/** The bytes of `value` as the engine writes it (a large string, or a value with its own toJSON). */
function written(value: unknown): number {
  let json: string | undefined
  try {
    json = JSON.stringify(value)
  } catch {
    // Too large to be one string.
    return Number.POSITIVE_INFINITY
  }
  return json === undefined ? 0 : Buffer.byteLength(json)
}
