import type { SendRequest } from '../core/_engine.js'
import { newId } from '../core/_ids.js'
import { A2AError, ErrorCode, InvalidParamsError } from '../errors.js'
import { isPlainObject } from '../http/_jsonrpc.js'
import { type WebhookInput, readWebhook } from './_push.js'
import type { Message, Part } from '../types.js'

/**
 * Validation of the platform dialect's params. Each check names the field as the client wrote it, and the
 * result is built from the known fields only: nothing unexpected from the wire reaches the stored task.
 */

type Json = Record<string, unknown>

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

export function readParamsObject(params: unknown): Json {
  if (!isPlainObject(params)) throw new InvalidParamsError('`params` must be an object')
  return params
}

function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw new InvalidParamsError(`\`${field}\` must be a string`)
  return value
}

function optionalObject(value: unknown, field: string): Json | undefined {
  if (value === undefined) return undefined
  if (!isPlainObject(value)) throw new InvalidParamsError(`\`${field}\` must be an object`)
  return value
}

/** Deeper JSON than any real message needs; past it, storing and answering would strain the stack. */
const MAX_DEPTH = 64

/** Refuses free-form JSON (data, metadata) nested deeper than MAX_DEPTH, naming the field. */
export function assertDepth(value: unknown, field: string, depth = 0): void {
  if (typeof value !== 'object' || value === null) return
  if (depth >= MAX_DEPTH) throw new InvalidParamsError(`\`${field}\` is nested more than ${MAX_DEPTH} levels deep`)
  for (const child of Array.isArray(value) ? value : Object.values(value)) assertDepth(child, field, depth + 1)
}

function optionalJson(value: unknown, field: string): Json | undefined {
  const object = optionalObject(value, field)
  assertDepth(object, field)
  return object
}

export function readTaskId(params: unknown): string {
  const id = readParamsObject(params).id
  if (typeof id !== 'string' || id === '') throw new InvalidParamsError('`params.id` must be a non-empty string (the task id)')
  return id
}

export function readHistoryLength(params: Json): number | undefined {
  const { historyLength } = params
  if (historyLength === undefined || historyLength === null) return undefined
  if (typeof historyLength !== 'number' || !Number.isInteger(historyLength) || historyLength < 0) {
    throw new InvalidParamsError('`params.historyLength` must be a non-negative integer')
  }
  return historyLength
}

