/**
 * The requirements `a2a conformance` checks, each under the official conformance kit's own id (a2a-tck,
 * `tck/requirements/*.py` of its A2A v1.0 line) and at the kit's level, with the section of the A2A v1.0
 * specification it comes from and what the check asks, in our words. A check of a requirement the kit has no id for
 * would name the specification's section instead; every check here has a kit id.
 */

export type Level = 'MUST' | 'SHOULD' | 'MAY'

export interface Requirement {
  level: Level
  /** The A2A v1.0 section. */
  section: string
  /** What the check asks of the agent. */
  what: string
}

export const REQUIREMENTS = {
  // The Agent Card
  'CARD-DISC-001': { level: 'MUST', section: '8.2', what: 'the card is served at /.well-known/agent-card.json' },
  'CARD-STRUCT-001': {
    level: 'MUST',
    section: '4.4.1',
    what: 'the card has every required field (name, description, supportedInterfaces, version, capabilities, default modes, skills)',
  },
  'CARD-PROTO-001': {
    level: 'MUST',
    section: '8.3',
    what: 'the card declares an interface of protocol version 1.0 (Major.Minor)',
  },
  'CARD-PROTO-002': {
    level: 'MUST',
    section: '8.3.1',
    what: 'each interface names its binding and an absolute URL, and answers there in that binding',
  },
  'CARD-CACHE-001': { level: 'SHOULD', section: '8.6.1', what: 'the card is served with Cache-Control max-age' },
  'CARD-CACHE-002': { level: 'SHOULD', section: '8.6.1', what: 'the card is served with an ETag' },
  'CARD-CACHE-003': { level: 'MAY', section: '8.6.1', what: 'the card is served with Last-Modified' },
  // Core operations
  'CORE-SEND-001': {
    level: 'MUST',
    section: '3.1.1',
    what: 'SendMessage of a plain text message answers a Task or a Message',
  },
  'DM-TASK-001': { level: 'MUST', section: '4.1.1', what: 'a Task has its id and status' },
  'DM-TASK-002': { level: 'MUST', section: '4.1.3', what: 'task states are TaskState names (TASK_STATE_…)' },
  'CORE-GET-001': { level: 'MUST', section: '3.1.3', what: 'GetTask answers the task asked for' },
  'CORE-GET-002': { level: 'MUST', section: '3.1.3', what: 'GetTask of an unknown task answers TaskNotFoundError' },
  'CORE-LIST-002': {
    level: 'MUST',
    section: '3.1.4',
    what: 'ListTasks answers a page: at most pageSize tasks and a nextPageToken',
  },
  'CORE-LIST-004': {
    level: 'MUST',
    section: '3.1.4',
    what: "ListTasks by the task's contextId lists it, on a last page (empty nextPageToken)",
  },
  'CORE-CANCEL-001': { level: 'MUST', section: '3.1.5', what: 'CancelTask of a task at rest answers it canceled' },
  'CORE-CANCEL-002': {
    level: 'MUST',
    section: '3.1.5',
    what: 'CancelTask of a finished task answers TaskNotCancelableError',
  },
  'CORE-CANCEL-003': {
    level: 'MUST',
    section: '3.1.5',
    what: 'CancelTask of an unknown task answers TaskNotFoundError',
  },
  'CORE-ERR-002': {
    level: 'MUST',
    section: '3.3.2',
    what: 'SendMessage without its message is refused as invalid parameters',
  },
  'CORE-CAP-001': {
    level: 'MUST',
    section: '3.3.4',
    what: 'without pushNotifications, push config calls answer PushNotificationNotSupportedError',
  },
  'CORE-CAP-002': {
    level: 'MUST',
    section: '3.3.4',
    what: 'without streaming, SendStreamingMessage answers UnsupportedOperationError',
  },
  'CORE-CAP-003': {
    level: 'MUST',
    section: '3.3.4',
    what: 'without extendedAgentCard, GetExtendedAgentCard answers UnsupportedOperationError',
  },
  // Versioning
  'VER-SERVER-002': {
    level: 'MUST',
    section: '3.6.2',
    what: 'an unsupported A2A-Version (99.0) answers VersionNotSupportedError',
  },
  'VER-SERVER-003': {
    level: 'MUST',
    section: '3.6.2',
    what: 'a request without A2A-Version (read as 0.3) answers in the binding: a result, or VersionNotSupportedError',
  },
  // Streaming
  'CORE-STREAM-001': {
    level: 'MUST',
    section: '3.1.2',
    what: 'SendStreamingMessage answers a stream of StreamResponse events',
  },
  'CORE-STREAM-002': {
    level: 'MUST',
    section: '3.1.2',
    what: 'a stream answered by a Message holds that one Message and closes',
  },
  'CORE-STREAM-003': {
    level: 'MUST',
    section: '3.1.2',
    what: 'a task stream begins with the Task and closes at its terminal or interrupted state',
  },
  'STREAM-ORDER-001': {
    level: 'MUST',
    section: '3.5.2',
    what: "a stream's events are of its one task, nothing following the final state",
  },
  'STREAM-SUB-003': {
    level: 'MUST',
    section: '3.1.6',
    what: 'SubscribeToTask of a finished task answers UnsupportedOperationError',
  },
  'STREAM-SUB-004': {
    level: 'MUST',
    section: '3.1.6',
    what: 'SubscribeToTask of an unknown task answers TaskNotFoundError',
  },
  // Push notifications
  'PUSH-CREATE-001': {
    level: 'MUST',
    section: '3.1.7',
    what: 'CreateTaskPushNotificationConfig answers the config with its id',
  },
  'PUSH-GET-001': { level: 'MUST', section: '3.1.8', what: 'GetTaskPushNotificationConfig answers the config' },
  'PUSH-GET-002': {
    level: 'MUST',
    section: '3.1.8',
    what: 'GetTaskPushNotificationConfig of a deleted config answers an error',
  },
  'PUSH-LIST-001': {
    level: 'MUST',
    section: '3.1.9',
    what: 'ListTaskPushNotificationConfigs lists the config',
  },
  'PUSH-DEL-001': {
    level: 'MUST',
    section: '3.1.10',
    what: 'DeleteTaskPushNotificationConfig removes the config',
  },
  // Security
  'AUTH-SERVER-002': {
    level: 'MUST',
    section: '7.4',
    what: 'where the card requires credentials, a request without them is refused (HTTP 401, UNAUTHENTICATED)',
  },
  // The bindings
  'JSONRPC-FMT-001': {
    level: 'MUST',
    section: '9.1',
    what: 'answers are JSON-RPC 2.0 responses echoing the id; an unknown method is -32601, a body not JSON -32700',
  },
  'JSONRPC-FMT-002': { level: 'MUST', section: '9.1', what: 'JSON-RPC answers are application/json' },
  'JSONRPC-ERR-001': {
    level: 'MUST',
    section: '9.5',
    what: 'JSON-RPC errors are error objects: an integer code, a message, data an array if present',
  },
  'JSONRPC-ERR-003': {
    level: 'MUST',
    section: '9.5',
    what: 'A2A errors over JSON-RPC carry a google.rpc.ErrorInfo (domain a2a-protocol.org) in data',
  },
  'JSONRPC-SSE-001': {
    level: 'MUST',
    section: '9.4.2',
    what: 'JSON-RPC streams are text/event-stream, each event a JSON-RPC response carrying a StreamResponse',
  },
  'HTTP_JSON-SVC-001': {
    level: 'MUST',
    section: '11.1',
    what: 'HTTP+JSON answers are application/a2a+json (or application/json)',
  },
  'HTTP_JSON-ERR-001': {
    level: 'MUST',
    section: '11.6',
    what: "HTTP+JSON errors are a google.rpc.Status: error.code the HTTP status, error.message, details' @type",
  },
  'HTTP_JSON-ERR-002': {
    level: 'MUST',
    section: '11.6',
    what: 'A2A errors over HTTP+JSON carry a google.rpc.ErrorInfo (reason, domain a2a-protocol.org) in details',
  },
  'HTTP_JSON-SSE-001': {
    level: 'MUST',
    section: '11.7',
    what: 'HTTP+JSON streams are text/event-stream, each event a StreamResponse',
  },
  'GRPC-ERR-001': {
    level: 'MUST',
    section: '10.6',
    what: 'A2A errors over gRPC carry a google.rpc.ErrorInfo with the reason in the status details',
  },
  'GRPC-ERR-003': {
    level: 'MUST',
    section: '10.7',
    what: 'SendStreamingMessage over gRPC is a server stream of StreamResponse messages',
  },
} satisfies Record<string, Requirement>

export type RequirementId = keyof typeof REQUIREMENTS

const ORDER: Level[] = ['MUST', 'SHOULD', 'MAY']

/** Whether a requirement counts at the level asked for: `should` covers MUST and SHOULD, `may` all. */
export function counts(level: Level, asked: Level): boolean {
  return ORDER.indexOf(level) <= ORDER.indexOf(asked)
}
