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
