import type { MaybePromise } from '../types.js'

/** The wire dialect a webhook was configured in: it decides the shape of what is POSTed to it. */
export type PushDialect = 'platform' | 'a2a-0.3' | 'a2a-1.0'

/** One webhook of one task, as the runtime keeps it whichever dialect configured it. */
export interface PushConfig {
  id: string
  taskId: string
  url: string
  /** Sent as `X-A2A-Notification-Token`, for the receiver to check the notification is about its task. */
  token?: string
  /** Sent as `Authorization: <schemes[0]> <credentials>`; v0.3 gives a list of schemes, v1.0 one. */
  authentication?: { schemes: string[]; credentials?: string }
  dialect: PushDialect
}

/** Where the webhooks of tasks live. A store several instances share keeps them too (Redis). */
export interface PushConfigStore {
  /** Adds the config, or replaces the one of the task with the same id. */
  save(config: PushConfig): MaybePromise<void>
  list(taskId: string): MaybePromise<PushConfig[]>
  /** `false` when the task had no config with that id. */
  delete(taskId: string, id: string): MaybePromise<boolean>
}

/** The default: webhooks in memory, dropped with their task (`forget`) when retention removes it. */
export class MemoryPushConfigs implements PushConfigStore {
  readonly #byTask = new Map<string, PushConfig[]>()

  get size(): number {
    return this.#byTask.size
  }

  save(config: PushConfig): void {
    const configs = this.#byTask.get(config.taskId)
    if (!configs) return void this.#byTask.set(config.taskId, [config])
    const at = configs.findIndex((existing) => existing.id === config.id)
    if (at === -1) configs.push(config)
    else configs[at] = config
  }

  list(taskId: string): PushConfig[] {
    return this.#byTask.get(taskId) ?? NONE
  }

  delete(taskId: string, id: string): boolean {
    const configs = this.#byTask.get(taskId)
    const at = configs ? configs.findIndex((existing) => existing.id === id) : -1
    if (at === -1) return false
    configs!.splice(at, 1)
    if (configs!.length === 0) this.#byTask.delete(taskId)
    return true
  }

  /** The tasks that have webhooks, for the sweep that drops those of tasks the store no longer has. */
  taskIds(): IterableIterator<string> {
    return this.#byTask.keys()
  }

  forget(taskId: string): void {
    this.#byTask.delete(taskId)
  }
}

const NONE: PushConfig[] = []
