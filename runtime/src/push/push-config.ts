import type { MaybePromise } from '../types.js'

/** The wire dialect a webhook was configured in: it decides the shape of what is POSTed to it. */
export type PushDialect = 'platform' | 'a2a-0.3' | 'a2a-1.0'

/** One webhook of one task, as the runtime keeps it whichever dialect configured it. */
export interface PushConfig {
  /** Unique within its task: the client's, or one the runtime gave. */
  id: string
  /** The task whose events it is told of. */
  taskId: string
  /** The webhook the notifications are POSTed to. */
  url: string
  /** Sent as `X-A2A-Notification-Token`, for the receiver to check the notification is about its task. */
  token?: string
  /** Sent as `Authorization: <schemes[0]> <credentials>`; v0.3 gives a list of schemes, v1.0 one. */
  authentication?: { schemes: string[]; credentials?: string }
  /** The dialect the config came in, which the notifications speak. */
  dialect: PushDialect
}

/** Where the webhooks of tasks live. A store several instances share keeps them too (Redis). */
export interface PushConfigStore {
  /** Adds the config, or replaces the one of the task with the same id. */
  save(config: PushConfig): MaybePromise<void>
  /** The task's configs; none for a task without any. */
  list(taskId: string): MaybePromise<PushConfig[]>
  /** `false` when the task had no config with that id. */
  delete(taskId: string, id: string): MaybePromise<boolean>
}
