import type { Artifact, Message, Part, TaskEvent, TaskState, TaskStatus } from '../../types.js'
import type { Json } from './_params.js'

/**
 * The internal model in A2A v1.0 ProtoJSON: no `kind` discriminators, enums by their full proto names, parts
 * told apart by the key they carry (`text`, `data`, `url`, `raw`), default values left out. Here are the shapes
 * a v1.0 stream event carries, which v1.0 webhooks receive too; a whole Task is the v1.0 binding's (`_v1-task.ts`).
 */

const STATE_V1: Record<TaskState, string> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  'auth-required': 'TASK_STATE_AUTH_REQUIRED',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELED',
  rejected: 'TASK_STATE_REJECTED',
}

const STATE_FROM_V1 = new Map(Object.entries(STATE_V1).map(([state, v1]) => [v1, state as TaskState]))

const stateToV1 = (state: TaskState): string => STATE_V1[state]
export const stateFromV1 = (value: string): TaskState | undefined => STATE_FROM_V1.get(value)

function partToV1(part: Part): Json {
  const out: Json =
    part.kind === 'text'
      ? { text: part.text }
      : part.kind === 'data'
        ? { data: part.data }
        : part.file.uri !== undefined
          ? { url: part.file.uri }
          : { raw: part.file.bytes }
  if (part.kind === 'file') {
    if (part.file.mimeType) out.mediaType = part.file.mimeType
    if (part.file.name) out.filename = part.file.name
  } else if (part.mediaType) out.mediaType = part.mediaType
  if (part.metadata) out.metadata = part.metadata
  return out
}

export function messageToV1(message: Message): Json {
  const out: Json = {
    messageId: message.messageId,
    role: message.role === 'user' ? 'ROLE_USER' : 'ROLE_AGENT',
    parts: message.parts.map(partToV1),
  }
  if (message.contextId) out.contextId = message.contextId
  if (message.taskId) out.taskId = message.taskId
  if (message.metadata) out.metadata = message.metadata
  return out
}

export function statusToV1(status: TaskStatus): Json {
  const out: Json = { state: stateToV1(status.state), timestamp: status.timestamp }
  if (status.message) out.message = messageToV1(status.message)
  return out
}

export function artifactToV1(artifact: Artifact): Json {
  const out: Json = { artifactId: artifact.artifactId, parts: artifact.parts.map(partToV1) }
  if (artifact.name) out.name = artifact.name
  if (artifact.description) out.description = artifact.description
  if (artifact.metadata) out.metadata = artifact.metadata
  return out
}

/** A StreamResponse for one event. */
export function eventToV1(event: TaskEvent): Json {
  if (event.kind === 'status-update') {
    return { statusUpdate: { taskId: event.taskId, contextId: event.contextId, status: statusToV1(event.status) } }
  }
  const update: Json = { taskId: event.taskId, contextId: event.contextId, artifact: artifactToV1(event.artifact) }
  if (event.append) update.append = true
  if (event.lastChunk) update.lastChunk = true
  return { artifactUpdate: update }
}
