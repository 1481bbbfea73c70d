import { expect } from 'vitest'
import { userMessage, userMessageV1 } from '../runtime/_messages.ts'
import type { Framing } from '../runtime/_sse.ts'

/** One stream event as every dialect can say it, after its envelope was checked. */
export interface StreamEvent {
  kind: 'task' | 'status' | 'artifact'
  taskId: string
  /** The state, spelled as in the platform dialect (`input-required`), for task and status events. */
  state?: string
  /** The first text of the status message, for task and status events that have one. */
  message?: string
  /** `final` of a status event, in the dialects that have it. */
  final?: boolean
  /** The artifact chunk's first text part, whether it appends to the artifact, whether it is the last chunk. */
  text?: string
  append?: boolean
  lastChunk?: boolean
}

/** The three dialects the agent speaks over one endpoint: what to send in each, and how to read its answers. */
export interface Dialect {
  name: 'platform' | 'A2A v0.3' | 'A2A v1.0'
  /** Sent with every request of the dialect. */
  headers: Record<string, string>
  methods: { send: string; stream: string; get: string; cancel: string; subscribe: string; unknown: string }
  /** Send params for a user message with `text`; `extra` goes into the message (taskId, contextId). */
  message(text: string, extra?: Record<string, unknown>): Record<string, unknown>
  /** The Task in a send's result. */
  taskOf(result: any): any
  /** A task state as the dialect spells it. */
  state(state: string): string
  /** A text part as the dialect shapes it. */
  textPart(text: string): Record<string, unknown>
  /** Fields every Task of the dialect carries (`kind` in the v0.3 shapes). */
  taskShape: Record<string, unknown>
  /** The framing of a stream the client did not ask to number (`Last-Event-ID`). */
  framing: Framing
  /** Whether a send's stream opens with the Task before its first update. */
  opensWithTask: boolean
  /** Whether its shapes carry `kind` discriminators (v1.0 ProtoJSON has none). */
  kinds: boolean
  /** Whether status updates carry `final`. */
  hasFinal: boolean
  /** The error for an unknown task id. */
  notFound: Record<string, unknown>
  /** The error for a POST whose body is not typed as JSON (HTTP 415). */
  notJson: Record<string, unknown>
  /** Checks one SSE event's envelope (a response to `requestId`, or a notification) and reads it. */
  read(event: any, requestId: string | number): StreamEvent
}

const errorInfo = (reason: string) => [
  expect.objectContaining({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason }),
]

/** A status's state (in the platform spelling) and the first text of its message. */
function status(value: any, spelling = (state: string) => state): Pick<StreamEvent, 'state' | 'message'> {
  const message = value.message?.parts?.[0]?.text
  return { state: spelling(value.state), ...(message !== undefined && { message }) }
}

/** The platform dialect sends notifications: no id, a method, the update in params. */
function readPlatform(event: any): StreamEvent {
  expect(Object.keys(event).sort()).toEqual(['jsonrpc', 'method', 'params'])
  const { method, params } = event
  if (method === 'tasks/statusUpdate')
    return { kind: 'status', taskId: params.taskId, ...status(params.status), final: params.final }
  expect(method).toBe('tasks/artifactUpdate')
  const { artifact } = params
  return {
    kind: 'artifact',
    taskId: params.taskId,
    text: artifact.parts[0].text,
    append: params.append ?? false,
    lastChunk: artifact.lastChunk,
  }
}

/** A2A v0.3 sends responses to the request: a Task or an update, told apart by `kind`. */
function readV03(event: any, requestId: string | number): StreamEvent {
  expect(event).toEqual({ jsonrpc: '2.0', id: requestId, result: expect.any(Object) })
  const { result } = event
  if (result.kind === 'task') return { kind: 'task', taskId: result.id, ...status(result.status) }
  if (result.kind === 'status-update')
    return { kind: 'status', taskId: result.taskId, ...status(result.status), final: result.final }
  expect(result.kind).toBe('artifact-update')
  return {
    kind: 'artifact',
    taskId: result.taskId,
    text: result.artifact.parts[0].text,
    append: result.append ?? false,
    lastChunk: result.lastChunk,
  }
}

