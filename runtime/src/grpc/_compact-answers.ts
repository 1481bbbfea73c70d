import type { DescEnum, DescMessage } from '@bufbuild/protobuf'
import type protobuf from 'protobufjs/light.js'
import { a2aFile } from './_descriptors.js'
import { loadProtobufjs, protobufjsRoot } from './_protobufjs-types.js'

/**
 * The answers gRPC sends most (SendMessageResponse, StreamResponse, Task) written by protobufjs from the binding's
 * ProtoJSON objects in one pass, instead of @bufbuild/protobuf's `fromJson` then `toBinary`, both by reflection.
 *
 * Only what reads the same either way takes this path: strings, booleans, enums by name, timestamps as
 * `Date#toISOString` writes them, and plain JSON in metadata and data parts. Anything else (bytes, a number that is
 * not finite, a value JSON does not have, a field of the wrong type) leaves it, and the answer is encoded as before,
 * with the same result or the same error. Defaults are left out, as @bufbuild/protobuf leaves them out, so the bytes
 * are the same too (test/runtime/grpc-encoding.test.ts holds them to it).
 */

/** Thrown inside a conversion when the value is one this path does not take. */
const OFF_PATH = Symbol('off the compact path')

type Out = Record<string, unknown>

const messageOf = (name: string): DescMessage => a2aFile.messages.find((message) => message.name === name)!
const enumOf = (desc: DescEnum): Map<string, number> => new Map(desc.values.map((value) => [value.name, value.number]))
const TASK_STATE = enumOf(a2aFile.enums.find((desc) => desc.name === 'TaskState')!)
const ROLE = enumOf(a2aFile.enums.find((desc) => desc.name === 'Role')!)

function setString(out: Out, key: string, value: unknown): void {
  if (value === undefined) return
  if (typeof value !== 'string') throw OFF_PATH
  if (value !== '') out[key] = value
}

function setBool(out: Out, key: string, value: unknown): void {
  if (value === undefined) return
  if (typeof value !== 'boolean') throw OFF_PATH
  if (value) out[key] = true
}

function setEnum(out: Out, key: string, value: unknown, names: Map<string, number>): void {
  if (value === undefined) return
  const number = typeof value === 'string' ? names.get(value) : undefined
  if (number === undefined) throw OFF_PATH
  if (number !== 0) out[key] = number
}

function setList(out: Out, key: string, value: unknown, item: (value: unknown) => unknown): void {
  if (value === undefined) return
  if (!Array.isArray(value)) throw OFF_PATH
  // Array.from, not map: a hole is a value like any other (undefined, which leaves the path).
  if (value.length) out[key] = Array.from(value, (entry) => item(entry))
}

const stringItem = (value: unknown): string => {
  if (typeof value !== 'string') throw OFF_PATH
  return value
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null) return false
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

// What `Date#toISOString` writes; other RFC 3339 forms (offsets, other precisions) take the reflection path.
const ISO_UTC_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
/** 0001-01-01T00:00:00Z, the earliest Timestamp. */
const YEAR_ONE_MS = -62_135_596_800_000

function timestamp(value: unknown): Out {
  if (typeof value !== 'string' || !ISO_UTC_MS.test(value)) throw OFF_PATH
  const ms = Date.parse(value)
  if (!(ms >= YEAR_ONE_MS)) throw OFF_PATH
  const seconds = Math.floor(ms / 1000)
  const out: Out = {}
  if (seconds !== 0) out.seconds = seconds
  if (ms !== seconds * 1000) out.nanos = (ms - seconds * 1000) * 1_000_000
  return out
}

/** google.protobuf.Value of plain JSON. */
function jsonValue(value: unknown): Out {
  switch (typeof value) {
    case 'string':
      return { stringValue: value }
    case 'boolean':
      return { boolValue: value }
    case 'number':
      // JSON has neither NaN nor the infinities, and writes -0 as 0: those keep the path they had.
      if (!Number.isFinite(value) || Object.is(value, -0)) throw OFF_PATH
      return { numberValue: value }
    case 'object':
      if (value === null) return { nullValue: 0 }
      if (Array.isArray(value)) return { listValue: { values: Array.from(value, (item) => jsonValue(item)) } }
      return { structValue: struct(value) }
    default:
      throw OFF_PATH
  }
}

/** google.protobuf.Struct of a plain JSON object. */
function struct(value: unknown): Out {
  if (!isPlainObject(value)) throw OFF_PATH
  const fields: Out = {}
  for (const key of Object.keys(value)) fields[key] = jsonValue(value[key])
  return { fields }
}

function setStruct(out: Out, key: string, value: unknown): void {
  if (value !== undefined) out[key] = struct(value)
}

const CONTENT = ['text', 'raw', 'url', 'data'] as const

