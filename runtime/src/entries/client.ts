/**
 * `a2a-runtime/client`: an A2A v1.0 client for any agent (this runtime's or another's), as the `a2a` command uses
 * it: `connect` reads the agent's card and answers one method per v1.0 operation over JSON-RPC or HTTP+JSON.
 */
export type {
  A2AClient,
  CallOptions,
  ConnectOptions,
  StreamEvent,
  StreamOptions,
  WireEntry,
  WireHook,
} from '../client/client.js'
export { connect } from '../client/client.js'
export type { A2AClientFailureKind, A2AErrorName } from '../client/errors.js'
export { A2AClientFailure, A2AProtocolError } from '../client/errors.js'
export type {
  AgentCard,
  AgentInterface,
  Artifact,
  AuthenticationInfo,
  JsonObject,
  JsonValue,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  Part,
  SendMessageConfiguration,
  SendMessageRequest,
  SendMessageResponse,
  StreamResponse,
  Task,
  TaskArtifactUpdateEvent,
  TaskPushNotificationConfig,
  TaskState,
  TaskStatus,
  TaskStatusUpdateEvent,
} from '../client/types.js'
