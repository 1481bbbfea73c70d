import type { PushConfig, PushConfigStore } from './push-config.js'

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
