import { isObject } from '../../_is-object.js'
import type { SendRequest } from '../../core/_engine.js'
import { newId } from '../../core/_ids.js'
import { InvalidParamsError } from '../../errors.js'
import type { PushDialect } from '../../push/push-config.js'
import type { Message, Part } from '../../types.js'
import { assertDepth, historyLengthOf, type Json, outputModesOf, readParamsObject } from './_params.js'
import { readWebhook, type WebhookInput } from './_webhooks.js'

/**
 * Validation of the slash-named methods' params, which the platform dialect and A2A v0.3 share, and of a message
 * in the v0.3 shape (which v1.0 also takes). Each check names the field as the client wrote it, and the result
 * is built from the known fields only: nothing unexpected from the wire reaches the stored task.
 */

export interface SendParams extends SendRequest {
  /** `configuration.blocking: false` answers at once with the task as it stands. */
  blocking: boolean
  /** `configuration.historyLength`: how much history the answer carries. */
  historyLength: number | undefined
  /** `configuration.acceptedOutputModes`: media types the client can take. */
  acceptedOutputModes: string[] | undefined
  /** `configuration.pushNotificationConfig`: a webhook for the task's updates. */
  webhook?: WebhookInput
}

function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw new InvalidParamsError(`\`${field}\` must be a string`)
  return value
}

function optionalObject(value: unknown, field: string): Json | undefined {
  if (value === undefined) return undefined
  if (!isObject(value)) throw new InvalidParamsError(`\`${field}\` must be an object`)
  return value
}

function optionalJson(value: unknown, field: string): Json | undefined {
  const object = optionalObject(value, field)
  assertDepth(object, field)
  return object
}

export function readTaskId(params: unknown): string {
  const id = readParamsObject(params).id
  if (typeof id !== 'string' || id === '')
    throw new InvalidParamsError('`params.id` must be a non-empty string (the task id)')
  return id
}

/** `params.historyLength` (tasks/get). */
export function readHistoryLength(params: Json): number | undefined {
  return historyLengthOf(params.historyLength, 'params', 'historyLength')
}

function readPart(value: unknown, field: string): Part {
  if (!isObject(value)) throw new InvalidParamsError(`\`${field}\` must be an object`)
  const metadata = optionalJson(value.metadata, `${field}.metadata`)
  let part: Part
  switch (value.kind) {
    case 'text':
      if (typeof value.text !== 'string') throw new InvalidParamsError(`\`${field}.text\` must be a string`)
      part = { kind: 'text', text: value.text }
      break
    case 'data':
      if (!isObject(value.data)) throw new InvalidParamsError(`\`${field}.data\` must be a JSON object`)
      assertDepth(value.data, `${field}.data`)
      part = { kind: 'data', data: value.data }
      break
    case 'file': {
      const file = optionalObject(value.file, `${field}.file`)
      if (!file) throw new InvalidParamsError(`\`${field}.file\` must be an object`)
      const uri = optionalString(file.uri, `${field}.file.uri`)
      const bytes = optionalString(file.bytes, `${field}.file.bytes`)
      if (uri === undefined && bytes === undefined)
        throw new InvalidParamsError(`\`${field}.file\` needs \`uri\` or \`bytes\``)
      const name = optionalString(file.name, `${field}.file.name`)
      const mimeType = optionalString(file.mimeType, `${field}.file.mimeType`)
      part = {
        kind: 'file',
        file: {
          ...(name !== undefined && { name }),
          ...(mimeType !== undefined && { mimeType }),
          ...(uri !== undefined ? { uri } : { bytes }),
        },
      }
      break
    }
    default:
      throw new InvalidParamsError(`\`${field}.kind\` must be "text", "data" or "file" (got ${shown(value.kind)})`)
  }
  if (metadata) part.metadata = metadata
  return part
}

/**
 * A wire value for an error message: the start of a string, a number or boolean as it is, only the type of
 * an array or object (JSON.stringify of deeply nested input overflows the stack).
 */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 38))
  if (Array.isArray(value)) return 'an array'
  if (isObject(value)) return 'an object'
  return String(value ?? null)
}

/**
 * A user message in the v0.3 shape. A2A requires its `messageId` and `role` (`required`: -32602 naming the one
 * left out, as A2A v0.3 says and the conformance kit checks); the platform contract lets a client leave them out,
 * so in the platform dialect a missing id is made up and the role is taken as `user`.
 */
export function readMessage(value: unknown, field: string, required: boolean): Message {
  if (!isObject(value)) throw new InvalidParamsError(`\`${field}\` must be an object`)
  if (value.role !== undefined && value.role !== 'user')
    throw new InvalidParamsError(`\`${field}.role\` must be "user"`)
  if (value.role === undefined && required) throw new InvalidParamsError(`\`${field}.role\` is required ("user")`)
  if (!Array.isArray(value.parts)) throw new InvalidParamsError(`\`${field}.parts\` must be an array`)
  if (value.parts.length === 0) throw new InvalidParamsError(`\`${field}.parts\` must hold at least one part`)
  const parts = value.parts.map((part, i) => readPart(part, `${field}.parts[${i}]`))
  const messageId = optionalString(value.messageId, `${field}.messageId`)
  if (required && !messageId) throw new InvalidParamsError(`\`${field}.messageId\` is required (a non-empty string)`)
  const message: Message = { kind: 'message', messageId: messageId ?? newId(), role: 'user', parts }
  const contextId = optionalString(value.contextId, `${field}.contextId`)
  const taskId = optionalString(value.taskId, `${field}.taskId`)
  const metadata = optionalJson(value.metadata, `${field}.metadata`)
  if (contextId !== undefined) message.contextId = contextId
  if (taskId !== undefined) message.taskId = taskId
  if (metadata) message.metadata = metadata
  return message
}

/**
 * `message/send` and `message/stream`, in the platform dialect or A2A v0.3 (which requires a message's id and role).
 */
export function readSendParams(params: unknown, dialect: PushDialect): SendParams {
  const p = readParamsObject(params)
  const message = readMessage(p.message, 'params.message', dialect !== 'platform')
  const metadata = optionalJson(p.metadata, 'params.metadata')
  const configuration = optionalObject(p.configuration, 'params.configuration')

  // A follow-up names its task in the message (A2A) or in params.id; both must agree when both are given.
  const taskIdParam = optionalString(p.id, 'params.id')
  if (taskIdParam !== undefined && message.taskId !== undefined && taskIdParam !== message.taskId) {
    throw new InvalidParamsError('`params.id` and `params.message.taskId` name different tasks')
  }
  const metadataContextId = optionalString(metadata?.contextId, 'params.metadata.contextId')

  const blocking = configuration?.blocking
  if (blocking !== undefined && typeof blocking !== 'boolean')
    throw new InvalidParamsError('`params.configuration.blocking` must be a boolean')

  const request: SendParams = {
    message,
    blocking: blocking ?? true,
    historyLength: historyLengthOf(configuration?.historyLength, 'params.configuration', 'historyLength'),
    acceptedOutputModes: outputModesOf(
      configuration?.acceptedOutputModes,
      'params.configuration',
      'acceptedOutputModes',
    ),
  }
  const taskId = message.taskId ?? taskIdParam
  const contextId = metadataContextId ?? message.contextId
  if (taskId !== undefined) request.taskId = taskId
  if (contextId !== undefined) request.contextId = contextId
  if (configuration?.pushNotificationConfig !== undefined)
    request.webhook = readWebhook(configuration.pushNotificationConfig, 'params.configuration.pushNotificationConfig')
  return request
}
