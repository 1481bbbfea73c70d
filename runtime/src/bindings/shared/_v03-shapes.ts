import { isObject } from '../../_is-object.js'
import type { Artifact, Message, Part, Task, TaskStatus } from '../../types.js'

/**
 * The internal model in the v0.3 shape, which the platform dialect shares. The model is that shape already, so
 * a task is served as it is, except for what A2A v1.0 added to parts and v0.3 cannot say:
 * - a data part's `data` may be any JSON value, where v0.3's DataPart.data is an object: a value that is not one
 *   (an array, a string, a number, a boolean, null) is served wrapped as `{ "value": <the value> }`, the name
 *   google.protobuf.Value gives it, so a v0.3 client gets a valid DataPart and the value itself;
 * - text and data parts may carry a `mediaType`, which v0.3's TextPart and DataPart do not have: it is left out.
 * Only what holds such a part is copied; the checks cost a look at each part, far less than writing it.
 */

const fitsV03 = (part: Part): boolean =>
  part.kind === 'file' || (part.mediaType === undefined && (part.kind === 'text' || isObject(part.data)))

function partToV03(part: Part): Part {
  if (part.kind === 'file' || fitsV03(part)) return part
  if (part.kind === 'text')
    return part.metadata
      ? { kind: 'text', text: part.text, metadata: part.metadata }
      : { kind: 'text', text: part.text }
  const data = isObject(part.data) ? part.data : { value: part.data }
  return part.metadata ? { kind: 'data', data, metadata: part.metadata } : { kind: 'data', data }
}

const partsFit = (parts: Part[]): boolean => parts.every(fitsV03)
const messageFits = (message: Message | undefined): boolean => !message || partsFit(message.parts)

export function messageToV03(message: Message): Message {
  return partsFit(message.parts) ? message : { ...message, parts: message.parts.map(partToV03) }
}

export function artifactToV03(artifact: Artifact): Artifact {
  return partsFit(artifact.parts) ? artifact : { ...artifact, parts: artifact.parts.map(partToV03) }
}

export function statusToV03(status: TaskStatus): TaskStatus {
  return messageFits(status.message) ? status : { ...status, message: messageToV03(status.message!) }
}

export function taskToV03(task: Task): Task {
  if (
    messageFits(task.status.message) &&
    task.history.every(messageFits) &&
    task.artifacts.every((artifact) => partsFit(artifact.parts))
  )
    return task
  return {
    ...task,
    status: statusToV03(task.status),
    history: task.history.map(messageToV03),
    artifacts: task.artifacts.map(artifactToV03),
  }
}