function readPart(value: unknown, field: string): Part {
  if (!isPlainObject(value)) throw new InvalidParamsError(`\`${field}\` must be an object`)
  const metadata = optionalJson(value.metadata, `${field}.metadata`)
  let part: Part
  switch (value.kind) {
    case 'text':
      if (typeof value.text !== 'string') throw new InvalidParamsError(`\`${field}.text\` must be a string`)
      part = { kind: 'text', text: value.text }
      break
    case 'data':
      if (!isPlainObject(value.data)) throw new InvalidParamsError(`\`${field}.data\` must be a JSON object`)
      assertDepth(value.data, `${field}.data`)
      part = { kind: 'data', data: value.data }
      break
    case 'file': {
      const file = optionalObject(value.file, `${field}.file`)
      if (!file) throw new InvalidParamsError(`\`${field}.file\` must be an object`)
      const uri = optionalString(file.uri, `${field}.file.uri`)
      const bytes = optionalString(file.bytes, `${field}.file.bytes`)
      if (uri === undefined && bytes === undefined) throw new InvalidParamsError(`\`${field}.file\` needs \`uri\` or \`bytes\``)
      const name = optionalString(file.name, `${field}.file.name`)
      const mimeType = optionalString(file.mimeType, `${field}.file.mimeType`)
      part = { kind: 'file', file: { ...(name !== undefined && { name }), ...(mimeType !== undefined && { mimeType }), ...(uri !== undefined ? { uri } : { bytes }) } }
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
  if (typeof value === 'object' && value !== null) return 'an object'
  return String(value ?? null)
}

export function readMessage(value: unknown, field: string): Message {
  if (!isPlainObject(value)) throw new InvalidParamsError(`\`${field}\` must be an object`)
  if (value.role !== undefined && value.role !== 'user') throw new InvalidParamsError(`\`${field}.role\` must be "user"`)
  if (!Array.isArray(value.parts)) throw new InvalidParamsError(`\`${field}.parts\` must be an array`)
  if (value.parts.length === 0) throw new InvalidParamsError(`\`${field}.parts\` must hold at least one part`)
  const parts = value.parts.map((part, i) => readPart(part, `${field}.parts[${i}]`))
  const message: Message = { kind: 'message', messageId: optionalString(value.messageId, `${field}.messageId`) ?? newId(), role: 'user', parts }
  const contextId = optionalString(value.contextId, `${field}.contextId`)
  const taskId = optionalString(value.taskId, `${field}.taskId`)
  const metadata = optionalJson(value.metadata, `${field}.metadata`)
  if (contextId !== undefined) message.contextId = contextId
  if (taskId !== undefined) message.taskId = taskId
  if (metadata) message.metadata = metadata
  return message
}

/** `message/send` and `message/stream`. */
export function readSendParams(params: unknown): SendParams {
  const p = readParamsObject(params)
  const message = readMessage(p.message, 'params.message')
  const metadata = optionalJson(p.metadata, 'params.metadata')
  const configuration = optionalObject(p.configuration, 'params.configuration')

  // A follow-up names its task in the message (A2A) or in params.id; both must agree when both are given.
  const taskIdParam = optionalString(p.id, 'params.id')
  if (taskIdParam !== undefined && message.taskId !== undefined && taskIdParam !== message.taskId) {
    throw new InvalidParamsError('`params.id` and `params.message.taskId` name different tasks')
  }
  const metadataContextId = optionalString(metadata?.contextId, 'params.metadata.contextId')

  const blocking = configuration?.blocking
  if (blocking !== undefined && typeof blocking !== 'boolean') throw new InvalidParamsError('`params.configuration.blocking` must be a boolean')

  const request: SendParams = { message, blocking: blocking ?? true, historyLength: readHistoryLength(configuration ?? {}), acceptedOutputModes: readOutputModes(configuration ?? {}) }
  const taskId = message.taskId ?? taskIdParam
  const contextId = metadataContextId ?? message.contextId
  if (taskId !== undefined) request.taskId = taskId
  if (contextId !== undefined) request.contextId = contextId
  if (configuration?.pushNotificationConfig !== undefined) request.webhook = readWebhook(configuration.pushNotificationConfig, 'params.configuration.pushNotificationConfig')
  return request
}

/** `configuration.acceptedOutputModes`, an array of media types when given. */
export function readOutputModes(configuration: Json): string[] | undefined {
  const modes = configuration.acceptedOutputModes
  if (modes === undefined || modes === null) return undefined
  if (!Array.isArray(modes) || !modes.every((mode) => typeof mode === 'string')) throw new InvalidParamsError('`params.configuration.acceptedOutputModes` must be an array of media types')
  return modes.length ? modes : undefined
}

/**
 * Refuses a message whose client accepts none of the agent's output modes (-32005), so it is not run for
 * an answer nobody can read. `*\/*` and `type/*` match as usual.
 */
export function assertOutputModes(accepted: string[] | undefined, produced: string[]): void {
  if (!accepted) return
  const matches = (want: string, have: string) => {
    const [wantType, wantSub] = want.toLowerCase().split(';', 1)[0]!.trim().split('/')
    const [haveType, haveSub] = have.toLowerCase().split('/')
    return (wantType === '*' || wantType === haveType) && (wantSub === '*' || wantSub === haveSub)
  }
  if (accepted.some((want) => produced.some((have) => matches(want, have)))) return
  throw new A2AError(ErrorCode.ContentTypeNotSupported, `None of the accepted output modes (${accepted.join(', ')}) is one this agent produces (${produced.join(', ')})`)
}
