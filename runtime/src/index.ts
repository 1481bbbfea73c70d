// biome-ignore-all assist/source/organizeImports: grouped by what a reader looks for, not by path
// Agent
export { defineAgent } from './agent.js'
export type { Agent, AgentDefinition, ArtifactContent, ArtifactOptions, ExecutionContext, MessageContent, TaskHandle } from './agent.js'
export type { ConversationOptions } from './core/_conversation.js'

// Serving
export { createA2AApp } from './http/app.js'
export type { A2AApp, A2AAppOptions, SlashDialect } from './http/app.js'
export { serveAgent } from './node/serve.js'
export type { A2AServer, ServeOptions } from './node/serve.js'
export { agentWorker } from './workers/agent-worker.js'
export type { AgentWorker, AgentWorkerOptions, DurableObjectStateLike } from './workers/agent-worker.js'
export { AUTH_ENV } from './http/auth-options.js'
export type { AuthOptions } from './http/auth-options.js'
export type { Env } from './settings.js'

// Errors
export {
  A2AError,
  ConfigurationError,
  ErrorCode,
  InvalidParamsError,
  InvalidRequestError,
  MethodNotFoundError,
  ParseError,
  ServerUnavailableError,
  TaskNotCancelableError,
  TaskNotFoundError,
  TaskTerminalError,
  UnauthorizedError,
  UnsupportedOperationError,
} from './errors.js'

// Storage
export {
  DEFAULT_ENDED_LOGS,
  DEFAULT_EVENT_LOG_BYTES,
  DEFAULT_MAX_TASKS,
  DEFAULT_STORE_MAX_BYTES,
  DEFAULT_TTL_MS,
  MemoryTaskStore,
  createMemoryStore,
} from './stores/memory.js'
export type { MemoryStoreOptions } from './stores/memory.js'
export { FileTaskStore, createFileStore } from './stores/file.js'
export type { FileStoreOptions } from './stores/file.js'
export { storeFromSetting } from './stores/from-setting.js'
export { DEFAULT_DURABLE_OBJECT_STORE_MAX_BYTES, DurableObjectTaskStore, createDurableObjectStore } from './stores/durable-object.js'
export type { DurableObjectStorageLike, DurableObjectStoreOptions } from './stores/durable-object.js'
export { DEFAULT_LEASE_MS, RedisTaskStore, createRedisStore } from './stores/redis/store.js'
export type { RedisStoreOptions } from './stores/redis/store.js'
export type { ClusterLink } from './stores/task-store.js'
export type { MaybePromise, TaskStore } from './stores/task-store.js'
export type { TaskPage, TaskQuery } from './stores/task-store.js'
export { taskStoreContract } from './stores/contract/task-store-contract.js'
export type { StoreCheck, StoreContractOptions } from './stores/contract/task-store-contract.js'
export type { PushOptions } from './push/push-options.js'
export type { PushConfig, PushConfigStore, PushDialect } from './push/push-config.js'

// Logging
export { createConsoleLogger } from './logger.js'
export type { LogLevel, Logger } from './logger.js'

// Data model
export type {
  AgentAuthentication,
  AgentCapabilities,
  AgentCard,
  AgentCardInput,
  AgentInterface,
  AgentSkill,
  Artifact,
  AuthScheme,
  DataPart,
  FileContent,
  FilePart,
  Message,
  Part,
  Role,
  Task,
  TaskArtifactEvent,
  TaskEvent,
  TaskState,
  TaskStatus,
  TaskStatusEvent,
  TextPart,
} from './types.js'
