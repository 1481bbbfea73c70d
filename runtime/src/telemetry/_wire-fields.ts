import { isObject } from '../_is-object.js'
import type { Dialect } from './_hooks.js'

/**
 * The identifiers the A2A semantic conventions put on an operation's span, read from its params as they arrived
 * (before the method validates them) and from its result as the binding answers it: only strings of a sane length,
 * so a client's oddity never becomes a huge or non-string attribute.
 */

const MAX_ID = 256
const MAX_REFERENCES = 32

export interface RequestFields {
  taskId?: string
  messageId?: string
  contextId?: string
  tenant?: string
  referenceTaskIds?: string[]
}

export interface ResultFields {
  taskId?: string
  contextId?: string
  state?: string
}

const idOf = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 && value.length <= MAX_ID ? value : undefined

/** The methods whose params name their task as `id` (the others name it `taskId`, or carry it in the message). */
const TASK_BY_ID = new Set(['GetTask', 'CancelTask', 'SubscribeToTask'])
const PUSH_METHODS = new Set([
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
])

export function requestFields(v1Method: string, dialect: Dialect, params: unknown): RequestFields {
  if (!isObject(params)) return {}
  const fields: RequestFields = {}
  const tenant = idOf(params.tenant)
  if (tenant) fields.tenant = tenant
  const message = params.message
  if (isObject(message)) {
    const messageId = idOf(message.messageId)
    if (messageId) fields.messageId = messageId
    const taskId = idOf(message.taskId)
    if (taskId) fields.taskId = taskId
    const contextId = idOf(message.contextId)
    if (contextId) fields.contextId = contextId
    const references = message.referenceTaskIds
    if (Array.isArray(references) && references.length > 0) {
      const ids = references.slice(0, MAX_REFERENCES).flatMap((id) => idOf(id) ?? [])
      if (ids.length > 0) fields.referenceTaskIds = ids
    }
    return fields
  }
  let taskId: string | undefined
  if (TASK_BY_ID.has(v1Method)) taskId = idOf(params.id)
  else if (PUSH_METHODS.has(v1Method))
    // v0.3 names the task `id` in every push method but the one that creates a config; v1.0 `taskId` (`task_id`).
    taskId =
      dialect === 'a2a-1.0' || v1Method === 'CreateTaskPushNotificationConfig'
        ? idOf(params.taskId ?? params.task_id)
        : idOf(params.id)
  if (taskId) fields.taskId = taskId
  return fields
}

/** `TASK_STATE_WORKING` for `working` (the slash dialects) and for itself (v1.0). */
export function taskStateName(state: string): string {
  if (state.startsWith('TASK_STATE_')) return state
  if (state === 'unknown') return 'TASK_STATE_UNSPECIFIED'
  return `TASK_STATE_${state.toUpperCase().replaceAll('-', '_')}`
}

/** The task (or the agent's reply) a method answered with: a Task, `{ task }` or `{ message }` (v1.0), a Message. */
export function resultFields(result: unknown): ResultFields {
  if (!isObject(result)) return {}
  const inner = isObject(result.task) ? result.task : isObject(result.message) ? result.message : result
  const fields: ResultFields = {}
  const status = inner.status
  const isTask = isObject(status) && typeof status.state === 'string'
  const taskId = idOf(isTask ? inner.id : inner.taskId)
  if (taskId) fields.taskId = taskId
  const contextId = idOf(inner.contextId)
  if (contextId) fields.contextId = contextId
  if (isTask) fields.state = taskStateName(status.state as string)
  return fields
}
