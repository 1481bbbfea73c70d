import { isObject } from '../_is-object.js'
import type { SendRequest } from '../core/_engine.js'
import { InvalidParamsError } from '../errors.js'
import type { TaskQuery } from '../stores/task-store.js'
import type { Message, Part, TaskState } from '../types.js'
import { field, givenName } from './_v1-proto-json.js'
import { assertDepth, historyLengthOf, outputModesOf, readParamsObject } from './shared/_params.js'
import { readMessage as readV03Message } from './shared/_slash-params.js'
import { stateFromV1 } from './shared/_v1-shapes.js'
import { readWebhook, type WebhookInput } from './shared/_webhooks.js'

/**
 * Validation of A2A v1.0 params (ProtoJSON). Parts are told apart by their key; a part that still carries a
 * v0.3 `kind` is read the v0.3 way, so clients between versions get through. A field with a name of more than
 * one word is read under either spelling, `historyLength` or `history_length` (`field`).
 */

type Json = Record<string, unknown>

const NOTHING: Json = Object.freeze({})

/** A string, or undefined for none or '' (ProtoJSON leaves default values out); an error names `path.name`. */
function optionalString(value: unknown, path: string, name: string): string | undefined {
  if (value === undefined || value === '') return undefined
  if (typeof value !== 'string') throw new InvalidParamsError(`\`${path}.${name}\` must be a string`)
  return value
}

// Readers of a field under either of its names (see `field`): the value under the JSON name, the one under the
// .proto name, where the object sits, the JSON name.

function stringField(value: unknown, protoValue: unknown, path: string, name: string): string | undefined {
  const given = field(value, protoValue, path, name)
  if (given === undefined || given === '') return undefined
  if (typeof given !== 'string') throw new InvalidParamsError(`\`${path}.${givenName(value, name)}\` must be a string`)
  return given
}

function historyLengthField(value: unknown, protoValue: unknown, path: string): number | undefined {
  const given = field(value, protoValue, path, 'historyLength')
  return given === undefined ? undefined : historyLengthOf(given, path, givenName(value, 'historyLength'))
}

function outputModesField(value: unknown, protoValue: unknown, path: string): string[] | undefined {
  const given = field(value, protoValue, path, 'acceptedOutputModes')
  return given === undefined ? undefined : outputModesOf(given, path, givenName(value, 'acceptedOutputModes'))
}

function readPartV1(value: unknown, path: string): Part {
  if (!isObject(value)) throw new InvalidParamsError(`\`${path}\` must be an object`)
  const mediaType = stringField(value.mediaType, value.media_type, path, 'mediaType')
  const filename = optionalString(value.filename, path, 'filename')
  const metadata = value.metadata
  if (metadata !== undefined) {
    if (!isObject(metadata)) throw new InvalidParamsError(`\`${path}.metadata\` must be an object`)
    assertDepth(metadata, `${path}.metadata`)
  }
  let part: Part
  if (typeof value.text === 'string') part = { kind: 'text', text: value.text }
  else if (value.data !== undefined) {
    // A google.protobuf.Value: any JSON value (an object, an array, a string, a number, a boolean or null).
    assertDepth(value.data, `${path}.data`)
    part = { kind: 'data', data: value.data }
  } else if (typeof value.url === 'string' || typeof value.raw === 'string') {
    const file = typeof value.url === 'string' ? { uri: value.url } : { bytes: value.raw as string }
    part = {
      kind: 'file',
      file: { ...file, ...(mediaType && { mimeType: mediaType }), ...(filename && { name: filename }) },
    }
  } else throw new InvalidParamsError(`\`${path}\` needs one of \`text\` (string), \`data\`, \`url\` or \`raw\``)
  // A file part keeps its media type in the file, as v0.3 has it; a text or data part beside its content.
  if (mediaType !== undefined && part.kind !== 'file') part.mediaType = mediaType
  if (metadata) part.metadata = metadata as Json
  return part
}

