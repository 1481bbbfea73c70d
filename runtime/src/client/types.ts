/**
 * A2A v1.0 as a client sees it on the wire: the protocol's messages in ProtoJSON (camelCase fields, enums by their
 * full names, a oneof as the one field set, timestamps as RFC 3339 text, bytes as base64), whichever binding carried
 * them. The client core answers these unchanged, so `a2a … -o json` prints the protocol's own types.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }
/** A JSON object, as ProtoJSON carries a `google.protobuf.Struct` (metadata, data parts). */
export type JsonObject = { [key: string]: JsonValue }

/** Where a task stands, by the enum's full name; an agent may send a state A2A does not define. */
export type TaskState =
  | 'TASK_STATE_UNSPECIFIED'
  | 'TASK_STATE_SUBMITTED'
  | 'TASK_STATE_WORKING'
  | 'TASK_STATE_COMPLETED'
  | 'TASK_STATE_FAILED'
  | 'TASK_STATE_CANCELED'
  | 'TASK_STATE_INPUT_REQUIRED'
  | 'TASK_STATE_REJECTED'
  | 'TASK_STATE_AUTH_REQUIRED'

/** One piece of content: exactly one of `text`, `raw` (base64), `url` or `data`. */
export interface Part {
  text?: string
  raw?: string
  url?: string
  data?: JsonValue
  metadata?: JsonObject
  filename?: string
  mediaType?: string
}

/** One turn of a conversation: the user's or the agent's, with its parts. */
export interface Message {
  messageId: string
  contextId?: string
  taskId?: string
  role: 'ROLE_USER' | 'ROLE_AGENT' | 'ROLE_UNSPECIFIED'
  parts: Part[]
  metadata?: JsonObject
  extensions?: string[]
  referenceTaskIds?: string[]
}

/** A task's state, the message that came with it, and when it was reached. */
export interface TaskStatus {
  state: TaskState
  message?: Message
  timestamp?: string
}

/** Something a task produced, in parts. */
export interface Artifact {
  artifactId: string
  name?: string
  description?: string
  parts: Part[]
  metadata?: JsonObject
  extensions?: string[]
}

/** A task as the agent keeps it: its state, artifacts and (as asked) history. */
export interface Task {
  id: string
  contextId: string
  status: TaskStatus
  artifacts?: Artifact[]
  history?: Message[]
  metadata?: JsonObject
}

/** A stream event: the task's state changed. */
export interface TaskStatusUpdateEvent {
  taskId: string
  contextId: string
  status: TaskStatus
  metadata?: JsonObject
}

/** A stream event: an artifact, or a chunk of one (`append`, `lastChunk`). */
export interface TaskArtifactUpdateEvent {
  taskId: string
  contextId: string
  artifact: Artifact
  append?: boolean
  lastChunk?: boolean
  metadata?: JsonObject
}

/** SendMessage's answer: one of the two fields is set (the oneof is the discriminator). */
export type SendMessageResponse = { task: Task; message?: never } | { message: Message; task?: never }

/** One event of a stream: one of the four fields is set. */
export type StreamResponse =
  | { task: Task }
  | { message: Message }
  | { statusUpdate: TaskStatusUpdateEvent }
  | { artifactUpdate: TaskArtifactUpdateEvent }

/** How the agent should answer a message: output modes, a webhook, history, and whether to wait. */
export interface SendMessageConfiguration {
  acceptedOutputModes?: string[]
  taskPushNotificationConfig?: TaskPushNotificationConfig
  historyLength?: number
  returnImmediately?: boolean
}

/** SendMessage and SendStreamingMessage: the message, how to answer it, and request metadata. */
export interface SendMessageRequest {
  message: Message
  configuration?: SendMessageConfiguration
  metadata?: JsonObject
}

/** GetTask: the task, and how many messages of its history to include. */
export interface GetTaskRequest {
  id: string
  historyLength?: number
}

/** CancelTask: the task, with request metadata. */
export interface CancelTaskRequest {
  id: string
  metadata?: JsonObject
}

/** ListTasks: filters and the page asked for. */
export interface ListTasksRequest {
  contextId?: string
  status?: TaskState
  pageSize?: number
  pageToken?: string
  historyLength?: number
  statusTimestampAfter?: string
  includeArtifacts?: boolean
}

/** ListTasks' page: the tasks, the token of the next page (empty on the last), sizes. */
export interface ListTasksResponse {
  tasks: Task[]
  nextPageToken: string
  pageSize: number
  totalSize: number
}

/** How the agent authenticates to a webhook. */
export interface AuthenticationInfo {
  scheme: string
  credentials?: string
}

/** A webhook the agent posts a task's updates to. */
export interface TaskPushNotificationConfig {
  id?: string
  taskId?: string
  url: string
  token?: string
  authentication?: AuthenticationInfo
}

/** Names one push config of a task (Get and Delete). */
export interface GetTaskPushNotificationConfigRequest {
  taskId: string
  id: string
}

/** ListTaskPushNotificationConfigs: the task and the page asked for. */
export interface ListTaskPushNotificationConfigsRequest {
  taskId: string
  pageSize?: number
  pageToken?: string
}

/** A page of a task's push configs. */
export interface ListTaskPushNotificationConfigsResponse {
  configs: TaskPushNotificationConfig[]
  nextPageToken?: string
}

/** One address of the agent in one binding and A2A version (a card's `supportedInterfaces`). */
export interface AgentInterface {
  url: string
  protocolBinding: 'JSONRPC' | 'HTTP+JSON' | 'GRPC' | (string & {})
  tenant?: string
  protocolVersion: string
}

/** The card's fields a client acts on; every other field is kept as the agent sent it. */
export interface AgentCard {
  name: string
  description: string
  version: string
  supportedInterfaces: AgentInterface[]
  capabilities: {
    streaming?: boolean
    pushNotifications?: boolean
    extendedAgentCard?: boolean
    [key: string]: unknown
  }
  securitySchemes?: Record<string, JsonObject>
  securityRequirements?: { schemes: Record<string, { list?: string[] }> }[]
  defaultInputModes: string[]
  defaultOutputModes: string[]
  skills: JsonObject[]
  [key: string]: unknown
}

/** The task has ended: no message continues it. */
export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
])

/** The caller must act (answer, or authorize) before the task goes on. */
export const INTERRUPTED_STATES: ReadonlySet<TaskState> = new Set([
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_AUTH_REQUIRED',
])
