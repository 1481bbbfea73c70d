/**
 * A2A v1.0 as a client sees it on the wire: the protocol's messages in ProtoJSON (camelCase fields, enums by their
 * full names, a oneof as the one field set, timestamps as RFC 3339 text, bytes as base64), whichever binding carried
 * them. The client core answers these unchanged, so `a2a … -o json` prints the protocol's own types.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }
export type JsonObject = { [key: string]: JsonValue }

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

export interface TaskStatus {
  state: TaskState
  message?: Message
  timestamp?: string
}

export interface Artifact {
  artifactId: string
  name?: string
  description?: string
  parts: Part[]
  metadata?: JsonObject
  extensions?: string[]
}

export interface Task {
  id: string
  contextId: string
  status: TaskStatus
  artifacts?: Artifact[]
  history?: Message[]
  metadata?: JsonObject
}

export interface TaskStatusUpdateEvent {
  taskId: string
  contextId: string
  status: TaskStatus
  metadata?: JsonObject
}

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

export interface SendMessageConfiguration {
  acceptedOutputModes?: string[]
  taskPushNotificationConfig?: TaskPushNotificationConfig
  historyLength?: number
  returnImmediately?: boolean
}

export interface SendMessageRequest {
  message: Message
  configuration?: SendMessageConfiguration
  metadata?: JsonObject
}

export interface GetTaskRequest {
  id: string
  historyLength?: number
}

export interface CancelTaskRequest {
  id: string
  metadata?: JsonObject
}

export interface ListTasksRequest {
  contextId?: string
  status?: TaskState
  pageSize?: number
  pageToken?: string
  historyLength?: number
  statusTimestampAfter?: string
  includeArtifacts?: boolean
}

export interface ListTasksResponse {
  tasks: Task[]
  nextPageToken: string
  pageSize: number
  totalSize: number
}

export interface AuthenticationInfo {
  scheme: string
  credentials?: string
}

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

export interface ListTaskPushNotificationConfigsRequest {
  taskId: string
  pageSize?: number
  pageToken?: string
}

export interface ListTaskPushNotificationConfigsResponse {
  configs: TaskPushNotificationConfig[]
  nextPageToken?: string
}

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