function part(value: unknown): Out {
  if (!isPlainObject(value)) throw OFF_PATH
  const out: Out = {}
  let contents = 0
  for (const key of CONTENT) {
    const content = value[key]
    if (content === undefined) continue
    contents++
    // Bytes are base64 in ProtoJSON, which only the reflection path reads (and refuses when they are not).
    if (key === 'raw' || contents > 1) throw OFF_PATH
    if (key === 'data') out.data = jsonValue(content)
    else if (typeof content === 'string') out[key] = content
    else throw OFF_PATH
  }
  setStruct(out, 'metadata', value.metadata)
  setString(out, 'filename', value.filename)
  setString(out, 'mediaType', value.mediaType)
  return out
}

function message(value: unknown): Out {
  if (!isPlainObject(value)) throw OFF_PATH
  const out: Out = {}
  setString(out, 'messageId', value.messageId)
  setString(out, 'contextId', value.contextId)
  setString(out, 'taskId', value.taskId)
  setEnum(out, 'role', value.role, ROLE)
  setList(out, 'parts', value.parts, part)
  setStruct(out, 'metadata', value.metadata)
  setList(out, 'extensions', value.extensions, stringItem)
  setList(out, 'referenceTaskIds', value.referenceTaskIds, stringItem)
  return out
}

function status(value: unknown): Out {
  if (!isPlainObject(value)) throw OFF_PATH
  const out: Out = {}
  setEnum(out, 'state', value.state, TASK_STATE)
  if (value.message !== undefined) out.message = message(value.message)
  if (value.timestamp !== undefined) out.timestamp = timestamp(value.timestamp)
  return out
}

function artifact(value: unknown): Out {
  if (!isPlainObject(value)) throw OFF_PATH
  const out: Out = {}
  setString(out, 'artifactId', value.artifactId)
  setString(out, 'name', value.name)
  setString(out, 'description', value.description)
  setList(out, 'parts', value.parts, part)
  setStruct(out, 'metadata', value.metadata)
  setList(out, 'extensions', value.extensions, stringItem)
  return out
}

function task(value: unknown): Out {
  if (!isPlainObject(value)) throw OFF_PATH
  const out: Out = {}
  setString(out, 'id', value.id)
  setString(out, 'contextId', value.contextId)
  if (value.status !== undefined) out.status = status(value.status)
  setList(out, 'artifacts', value.artifacts, artifact)
  setList(out, 'history', value.history, message)
  setStruct(out, 'metadata', value.metadata)
  return out
}

function statusUpdate(value: unknown): Out {
  if (!isPlainObject(value)) throw OFF_PATH
  const out: Out = {}
  setString(out, 'taskId', value.taskId)
  setString(out, 'contextId', value.contextId)
  if (value.status !== undefined) out.status = status(value.status)
  setStruct(out, 'metadata', value.metadata)
  return out
}

function artifactUpdate(value: unknown): Out {
  if (!isPlainObject(value)) throw OFF_PATH
  const out: Out = {}
  setString(out, 'taskId', value.taskId)
  setString(out, 'contextId', value.contextId)
  if (value.artifact !== undefined) out.artifact = artifact(value.artifact)
  setBool(out, 'append', value.append)
  setBool(out, 'lastChunk', value.lastChunk)
  setStruct(out, 'metadata', value.metadata)
  return out
}

/** A message whose fields are one oneof of messages (SendMessageResponse, StreamResponse): exactly one is set. */
const payloadOf =
  (members: Record<string, (value: unknown) => Out>) =>
  (value: unknown): Out => {
    if (!isPlainObject(value)) throw OFF_PATH
    let out: Out | undefined
    for (const key in members) {
      if (value[key] === undefined) continue
      if (out) throw OFF_PATH
      out = { [key]: members[key]!(value[key]) }
    }
    return out ?? {}
  }

const CONVERSIONS: Record<string, (value: unknown) => Out> = {
  SendMessageResponse: payloadOf({ task, message }),
  StreamResponse: payloadOf({ task, message, statusUpdate, artifactUpdate }),
  Task: task,
}

const protobufjs = loadProtobufjs()
const root = protobufjs && protobufjsRoot(protobufjs, Object.keys(CONVERSIONS).map(messageOf))

/**
 * The encoder of `schema` on this path, if it has one: it answers the bytes, or undefined for a value the path does
 * not take (the caller then encodes it by reflection).
 */
export function compactEncoder(schema: DescMessage): ((json: unknown) => Uint8Array | undefined) | undefined {
  const convert = CONVERSIONS[schema.name]
  if (!convert || !root || schema.file !== a2aFile) return undefined
  const type: protobuf.Type = root.lookupType(schema.typeName)
  return (json) => {
    let plain: Out
    try {
      plain = convert(json)
    } catch (error) {
      if (error === OFF_PATH) return undefined
      throw error
    }
    return type.encode(plain).finish()
  }
}
