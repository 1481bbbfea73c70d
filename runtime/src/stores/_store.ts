import type { Task, TaskEvent, TaskState } from '../types.js'

export type MaybePromise<T> = T | Promise<T>

/**
 * Where tasks and their ordered event logs live. The runtime calls `create` once per task and then
 * `append` after applying each event to the task, in order; an implementation may keep the task object it
 * is given (the memory store does) or serialise it (a remote store must).
 */
export interface TaskStore {
  /** The task, or `undefined` when it never existed or retention removed it. */
  get(taskId: string): MaybePromise<Task | undefined>
  create(task: Task): MaybePromise<void>
  /** `task` already reflects `event`. */
  append(task: Task, event: TaskEvent): MaybePromise<void>
  /**
   * The events after `afterSeq`, oldest first, while the store still has the log. `undefined` when the task
   * is unknown or its log was compacted into the task (a store may do so once the task is terminal).
   */
  events(taskId: string, afterSeq?: number): MaybePromise<TaskEvent[] | undefined>
  /** Tasks newest first (by status time), filtered, one page at a time. */
  list(query: TaskQuery): MaybePromise<TaskPage>
  /** Stops timers and releases connections. */
  close?(): MaybePromise<void>
}

export interface TaskQuery {
  contextId?: string
  state?: TaskState
  /** Only tasks whose status changed at or after this ISO time. */
  updatedAfter?: string
  /** Page size, at least 1. */
  limit: number
  /** From a previous page's `nextCursor`. */
  cursor?: string
}

export interface TaskPage {
  tasks: Task[]
  /** Absent on the last page. */
  nextCursor?: string
  /** Tasks matching the filters, all pages together. */
  total: number
}
