/** The page's own view of A2A objects, whatever dialect they came in. */

/** How the page talks to the agent: three JSON-RPC dialects, and A2A v1.0 over HTTP+JSON (`a2a-1.0-rest`). */
export type Dialect = 'platform' | 'a2a-1.0' | 'a2a-1.0-rest' | 'a2a-0.3'

export const DIALECTS: ReadonlyArray<{ id: Dialect; label: string }> = [
  { id: 'platform', label: 'Platform' },
  { id: 'a2a-1.0', label: 'A2A v1.0' },
  { id: 'a2a-1.0-rest', label: 'A2A v1.0 REST' },
  { id: 'a2a-0.3', label: 'A2A v0.3' },
]

/** Whether the dialect's objects are A2A v1.0's (ProtoJSON: `ROLE_USER`, `TASK_STATE_…`, parts without `kind`). */
export const speaksV1 = (dialect: Dialect): boolean => dialect === 'a2a-1.0' || dialect === 'a2a-1.0-rest'

export type Part =
  | { kind: 'text'; text: string }
  | { kind: 'data'; data: unknown }
  | { kind: 'file'; name?: string; mimeType?: string; bytes?: string; uri?: string }

export interface Message {
  role: 'user' | 'agent'
  parts: Part[]
  messageId?: string
  taskId?: string
  contextId?: string
}

export interface Artifact {
  artifactId: string
  name?: string
  parts: Part[]
}

export interface Task {
  id: string
  contextId: string
  state: string
  /** When the status last changed (ISO 8601), when the task says. */
  timestamp?: string
  statusMessage?: Message
  artifacts: Artifact[]
  history: Message[]
}

/** One thing a stream or an answer said, in the page's terms. */
export type Update =
  /** `timestamp`: when the status changed (ISO 8601), when the event says. */
  | {
      kind: 'status'
      taskId: string
      contextId: string
      state: string
      message?: Message
      final: boolean
      timestamp?: string
    }
  | { kind: 'artifact'; taskId: string; contextId: string; artifact: Artifact; append: boolean; lastChunk: boolean }
  | { kind: 'task'; task: Task }
  | { kind: 'message'; message: Message }
  /**
   * `httpStatus`: the answer's HTTP status when it was not a 2xx (401, 503…); `status`: a google.rpc.Status's
   * name (REST: `NOT_FOUND`); `reason`: the A2A error type its ErrorInfo detail names (`TASK_NOT_FOUND`).
   */
  | {
      kind: 'error'
      code: number
      message: string
      data?: unknown
      httpStatus?: number
      status?: string
      reason?: string
    }

export const TERMINAL_STATES = new Set(['completed', 'failed', 'canceled', 'rejected'])

export const textOf = (parts: Part[]): string =>
  parts
    .filter((part): part is Extract<Part, { kind: 'text' }> => part.kind === 'text')
    .map((part) => part.text)
    .join('')
