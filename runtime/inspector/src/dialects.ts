import { type Artifact, type Dialect, type Message, type Part, speaksV1, type Task, type Update } from './model'

/**
 * What differs between the dialects one A2A server speaks: method names, the `A2A-Version` header, and the shapes
 * of parts, states and stream events. Requests are built here and answers read back into the page's model (REST's
 * paths and errors: rest.ts).
 */

type Json = Record<string, unknown>
export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

export type Operation = 'send' | 'stream' | 'subscribe' | 'get' | 'cancel' | 'list'

/** The dialects spoken in JSON-RPC on the agent's endpoint, each with its method names. */
type JsonRpcDialect = Exclude<Dialect, 'a2a-1.0-rest'>

const METHODS: Record<JsonRpcDialect, Record<Operation, string>> = {
  platform: {
    send: 'message/send',
    stream: 'message/stream',
    subscribe: 'tasks/resubscribe',
    get: 'tasks/get',
    cancel: 'tasks/cancel',
    list: '',
  },
  'a2a-0.3': {
    send: 'message/send',
    stream: 'message/stream',
    subscribe: 'tasks/resubscribe',
    get: 'tasks/get',
    cancel: 'tasks/cancel',
    list: '',
  },
  'a2a-1.0': {
    send: 'SendMessage',
    stream: 'SendStreamingMessage',
    subscribe: 'SubscribeToTask',
    get: 'GetTask',
    cancel: 'CancelTask',
    list: 'ListTasks',
  },
}

export const methodName = (dialect: JsonRpcDialect, operation: Operation): string => METHODS[dialect][operation]

/** The header that picks the dialect (the platform speaks on slash-named methods without one). */
export function dialectHeaders(dialect: Dialect): Record<string, string> {
  if (speaksV1(dialect)) return { 'A2A-Version': '1.0' }
  if (dialect === 'a2a-0.3') return { 'A2A-Version': '0.3' }
  return {}
}

export interface Outgoing {
  parts: Part[]
  contextId?: string
  taskId?: string
  skillId?: string
  /** A webhook for the task's push notifications. */
  pushUrl?: string
}

function partOut(dialect: Dialect, part: Part): Json {
  if (speaksV1(dialect)) {
    if (part.kind === 'text') return { text: part.text }
    if (part.kind === 'data') return { data: part.data }
    const out: Json = part.uri !== undefined ? { url: part.uri } : { raw: part.bytes ?? '' }
    if (part.name) out.filename = part.name
    if (part.mimeType) out.mediaType = part.mimeType
    return out
  }
  if (part.kind === 'text') return { kind: 'text', text: part.text }
  if (part.kind === 'data') return { kind: 'data', data: part.data }
  const file: Json = part.uri !== undefined ? { uri: part.uri } : { bytes: part.bytes ?? '' }
  if (part.name) file.name = part.name
  if (part.mimeType) file.mimeType = part.mimeType
  return { kind: 'file', file }
}

/**
 * The params of a send (or stream) in a dialect. `blocking: false` asks for the task at once (a send that is not
 * streamed, so the page can follow and cancel it).
 */
export function sendParams(
  dialect: Dialect,
  outgoing: Outgoing,
  messageId: string,
  { blocking }: { blocking: boolean },
): Json {
  const v1 = speaksV1(dialect)
  const message: Json = {
    role: v1 ? 'ROLE_USER' : 'user',
    messageId,
    parts: outgoing.parts.map((part) => partOut(dialect, part)),
  }
  if (!v1) message.kind = 'message'
  if (outgoing.contextId) message.contextId = outgoing.contextId
  if (outgoing.taskId) message.taskId = outgoing.taskId
  if (outgoing.skillId) message.metadata = { skillId: outgoing.skillId }
  const params: Json = { message }
  // The platform contract names the context in the params' metadata; the message's own field works too.
  if (dialect === 'platform' && outgoing.contextId) params.metadata = { contextId: outgoing.contextId }
  const configuration: Json = {}
  if (!blocking) Object.assign(configuration, v1 ? { returnImmediately: true } : { blocking: false })
  // One webhook per task, named, so a later message on the task replaces it rather than adding another.
  if (outgoing.pushUrl && !outgoing.taskId) {
    const webhook = { id: 'a2a-inspector', url: outgoing.pushUrl, token: 'a2a-inspector' }
    configuration[v1 ? 'taskPushNotificationConfig' : 'pushNotificationConfig'] = webhook
  }
  if (Object.keys(configuration).length) params.configuration = configuration
  return params
}

const V1_STATE = /^TASK_STATE_(.+)$/

function stateIn(value: unknown): string {
  const text = str(value) ?? 'unknown'
  const v1 = V1_STATE.exec(text)
  return v1 ? v1[1]!.toLowerCase().replace(/_/g, '-') : text
}

function partIn(value: unknown): Part {
  if (!isObject(value)) return { kind: 'data', data: value }
  if (typeof value.text === 'string') return { kind: 'text', text: value.text }
  if (value.kind === 'data' || ('data' in value && value.kind === undefined)) return { kind: 'data', data: value.data }
  const file = isObject(value.file) ? value.file : value
  const part: Part = { kind: 'file' }
  const name = str(file.name) ?? str(file.filename)
  const mimeType = str(file.mimeType) ?? str(file.mediaType) ?? str(value.mediaType)
  const uri = str(file.uri) ?? str(file.url)
  const bytes = str(file.bytes) ?? str(file.raw)
  if (name) part.name = name
  if (mimeType) part.mimeType = mimeType
  if (uri !== undefined) part.uri = uri
  if (bytes !== undefined) part.bytes = bytes
  return part
}

