import { jsonBytes as exactJsonBytes } from '../_json-bytes.js'
import type { Artifact, Message, Part, Task, TaskEvent } from '../types.js'

/**
 * About how many bytes tasks and events take as JSON (UTF-8), without building the JSON: stores count what they
 * hold with these, once per event. The fields of the data model with fixed sizes (ids, kinds, states, times)
 * count as one constant per object; texts and file contents by their length (no walk over their characters: an
 * exact count of every id and text cost message/send about 5% in the benchmark); data and metadata as the engine
 * counts them for maxTaskBytes. Costs O(parts), so the count stays a small part of handling an event.
 */

// What the fixed fields weigh as JSON, measured on real objects (UUID ids, ISO times), rounded up. Strings a
// client chooses (a message's ids, a context id) are counted by their length on top: a megabyte-long messageId
// must not pass as a constant.
const TASK_BYTES = 160
const MESSAGE_BYTES = 70
const PART_BYTES = 30
const STATUS_EVENT_BYTES = 220
const ARTIFACT_EVENT_BYTES = 250

/** A task as a whole: read back from elsewhere, or at its creation. */
export function taskBytes(task: Task): number {
  let bytes = TASK_BYTES + textBytes(task.contextId) + jsonBytes(task.metadata)
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
  const ids = textBytes(message.messageId) + textBytes(message.taskId) + textBytes(message.contextId)
  return MESSAGE_BYTES + ids + partsBytes(message.parts) + (message.metadata === undefined ? 0 : jsonBytes(message.metadata))
}

function artifactBytes(artifact: Artifact): number {
  return partsBytes(artifact.parts) + textBytes(artifact.name) + textBytes(artifact.description) + jsonBytes(artifact.metadata)
}

function partsBytes(parts: Part[]): number {
  let bytes = 0
  for (const part of parts) {
    bytes += PART_BYTES + jsonBytes(part.metadata)
    if (part.kind === 'text') bytes += textBytes(part.text)
    else if (part.kind === 'file') bytes += textBytes(part.file.bytes) + textBytes(part.file.uri) + textBytes(part.file.name) + textBytes(part.file.mimeType)
    else bytes += jsonBytes(part.data)
  }
  return bytes
}

/**
 * A value's JSON bytes as a finite count. The engine fails a task before it holds a value JSON cannot (counted as
 * endless there); here such a value must not turn the store's total into Infinity or NaN.
 */
function jsonBytes(value: unknown): number {
  // Most parts, artifacts and tasks have no metadata: nothing to count.
  if (value === undefined) return 0
  const bytes = exactJsonBytes(value)
  return Number.isFinite(bytes) ? bytes : 0
}

/** A text's bytes from its length: UTF-8 for long texts, characters for short ones (a few hundred bytes short at most). */
function textBytes(text: string | undefined): number {
  if (typeof text !== 'string') return 0
  return text.length < 256 ? text.length + 2 : Buffer.byteLength(text, 'utf8') + 2
}
