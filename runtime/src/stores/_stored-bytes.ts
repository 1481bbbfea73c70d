import {
  artifactHeapBytes,
  heapBytes,
  joinedTextHeapBytes,
  messageHeapBytes,
  partsHeapBytes,
  stringHeapBytes,
} from '../_heap-bytes.js'
import type { Task, TaskEvent } from '../types.js'

/**
 * What the tasks and events a store keeps cost in memory (`_heap-bytes.ts`: the heap, structure included), counted
 * once per event from the event alone, so a store's budget (`maxBytes`, `eventLogBytes`) bounds its heap. O(parts)
 * and no walk over a text's characters.
 */

// The objects of the data model with fixed fields, as V8 lays them out, and what a store keeps beside each: a task
// (its status, timestamp, two ids, history and artifacts arrays) with the memory store's entry, its place in a Map
// and its event log; an event with its status and timestamp, or with its artifact and id. Rounded up from a heap
// snapshot of a store of small tasks; test/runtime/store-bytes.test.ts holds the memory store to its heap.
const TASK_BYTES = 800
const STATUS_EVENT_BYTES = 200
const ARTIFACT_EVENT_BYTES = 200

/** A task as a whole: read back from elsewhere, or at its creation. */
export function taskBytes(task: Task): number {
  let bytes = TASK_BYTES + stringHeapBytes(task.contextId)
  if (task.metadata !== undefined) bytes += heapBytes(task.metadata)
  for (const message of task.history) bytes += messageHeapBytes(message)
  for (const artifact of task.artifacts) bytes += artifactHeapBytes(artifact)
  const status = task.status.message
  // A question to the user is in the history too: the same object, counted there.
  if (status && !task.history.includes(status)) bytes += messageHeapBytes(status)
  return bytes
}

/** The owner a store keeps beside a task (`Principal.id`): a string of its own once read back from a log. */
export function ownerBytes(owner: string | undefined): number {
  return owner === undefined ? 0 : stringHeapBytes(owner)
}

/** An event as an event log keeps it. */
export function eventBytes(event: TaskEvent): number {
  if (event.kind === 'artifact-update') return ARTIFACT_EVENT_BYTES + artifactHeapBytes(event.artifact)
  const message = event.status.message
  return STATUS_EVENT_BYTES + (message ? messageHeapBytes(message) : 0)
}

/**
 * `eventBytes(event)`, from what the event adds to its task (`taskGrowthBytes`), without a second count of the
 * same objects: a status event is its growth, an artifact event its artifact and the event around it.
 */
export function eventBytesFrom(event: TaskEvent, growth: number): number {
  if (event.kind === 'status-update') return growth
  return event.append ? eventBytes(event) : ARTIFACT_EVENT_BYTES + growth
}

/**
 * What an event adds to its task: a status (replacing the one before), an artifact, or an appended chunk's parts
 * (a chunk of plain text joins the text before it, `_artifact-append.ts`; after a part of another kind it is a
 * part of its own, some 60 bytes more, which this does not see).
 */
export function taskGrowthBytes(event: TaskEvent): number {
  if (event.kind === 'status-update')
    return STATUS_EVENT_BYTES + (event.status.message ? messageHeapBytes(event.status.message) : 0)
  if (!event.append) return artifactHeapBytes(event.artifact)
  const { parts } = event.artifact
  const only = parts.length === 1 ? parts[0] : undefined
  if (only?.kind === 'text' && only.mediaType === undefined && only.metadata === undefined)
    return joinedTextHeapBytes(only.text)
  return partsHeapBytes(parts)
}