const partsIn = (value: unknown): Part[] => (Array.isArray(value) ? value.map(partIn) : [])

function messageIn(value: unknown): Message | undefined {
  if (!isObject(value)) return undefined
  const message: Message = { role: /user/i.test(str(value.role) ?? '') ? 'user' : 'agent', parts: partsIn(value.parts) }
  const messageId = str(value.messageId)
  const taskId = str(value.taskId)
  const contextId = str(value.contextId)
  if (messageId) message.messageId = messageId
  if (taskId) message.taskId = taskId
  if (contextId) message.contextId = contextId
  return message
}

function artifactIn(value: unknown): Artifact {
  const artifact = isObject(value) ? value : {}
  const out: Artifact = { artifactId: str(artifact.artifactId) ?? '', parts: partsIn(artifact.parts) }
  const name = str(artifact.name)
  if (name) out.name = name
  return out
}

export function taskIn(value: unknown): Task {
  const task = isObject(value) ? value : {}
  const status = isObject(task.status) ? task.status : {}
  const out: Task = {
    id: str(task.id) ?? '',
    contextId: str(task.contextId) ?? '',
    state: stateIn(status.state),
    artifacts: Array.isArray(task.artifacts) ? task.artifacts.map(artifactIn) : [],
    history: Array.isArray(task.history)
      ? task.history.map(messageIn).filter((message): message is Message => !!message)
      : [],
  }
  const statusMessage = messageIn(status.message)
  if (statusMessage) out.statusMessage = statusMessage
  const timestamp = str(status.timestamp)
  if (timestamp) out.timestamp = timestamp
  return out
}

function statusUpdate(value: Json): Update {
  const status = isObject(value.status) ? value.status : {}
  const state = stateIn(status.state)
  const update: Update = {
    kind: 'status',
    taskId: str(value.taskId) ?? '',
    contextId: str(value.contextId) ?? '',
    state,
    // v1.0 has no `final`: a stream's turn ends at a terminal or interrupted state.
    final:
      typeof value.final === 'boolean'
        ? value.final
        : /^(completed|failed|canceled|rejected|input-required|auth-required)$/.test(state),
  }
  const message = messageIn(status.message)
  if (message) update.message = message
  const timestamp = str(status.timestamp)
  if (timestamp) update.timestamp = timestamp
  return update
}

function artifactUpdate(value: Json): Update {
  const artifact = artifactIn(value.artifact)
  const lastChunk = value.lastChunk === true || (isObject(value.artifact) && value.artifact.lastChunk === true)
  return {
    kind: 'artifact',
    taskId: str(value.taskId) ?? '',
    contextId: str(value.contextId) ?? '',
    artifact,
    append: value.append === true,
    lastChunk,
  }
}

/** A result (of a send, a get, a stream event) in any dialect, as updates. */
export function resultIn(result: unknown): Update[] {
  if (!isObject(result)) return []
  // v1.0: one key says what it is.
  if (isObject(result.statusUpdate)) return [statusUpdate(result.statusUpdate)]
  if (isObject(result.artifactUpdate)) return [artifactUpdate(result.artifactUpdate)]
  if (isObject(result.task)) return [{ kind: 'task', task: taskIn(result.task) }]
  if (isObject(result.message) && !('kind' in result)) return [{ kind: 'message', message: messageIn(result.message)! }]
  // v0.3 and the platform: `kind` says it.
  if (result.kind === 'status-update') return [statusUpdate(result)]
  if (result.kind === 'artifact-update') return [artifactUpdate(result)]
  if (result.kind === 'message') return [{ kind: 'message', message: messageIn(result)! }]
  if (result.kind === 'task' || (typeof result.id === 'string' && isObject(result.status)))
    return [{ kind: 'task', task: taskIn(result) }]
  return []
}

/** One SSE event's JSON (a JSON-RPC response, or the platform's notification) as updates. */
export function frameIn(json: unknown): Update[] {
  if (!isObject(json)) return []
  if (isObject(json.error)) return [errorIn(json.error)]
  if (json.method === 'tasks/statusUpdate' && isObject(json.params)) return [statusUpdate(json.params)]
  if (json.method === 'tasks/artifactUpdate' && isObject(json.params)) return [artifactUpdate(json.params)]
  return resultIn(json.result)
}

/**
 * The A2A error type an error names in its `google.rpc.ErrorInfo` detail: among a google.rpc.Status's `details`
 * (REST), or a v1.0 JSON-RPC error's `data`.
 */
function reasonOf(details: unknown): string | undefined {
  if (!Array.isArray(details)) return undefined
  const info = details.find(
    (detail) => isObject(detail) && String(detail['@type']).endsWith('google.rpc.ErrorInfo') && str(detail.reason),
  )
  return info ? str(info.reason) : undefined
}

/** A JSON-RPC error object, or a google.rpc.Status (REST's `error`), as the page shows it. */
export function errorIn(error: unknown): Update {
  const value = isObject(error) ? error : {}
  const update: Update = {
    kind: 'error',
    code: typeof value.code === 'number' ? value.code : 0,
    message: str(value.message) ?? 'Unknown error',
    data: value.data ?? value.details,
  }
  const status = str(value.status)
  const reason = reasonOf(value.details) ?? reasonOf(value.data)
  if (status) update.status = status
  if (reason) update.reason = reason
  return update
}