/** `TASK_STATE_INPUT_REQUIRED` → `input-required`. */
const fromV1State = (state: string) =>
  state
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace(/_/g, '-')

/** A2A v1.0 sends responses to the request carrying one StreamResponse: `task`, `statusUpdate` or `artifactUpdate`. */
function readV1(event: any, requestId: string | number): StreamEvent {
  expect(event).toEqual({ jsonrpc: '2.0', id: requestId, result: expect.any(Object) })
  const { task, statusUpdate, artifactUpdate, ...other } = event.result
  expect(other).toEqual({})
  if (task) return { kind: 'task', taskId: task.id, ...status(task.status, fromV1State) }
  if (statusUpdate) return { kind: 'status', taskId: statusUpdate.taskId, ...status(statusUpdate.status, fromV1State) }
  const { artifact } = artifactUpdate
  return {
    kind: 'artifact',
    taskId: artifactUpdate.taskId,
    text: artifact.parts[0].text,
    append: artifactUpdate.append ?? false,
    lastChunk: artifactUpdate.lastChunk ?? false,
  }
}

const SLASH_METHODS = {
  send: 'message/send',
  stream: 'message/stream',
  get: 'tasks/get',
  cancel: 'tasks/cancel',
  subscribe: 'tasks/resubscribe',
  unknown: 'tasks/nope',
}

/** What the platform dialect and A2A v0.3 share: slash-named methods and `kind`-tagged shapes. */
const SLASH_SHAPES = {
  methods: SLASH_METHODS,
  message: (text: string, extra?: Record<string, unknown>) => userMessage(text, extra),
  taskOf: (result: any) => result,
  state: (state: string) => state,
  textPart: (text: string) => ({ kind: 'text', text }),
  taskShape: { kind: 'task' },
  kinds: true,
  hasFinal: true,
  notJson: { code: -32600, message: expect.stringContaining('Content-Type') },
} satisfies Partial<Dialect>

export const DIALECTS: Dialect[] = [
  {
    ...SLASH_SHAPES,
    name: 'platform',
    headers: {},
    framing: 'data-only',
    opensWithTask: false,
    notFound: { code: -32602, message: 'Task not found' },
    read: readPlatform,
  },
  {
    ...SLASH_SHAPES,
    name: 'A2A v0.3',
    headers: { 'A2A-Version': '0.3' },
    framing: 'numbered',
    opensWithTask: true,
    notFound: { code: -32001, message: expect.any(String) },
    read: readV03,
  },
  {
    name: 'A2A v1.0',
    headers: { 'A2A-Version': '1.0' },
    methods: {
      send: 'SendMessage',
      stream: 'SendStreamingMessage',
      get: 'GetTask',
      cancel: 'CancelTask',
      subscribe: 'SubscribeToTask',
      unknown: 'NoSuchMethod',
    },
    message: (text, extra) => userMessageV1(text, extra),
    taskOf: (result) => result.task,
    state: (state) => `TASK_STATE_${state.toUpperCase().replace(/-/g, '_')}`,
    textPart: (text) => ({ text }),
    taskShape: {},
    framing: 'numbered',
    opensWithTask: true,
    kinds: false,
    hasFinal: false,
    notFound: { code: -32001, message: expect.any(String), data: errorInfo('TASK_NOT_FOUND') },
    notJson: {
      code: -32005,
      message: expect.stringContaining('Content-Type'),
      data: errorInfo('CONTENT_TYPE_NOT_SUPPORTED'),
    },
    read: readV1,
  },
]

/** One line per event: `task:<state>`, `status:<state>` or `artifact:<text>`. */
export const summary = (event: StreamEvent) =>
  event.kind === 'artifact' ? `artifact:${event.text}` : `${event.kind}:${event.state}`
