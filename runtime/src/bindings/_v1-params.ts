import type { SendRequest } from '../core/_engine.js'
import { InvalidParamsError } from '../errors.js'
import { isPlainObject } from '../http/_jsonrpc.js'
import type { TaskQuery } from '../stores/_store.js'
import type { Message, Part, TaskState } from '../types.js'
import { assertDepth, readMessage as readPlatformMessage, readHistoryLength, readOutputModes, readParamsObject } from './_platform-params.js'
import { type WebhookInput, readWebhook } from './_push.js'
import { stateFromV1 } from './_v1-shapes.js'

/**
 * Validation of A2A v1.0 params (ProtoJSON). Parts are told apart by their key; a part that still carries a
 * v0.3 `kind` is read the v0.3 way, so clients between versions get through.
 */

type Json = Record<string, unknown>

const optionalString = (value: unknown, field: string): string | undefined => {
  if (value === undefined || value === '') return undefined
  if (typeof value !== 'string') throw new InvalidParamsError(`\`${field}\` must be a string`)
  return value
}

function readPartV1(value: unknown, field: string): Part {
  if (!isPlainObject(value)) throw new InvalidParamsError(`\`${field}\` must be an object`)
  const mediaType = optionalString(value.mediaType, `${field}.mediaType`)
  const filename = optionalString(value.filename, `${field}.filename`)
  const metadata = value.metadata
  if (metadata !== undefined && !isPlainObject(metadata)) throw new InvalidParamsError(`\`${field}.metadata\` must be an object`)
  assertDepth(metadata, `${field}.metadata`)
  let part: Part
  if (typeof value.text === 'string') part = { kind: 'text', text: value.text }
  else if (value.data !== undefined) {
    if (!isPlainObject(value.data)) throw new InvalidParamsError(`\`${field}.data\` must be a JSON object`)
    assertDepth(value.data, `${field}.data`)
    part = { kind: 'data', data: value.data }
  } else if (typeof value.url === 'string' || typeof value.raw === 'string') {
    const file = typeof value.url === 'string' ? { uri: value.url } : { bytes: value.raw as string }
    part = { kind: 'file', file: { ...file, ...(mediaType && { mimeType: mediaType }), ...(filename && { name: filename }) } }
  } else throw new InvalidParamsError(`\`${field}\` needs one of \`text\` (string), \`data\`, \`url\` or \`raw\``)
  if (metadata) part.metadata = metadata as Json
  return part
}

function readMessageV1(value: unknown, field: string): Message {
  if (!isPlainObject(value)) throw new InvalidParamsError(`\`${field}\` must be an object`)
  const parts = value.parts
  if (value.role !== undefined && value.role !== 'ROLE_USER' && value.role !== 'user') throw new InvalidParamsError(`\`${field}.role\` must be "ROLE_USER"`)
  // A message in the v0.3 shape (parts with `kind`) is read the v0.3 way.
  if (Array.isArray(parts) && parts.some((part) => isPlainObject(part) && 'kind' in part)) return readPlatformMessage({ ...value, role: 'user' }, field)
  if (!Array.isArray(parts) || parts.length === 0) throw new InvalidParamsError(`\`${field}.parts\` must be a non-empty array`)
  const messageId = optionalString(value.messageId, `${field}.messageId`)
  if (messageId === undefined) throw new InvalidParamsError(`\`${field}.messageId\` is required`)
  const message: Message = { kind: 'message', messageId, role: 'user', parts: parts.map((part, i) => readPartV1(part, `${field}.parts[${i}]`)) }
  const contextId = optionalString(value.contextId, `${field}.contextId`)
  const taskId = optionalString(value.taskId, `${field}.taskId`)
  if (contextId !== undefined) message.contextId = contextId
  if (taskId !== undefined) message.taskId = taskId
  if (value.metadata !== undefined) {
    if (!isPlainObject(value.metadata)) throw new InvalidParamsError(`\`${field}.metadata\` must be an object`)
    assertDepth(value.metadata, `${field}.metadata`)
    message.metadata = value.metadata
  }
  return message
}

export interface SendParamsV1 extends SendRequest {
  webhook?: WebhookInput
  returnImmediately: boolean
  historyLength: number | undefined
  acceptedOutputModes: string[] | undefined
}

export function readSendParamsV1(params: unknown): SendParamsV1 {
  const p = readParamsObject(params)
  const message = readMessageV1(p.message, 'params.message')
  const configuration = p.configuration
  if (configuration !== undefined && !isPlainObject(configuration)) throw new InvalidParamsError('`params.configuration` must be an object')
  const config = (configuration ?? {}) as Json
  const returnImmediately = config.returnImmediately ?? (config.blocking === false ? true : false)
  if (typeof returnImmediately !== 'boolean') throw new InvalidParamsError('`params.configuration.returnImmediately` must be a boolean')
  const request: SendParamsV1 = { message, returnImmediately, historyLength: readHistoryLength(config), acceptedOutputModes: readOutputModes(config) }
  if (message.taskId !== undefined) request.taskId = message.taskId
  if (message.contextId !== undefined) request.contextId = message.contextId
  // v1.0 names it taskPushNotificationConfig; clients between versions send the v0.3 name.
  const webhookField = config.taskPushNotificationConfig !== undefined ? 'taskPushNotificationConfig' : 'pushNotificationConfig'
  if (config[webhookField] !== undefined) request.webhook = readWebhook(config[webhookField], `params.configuration.${webhookField}`)
  return request
}

export function readTaskIdV1(params: unknown): { id: string; historyLength: number | undefined } {
  const p = readParamsObject(params)
  const id = optionalString(p.id, 'params.id')
  if (id === undefined) throw new InvalidParamsError('`params.id` must be a non-empty string (the task id)')
  return { id, historyLength: readHistoryLength(p) }
}

export interface ListParamsV1 {
  query: TaskQuery
  historyLength: number | undefined
  includeArtifacts: boolean
}

export function readListParamsV1(params: unknown): ListParamsV1 {
  const p = params === undefined ? {} : readParamsObject(params)
  const pageSize = p.pageSize ?? 50
  if (typeof pageSize !== 'number' || !Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100) {
    throw new InvalidParamsError('`params.pageSize` must be an integer from 1 to 100')
  }
  const status = optionalString(p.status, 'params.status')
  let state: TaskState | undefined
  if (status !== undefined && status !== 'TASK_STATE_UNSPECIFIED') {
    state = stateFromV1(status)
    if (!state) throw new InvalidParamsError(`\`params.status\` must be a task state such as "TASK_STATE_WORKING" (got ${JSON.stringify(status).slice(0, 60)})`)
  }
  const after = optionalString(p.statusTimestampAfter, 'params.statusTimestampAfter')
  if (after !== undefined && Number.isNaN(Date.parse(after))) throw new InvalidParamsError('`params.statusTimestampAfter` must be an ISO 8601 time')
  if (p.includeArtifacts !== undefined && typeof p.includeArtifacts !== 'boolean') throw new InvalidParamsError('`params.includeArtifacts` must be a boolean')
  const query: TaskQuery = { limit: pageSize }
  const contextId = optionalString(p.contextId, 'params.contextId')
  const cursor = optionalString(p.pageToken, 'params.pageToken')
  if (contextId !== undefined) query.contextId = contextId
  if (state !== undefined) query.state = state
  if (after !== undefined) query.updatedAfter = new Date(after).toISOString()
  if (cursor !== undefined) query.cursor = cursor
  return { query, historyLength: readHistoryLength(p), includeArtifacts: p.includeArtifacts === true }
}
