/**
 * The A2A data model as the runtime keeps it. The shapes follow the wire format of the platform
 * dialect (`kind` discriminators, kebab-case states), so a stored task serialises without copying.
 */

/**
 * Where a task is in its life: `submitted` and `working` while it runs, `input-required` and `auth-required` while it
 * waits for the client, and the terminal ones, after which it never moves: `completed`, `failed`, `canceled`,
 * `rejected`.
 */
export type TaskState =
  | 'submitted'
  | 'working'
  | 'input-required'
  | 'auth-required'
  | 'completed'
  | 'failed'
  | 'canceled'
  | 'rejected'

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

/** One piece of a message or an artifact: text, structured data (`kind: 'data'`) or a file. */
export type Part = TextPart | DataPart | FilePart

/** One turn of the conversation: the user's (`role: 'user'`) or the agent's (`role: 'agent'`). */
export interface Message {
  kind: 'message'
  /** Unique per message; the client's for its own messages. */
  messageId: string
  /** Who said it: `user` or `agent`. */
  role: Role
  /** What it says, in order. */
  parts: Part[]
  /** The conversation it belongs to. */
  contextId?: string
  /** The task it belongs to; a client's message that names one continues that task. */
  taskId?: string
  /** Extension data, carried as it is. */
  metadata?: Record<string, unknown>
}

export interface TaskStatus {
  /** Where the task is now. */
  state: TaskState
  /** What the agent said with the change: progress, a question, a failure's reason. */
  message?: Message
  /** ISO 8601 time of the change. */
  timestamp: string
}

/** A result of a task (`task.artifact()`): what the client takes as the answer. */
export interface Artifact {
  /** Unique within its task; chunks of one artifact share it. */
  artifactId: string
  /** Its content, in order (a chunked artifact's chunks one after the other). */
  parts: Part[]
  /** A name a client may show. */
  name?: string
  /** What it holds, for a client to show. */
  description?: string
  /** Extension data, carried as it is. */
  metadata?: Record<string, unknown>
  /** True on the final chunk of an artifact sent in pieces. */
  lastChunk?: boolean
}