function readMessageV1(value: unknown, path: string): Message {
  if (!isObject(value)) throw new InvalidParamsError(`\`${path}\` must be an object`)
  const parts = value.parts
  if (value.role !== 'ROLE_USER' && value.role !== 'user') {
    throw new InvalidParamsError(
      value.role === undefined ? `\`${path}.role\` is required ("ROLE_USER")` : `\`${path}.role\` must be "ROLE_USER"`,
    )
  }
  // A message in the v0.3 shape (parts with `kind`) is read the v0.3 way, its ids under either spelling.
  if (Array.isArray(parts) && parts.some((part) => isObject(part) && 'kind' in part)) {
    const ids = {
      messageId: field(value.messageId, value.message_id, path, 'messageId'),
      contextId: field(value.contextId, value.context_id, path, 'contextId'),
      taskId: field(value.taskId, value.task_id, path, 'taskId'),
    }
    return readV03Message({ ...value, ...ids, role: 'user' }, path, true)
  }
  if (!Array.isArray(parts) || parts.length === 0)
    throw new InvalidParamsError(`\`${path}.parts\` must be a non-empty array`)
  const messageId = stringField(value.messageId, value.message_id, path, 'messageId')
  if (messageId === undefined) throw new InvalidParamsError(`\`${path}.messageId\` is required`)
  const message: Message = {
    kind: 'message',
    messageId,
    role: 'user',
    parts: parts.map((part, i) => readPartV1(part, `${path}.parts[${i}]`)),
  }
  const contextId = stringField(value.contextId, value.context_id, path, 'contextId')
  const taskId = stringField(value.taskId, value.task_id, path, 'taskId')
  if (contextId !== undefined) message.contextId = contextId
  if (taskId !== undefined) message.taskId = taskId
  if (value.metadata !== undefined) {
    if (!isObject(value.metadata)) throw new InvalidParamsError(`\`${path}.metadata\` must be an object`)
    assertDepth(value.metadata, `${path}.metadata`)
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

const MESSAGE = 'params.message'
const CONFIGURATION = 'params.configuration'

export function readSendParamsV1(params: unknown): SendParamsV1 {
  const p = readParamsObject(params)
  const message = readMessageV1(p.message, MESSAGE)
  const configuration = p.configuration
  if (configuration !== undefined && !isObject(configuration))
    throw new InvalidParamsError(`\`${CONFIGURATION}\` must be an object`)
  const config = isObject(configuration) ? configuration : NOTHING
  const returnImmediately =
    field(config.returnImmediately, config.return_immediately, CONFIGURATION, 'returnImmediately') ??
    config.blocking === false
  if (typeof returnImmediately !== 'boolean')
    throw new InvalidParamsError(
      `\`${CONFIGURATION}.${givenName(config.returnImmediately, 'returnImmediately')}\` must be a boolean`,
    )
  const request: SendParamsV1 = {
    message,
    returnImmediately,
    historyLength: historyLengthField(config.historyLength, config.history_length, CONFIGURATION),
    acceptedOutputModes: outputModesField(config.acceptedOutputModes, config.accepted_output_modes, CONFIGURATION),
  }
  if (message.taskId !== undefined) request.taskId = message.taskId
  if (message.contextId !== undefined) request.contextId = message.contextId
  // v1.0 names it taskPushNotificationConfig; clients between versions send the v0.3 name.
  const v1Webhook = field(
    config.taskPushNotificationConfig,
    config.task_push_notification_config,
    CONFIGURATION,
    'taskPushNotificationConfig',
  )
  if (v1Webhook !== undefined)
    request.webhook = readWebhook(
      v1Webhook,
      `${CONFIGURATION}.${givenName(config.taskPushNotificationConfig, 'taskPushNotificationConfig')}`,
    )
  else {
    const v03Webhook = field(
      config.pushNotificationConfig,
      config.push_notification_config,
      CONFIGURATION,
      'pushNotificationConfig',
    )
    if (v03Webhook !== undefined)
      request.webhook = readWebhook(
        v03Webhook,
        `${CONFIGURATION}.${givenName(config.pushNotificationConfig, 'pushNotificationConfig')}`,
      )
  }
  return request
}

/** GetTask, CancelTask and SubscribeToTask: the task's `id`, and how much history to answer with. */
export function readTaskIdV1(params: unknown): { id: string; historyLength: number | undefined } {
  const p = readParamsObject(params)
  const id = optionalString(p.id, 'params', 'id')
  if (id === undefined) throw new InvalidParamsError('`params.id` must be a non-empty string (the task id)')
  return { id, historyLength: historyLengthField(p.historyLength, p.history_length, 'params') }
}

export interface ListParamsV1 {
  query: TaskQuery
  historyLength: number | undefined
  includeArtifacts: boolean
}

export function readListParamsV1(params: unknown): ListParamsV1 {
  const p = params === undefined ? NOTHING : readParamsObject(params)
  const pageSize = field(p.pageSize, p.page_size, 'params', 'pageSize') ?? 50
  if (typeof pageSize !== 'number' || !Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100) {
    throw new InvalidParamsError(`\`params.${givenName(p.pageSize, 'pageSize')}\` must be an integer from 1 to 100`)
  }
  const status = optionalString(p.status, 'params', 'status')
  let state: TaskState | undefined
  if (status !== undefined && status !== 'TASK_STATE_UNSPECIFIED') {
    state = stateFromV1(status)
    if (!state)
      throw new InvalidParamsError(
        `\`params.status\` must be a task state such as "TASK_STATE_WORKING" (got ${JSON.stringify(status).slice(0, 60)})`,
      )
  }
  const after = stringField(p.statusTimestampAfter, p.status_timestamp_after, 'params', 'statusTimestampAfter')
  if (after !== undefined && Number.isNaN(Date.parse(after)))
    throw new InvalidParamsError(
      `\`params.${givenName(p.statusTimestampAfter, 'statusTimestampAfter')}\` must be an ISO 8601 time`,
    )
  const includeArtifacts = field(p.includeArtifacts, p.include_artifacts, 'params', 'includeArtifacts')
  if (includeArtifacts !== undefined && typeof includeArtifacts !== 'boolean')
    throw new InvalidParamsError(`\`params.${givenName(p.includeArtifacts, 'includeArtifacts')}\` must be a boolean`)
  const query: TaskQuery = { limit: pageSize }
  const contextId = stringField(p.contextId, p.context_id, 'params', 'contextId')
  const cursor = stringField(p.pageToken, p.page_token, 'params', 'pageToken')
  if (contextId !== undefined) query.contextId = contextId
  if (state !== undefined) query.state = state
  if (after !== undefined) query.updatedAfter = new Date(after).toISOString()
  if (cursor !== undefined) query.cursor = cursor
  return {
    query,
    historyLength: historyLengthField(p.historyLength, p.history_length, 'params'),
    includeArtifacts: includeArtifacts === true,
  }
}
