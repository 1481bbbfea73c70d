import type { Artifact, Message, Part, Task, TaskEvent } from '../types.js'

/**
 * About how many bytes tasks and events take as JSON (UTF-8), without building the JSON: stores count what they
 * hold with these, once per event. The fields of the data model with fixed sizes (ids, kinds, states, times)
 * count as one constant per object; texts, file contents, data and metadata count as what they hold. Costs
 * O(parts), a long text one length read, so the count stays a small part of handling an event.
 */

// What the fixed fields weigh as JSON, measured on real objects (UUID ids, ISO times), rounded up.
const TASK_BYTES = 200
const MESSAGE_BYTES = 180
const PART_BYTES = 30
const STATUS_EVENT_BYTES = 220
const ARTIFACT_EVENT_BYTES = 250

/** A task as a whole: read back from elsewhere, or at its creation. */
export function taskBytes(task: Task): number {
  let bytes = TASK_BYTES + objectBytes(task.metadata)
  for (const message of task.history) bytes += messageBytes(message)
  for (const artifact of task.artifacts) bytes += artifactBytes(artifact)
  const status = task.status.message
  // A question to the user is in the history too: the same object, counted there.
  if (status && !task.history.includes(status)) bytes += messageBytes(status)
  return bytes
}

export function eventBytes(event: TaskEvent): number {
  if (event.kind === 'artifact-update') return ARTIFACT_EVENT_BYTES + artifactBytes(event.artifact)
  const message = event.status.message
  return STATUS_EVENT_BYTES + (message ? messageBytes(message) : 0)
}

export function messageBytes(message: Message): number {
  return MESSAGE_BYTES + partsBytes(message.parts) + objectBytes(message.metadata)
}

function artifactBytes(artifact: Artifact): number {
  return partsBytes(artifact.parts) + textBytes(artifact.name) + textBytes(artifact.description) + objectBytes(artifact.metadata)
}

function partsBytes(parts: Part[]): number {
  let bytes = 0
  for (const part of parts) {
    bytes += PART_BYTES + objectBytes(part.metadata)
    if (part.kind === 'text') bytes += textBytes(part.text)
    else if (part.kind === 'file') bytes += textBytes(part.file.bytes) + textBytes(part.file.uri) + textBytes(part.file.name) + textBytes(part.file.mimeType)
    else bytes += jsonBytes(part.data)
  }
  return bytes
}

function textBytes(text: string | undefined): number {
  if (typeof text !== 'string') return 0
  // UTF-8 for long texts (characters outside Latin-1 take two bytes each in memory); a short one is not worth
  // the call: it counts its characters, at most a few hundred bytes short.
  return text.length < 256 ? text.length : Buffer.byteLength(text, 'utf8')
}

function objectBytes(value: Record<string, unknown> | undefined): number {
  return value === undefined ? 0 : jsonBytes(value)
}

// Wire input is at most 64 levels deep; an agent's own objects could be deeper (or cyclic): past this depth
// a value counts as a small constant, so a cycle cannot hang the count.
const MAX_DEPTH = 100
const DEEP_VALUE_BYTES = 16

/** Any JSON value (data parts, metadata), walked once. */
export function jsonBytes(value: unknown, depth = 0): number {
  switch (typeof value) {
    case 'string':
      return textBytes(value) + 2
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
    for (const item of value) bytes += jsonBytes(item, depth + 1) + 1
    return bytes
  }
  const record = value as Record<string, unknown>
  for (const key of Object.keys(record)) bytes += key.length + 4 + jsonBytes(record[key], depth + 1)
  return bytes
}