/** A unit of work the agent does for a client: its state, the results so far and the messages that led to them. */
export interface Task {
  kind: 'task'
  /** The task's id, given by the runtime. */
  id: string
  /** The conversation the task belongs to; tasks of one context share it. */
  contextId: string
  /** Its state, with the message that came with it and when it changed. */
  status: TaskStatus
  /** Its results, in the order they were first sent. */
  artifacts: Artifact[]
  /** Its messages, oldest first. */
  history: Message[]
  /** Extension data, carried as it is. */
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

/** What happened to a task, numbered (`seq`): a state change or an artifact. Streams send these; stores keep them. */
export type TaskEvent = TaskStatusEvent | TaskArtifactEvent

// --- Agent Card -------------------------------------------------------------------------------------

/** Something the agent can do, as its card lists it for clients (and models) choosing an agent. */
export interface AgentSkill {
  /** Unique among the card's skills. */
  id: string
  /** A short name for people. */
  name: string
  /** What the skill does, for a client or a model to decide whether to use it. */
  description: string
  /** Keywords that describe it. */
  tags: string[]
  /** Requests it handles, as a user would write them. */
  examples?: string[]
  /** Media types it takes, when they differ from the card's `defaultInputModes`. */
  inputModes?: string[]
  /** Media types it answers with, when they differ from the card's `defaultOutputModes`. */
  outputModes?: string[]
}

/** The optional A2A features the agent serves. */
interface AgentCapabilities {
  /**
   * Serves `message/stream`.
   * @default true
   */
  streaming?: boolean
  /**
   * Push notifications to client webhooks (the config methods and delivery; see `push` in the app options).
   * @default false
   */
  pushNotifications?: boolean
}

/**
 * Scheme names the runtime validates. `bearer`: `Authorization: Bearer <token>` (tokens from a list); `apiKey`:
 * `X-API-Key: <key>`; `oidc`: `Authorization: Bearer <JWT>` issued by an OpenID Connect provider.
 */
export type AuthScheme = 'bearer' | 'apiKey' | 'oidc'

/**
 * Who is calling, as its credential proves: agent code reads it as `ctx.principal`, and each task belongs to the
 * principal that created it (no other caller can see, follow, cancel or continue it).
 */
export interface Principal {
  /**
   * The same for every request of the same caller, and what its tasks are owned by: `<issuer> <subject>` for a
   * token of an OpenID Connect issuer, `credential:<name>` for a named bearer token or API key, and `credential:`
   * for the unnamed ones (together one shared caller).
   */
  readonly id: string
  /** The scheme the request proved itself with. */
  readonly scheme: AuthScheme
  /** The token's `sub`, or the name given with the credential (`A2A_API_KEY=alice:…`); undefined when unnamed. */
  readonly subject: string | undefined
  /** The token's `iss`; undefined for bearer tokens and API keys from a list. */
  readonly issuer: string | undefined
  /** The scopes the token grants (its `scope` or `scp` claim); empty for bearer tokens and API keys. */
  readonly scopes: readonly string[]
  /** Every claim of the token; empty for bearer tokens and API keys. */
  readonly claims: Readonly<Record<string, unknown>>
}

/** The schemes a request must satisfy one of; credentials come from the `auth` option or the environment. */
interface AgentAuthentication {
  /**
   * `bearer` (`Authorization: Bearer <token>`), `apiKey` (`X-API-Key: <key>`) and `oidc` (`Authorization: Bearer
   * <JWT>` of an OpenID Connect issuer), at least one.
   */
  schemes: AuthScheme[]
}

/** The card as the agent author declares it; the runtime adds `url` and the interfaces. */
export interface AgentCardInput {
  /** The agent's name, as clients show it. */
  name: string
  /** What the agent does, for people and for models choosing an agent. */
  description: string
  /**
   * Version of the agent itself, dotted (`1.0.0`).
   * @default '1.0.0'
   */
  version?: string
  /** The optional features it serves: streaming, push notifications. */
  capabilities?: AgentCapabilities
  /**
   * Media types the agent takes, for every skill that does not say.
   * @default ['text/plain']
   */
  defaultInputModes?: string[]
  /**
   * Media types the agent answers with, for every skill that does not say.
   * @default ['text/plain']
   */
  defaultOutputModes?: string[]
  /**
   * What the agent can do, for clients to choose by.
   * @default []
   */
  skills?: AgentSkill[]
  /**
   * The single declaration of authentication: the server validates exactly these schemes.
   *
   * **Important:** credentials come from the environment (`A2A_BEARER_TOKEN`, `A2A_API_KEY`, a comma-separated list
   * each; `A2A_OIDC_ISSUER` and `A2A_OIDC_AUDIENCE`) or the `auth` option of `createA2AApp`; a scheme without them
   * stops the app from starting.
   */
  authentication?: AgentAuthentication
  /**
   * What only authenticated callers see: the authenticated extended card (A2A `GetExtendedAgentCard`, v0.3
   * `agent/getAuthenticatedExtendedCard`), the public card with these skills added. Needs `authentication`.
   */
  extendedCard?: ExtendedCardInput
  /** Who runs the agent. */
  provider?: {
    /** The organization's name. */
    organization: string
    /** Its website. */
    url: string
  }
  /** Where the agent's documentation is. */
  documentationUrl?: string
  /** An icon for the agent. */
  iconUrl?: string
}

/** The authenticated extended card: the public card with more. */
interface ExtendedCardInput {
  /** Skills added to the public card's. */
  skills: AgentSkill[]
  /** A description in place of the public one. */
  description?: string
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
  /** Served to authenticated callers only (never in the public card). */
  extendedCard?: ExtendedCardInput
}

/** A value, or a promise of it: what a store's methods may return, in memory or over the network. */
export type MaybePromise<T> = T | Promise<T>
