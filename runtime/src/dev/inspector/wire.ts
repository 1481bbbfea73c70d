/**
 * What the dev server sends its inspector pages, shared by both sides: the page imports these types (and nothing
 * else) from here, so this file depends on nothing.
 */

/** A finding of the card check (`a2a card validate`). */
export interface Finding {
  level: 'error' | 'warning'
  /** JSON path of the field, e.g. `skills[1].examples`. */
  path: string
  message: string
  hint: string
}

/** Why the agent does not load, split for the page's banner: "src/agent.ts:4:2 SyntaxError: …". */
export interface LoadFailure {
  text: string
  file?: string
  line?: number
  column?: number
  cause: string
}

/** The last load: when it ended, how long it took, and what the card's check found or why it failed. */
export interface LoadState {
  at: string
  ms: number
  /** The files whose save brought this load (none for the first). */
  files: string[]
  failure?: LoadFailure
  findings: Finding[]
}

/** What the inspector's task list shows of a task: a line, never the task itself. */
export interface TaskLine {
  id: string
  contextId: string
  state: string
  /** ISO time of the status. */
  at: string
  /** The start of the first user message's text, to tell tasks apart. */
  title: string
  /**
   * The traces its events were made in, oldest first, when the agent runs with telemetry (`A2A_TELEMETRY`) and an
   * SDK records: absent otherwise. Each holds from its event on, up to the next one's.
   */
  traces?: TaskTrace[]
}

/**
 * The trace of the operation that made a task's events, from event `firstSeq` on (0: the task's creation): its
 * SERVER span's, or the agent's own span's under it. Absent `traceId`: those events were made outside any trace.
 */
export interface TaskTrace {
  firstSeq: number
  /** W3C trace id, 32 lowercase hex digits. */
  traceId?: string
}

/**
 * How the page shows traces, present only when the agent runs with telemetry: `url` is the trace viewer's address
 * with `{traceId}` where the id goes (`A2A_TRACE_URL`), absent when none is set (the page shows the id alone).
 */
export interface Tracing {
  url?: string
}

/**
 * When the dev store received each event of a task (`/__a2a/api/tasks/<id>/times`): the wire gives a time to
 * status changes only, and a replay reads every event back at once. Times are ms since the epoch.
 */
export interface EventTimes {
  /** When the task was created; absent when the dev server did not see it. */
  createdAt?: number
  /** The event number (`seq`) of `at[0]`. */
  firstSeq: number
  /** `at[i]` is when event `firstSeq + i` arrived; an event past the end was not recorded (the bound). */
  at: number[]
  /** The task's last event the dev server has seen: a later one happened after this answer. */
  lastSeq: number
}

/** One push notification the dev server's built-in webhook received. */
export interface PushDelivery {
  id: number
  /** ISO time of arrival. */
  at: string
  /** The path it was sent to, under the receiver (a config may name its own, e.g. `/__a2a/push/mine`). */
  path: string
  headers: Record<string, string>
  /** The body as parsed JSON, or as text when it is not JSON. */
  body: unknown
  /** The body's size in bytes as sent. */
  bytes: number
  /** The task it is about, as its body names it (a v0.3 or platform Task, a v1.0 StreamResponse); absent when none. */
  taskId?: string
}
