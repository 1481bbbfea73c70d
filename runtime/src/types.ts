/**
 * The A2A data model as the runtime keeps it. The shapes follow the wire format of the platform
 * dialect (`kind` discriminators, kebab-case states), so a stored task serialises without copying.
 */

export type TaskState = 'submitted' | 'working' | 'input-required' | 'auth-required' | 'completed' | 'failed' | 'canceled' | 'rejected'

type Role = 'user' | 'agent'

export interface TextPart {
  kind: 'text'
  text: string
  /** The text's media type (`text/markdown`), when it is not plain text. A2A v1.0; v0.3 clients do not see it. */
  mediaType?: string
  metadata?: Record<string, unknown>
}

interface DataPart {
  kind: 'data'
  /**
   * Structured content. An object in the platform dialect and A2A v0.3; any JSON value in A2A v1.0 (an array, a
   * string, a number, a boolean or null too), which v0.3 clients receive wrapped as `{ "value": … }`.
   */
  data: unknown
  /** The data's media type (`application/vnd.example+json`). A2A v1.0; v0.3 clients do not see it. */
  mediaType?: string
  metadata?: Record<string, unknown>
}

interface FileContent {
  name?: string
  mimeType?: string
  /** Base64-encoded content. */
  bytes?: string
  uri?: string
}

interface FilePart {
  kind: 'file'
  file: FileContent
  metadata?: Record<string, unknown>
}

export type Part = TextPart | DataPart | FilePart

export interface Message {
  kind: 'message'
  messageId: string
  role: Role
  parts: Part[]
  contextId?: string
  taskId?: string
  metadata?: Record<string, unknown>
}

export interface TaskStatus {
  state: TaskState
  message?: Message
  /** ISO 8601 time of the change. */
  timestamp: string
}

export interface Artifact {
  artifactId: string
  parts: Part[]
  name?: string
  description?: string
  metadata?: Record<string, unknown>
  /** True on the final chunk of an artifact sent in pieces. */
  lastChunk?: boolean
}

export interface Task {
  kind: 'task'
  id: string
  contextId: string
  status: TaskStatus
  artifacts: Artifact[]
  history: Message[]
  metadata?: Record<string, unknown>
}

/** A state change of a task, in the order the agent produced it. */
export interface TaskStatusEvent {
  kind: 'status-update'
  /** Position in the task's event log, from 1. */
  seq: number
  taskId: string
  contextId: string
  status: TaskStatus
  /** True when the task settles: terminal, or waiting for the client (input or auth required). */
  final: boolean
}

/** A result (or a chunk of one) produced by the agent. */
interface TaskArtifactEvent {
  kind: 'artifact-update'
  seq: number
  taskId: string
  contextId: string
  artifact: Artifact
  /** The parts extend the artifact with the same id instead of replacing it. */
  append: boolean
  lastChunk: boolean
}

export type TaskEvent = TaskStatusEvent | TaskArtifactEvent

// --- Agent Card -------------------------------------------------------------------------------------

export interface AgentSkill {
  id: string
  name: string
  description: string
  tags: string[]
  examples?: string[]
  inputModes?: string[]
  outputModes?: string[]
}

interface AgentCapabilities {
  /** Serves `message/stream`. Default `true`. */
  streaming?: boolean
  /** Push notifications to client webhooks (the config methods and delivery; see `push` in the app options). Default `false`. */
  pushNotifications?: boolean
}

/** Scheme names the runtime validates. `bearer`: `Authorization: Bearer <token>`; `apiKey`: `X-API-Key: <key>`. */
export type AuthScheme = 'bearer' | 'apiKey'

interface AgentAuthentication {
  schemes: AuthScheme[]
}

/** The card as the agent author declares it; the runtime adds `url` and the interfaces. */
export interface AgentCardInput {
  name: string
  description: string
  /** Version of the agent itself, dotted (`1.0.0`). Default `1.0.0`. */
  version?: string
  capabilities?: AgentCapabilities
  /** Default `['text/plain']`. */
  defaultInputModes?: string[]
  /** Default `['text/plain']`. */
  defaultOutputModes?: string[]
  skills?: AgentSkill[]
  /**
   * The single declaration of authentication: the server validates exactly these schemes.
   *
   * **Important:** credentials come from the environment (`A2A_BEARER_TOKEN`, `A2A_API_KEY`; a comma-separated list each) or the
   * `auth` option of `createA2AApp`; a scheme without credentials stops the app from starting.
   */
  authentication?: AgentAuthentication
  provider?: { organization: string; url: string }
  documentationUrl?: string
  iconUrl?: string
}

interface AgentInterface {
  url: string
  /** A2A v1.0 name of the binding. */
  protocolBinding: 'JSONRPC'
  /** A2A v0.3 and platform name of the binding. */
  transport: 'JSONRPC'
}

/** The card as served. */
export interface AgentCard extends Required<Pick<AgentCardInput, 'name' | 'description' | 'version'>> {
  url: string
  supportedInterfaces: AgentInterface[]
  capabilities: Required<AgentCapabilities>
  defaultInputModes: string[]
  defaultOutputModes: string[]
  skills: AgentSkill[]
  authentication?: AgentAuthentication
  provider?: { organization: string; url: string }
  documentationUrl?: string
  iconUrl?: string
}

/** A value, or a promise of it: what a store's methods may return, in memory or over the network. */
export type MaybePromise<T> = T | Promise<T>
