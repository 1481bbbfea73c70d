import { ConfigurationError, InvalidParamsError } from '../errors.js'
import type { Logger } from '../logger.js'
import { type Env, envList, envSwitch } from '../settings.js'
import type { TaskStore } from '../stores/task-store.js'
import { addressPolicy, refusedWebhook } from './_address-guard.js'
import { MemoryPushConfigs } from './_configs.js'
import { PushDelivery, type RenderPush } from './_delivery.js'
import type { PushConfig, PushConfigStore } from './push-config.js'
import type { PushOptions } from './push-options.js'

const SWEEP_MS = 60_000

/** Push notifications of one app: where webhooks are kept, the guard that checks them, and their delivery. */
export class PushService {
  readonly configs: PushConfigStore
  readonly delivery: PushDelivery
  readonly maxConfigsPerTask: number
  readonly #policy
  readonly #sweep: ReturnType<typeof setInterval> | undefined

  constructor(store: TaskStore, render: RenderPush, options: PushOptions, logger: Logger, env: Env) {
    const allow = options.allow ?? envList(env, 'A2A_PUSH_ALLOW') ?? []
    const allowHttp = options.allowHttp ?? envSwitch(env, 'A2A_PUSH_ALLOW_HTTP') ?? false
    this.#policy = addressPolicy(allow, allowHttp, options.allow ? 'push.allow' : 'A2A_PUSH_ALLOW')
    const whole = (value: number | undefined, fallback: number, name: string, min: number) => {
      const result = value ?? fallback
      if (!Number.isInteger(result) || result < min)
        throw new ConfigurationError(`push.${name} must be an integer of at least ${min} (got ${result})`)
      return result
    }
    this.maxConfigsPerTask = whole(options.maxConfigsPerTask, 10, 'maxConfigsPerTask', 1)
    const shared = store.pushConfigs
    this.configs = shared ?? new MemoryPushConfigs()
    this.delivery = new PushDelivery(
      this.configs,
      render,
      {
        policy: this.#policy,
        timeoutMs: whole(options.timeoutMs, 10_000, 'timeoutMs', 1),
        retries: whole(options.retries, 3, 'retries', 0),
        retryDelayMs: whole(options.retryDelayMs, 500, 'retryDelayMs', 0),
        maxConcurrent: whole(options.maxConcurrent, 64, 'maxConcurrent', 1),
        cacheMs: shared ? 1000 : 0,
      },
      logger,
    )
    const local = this.configs
    if (local instanceof MemoryPushConfigs) {
      // Webhooks of tasks that retention removed go with them.
      this.#sweep = setInterval(
        () =>
          sweep(local, store).catch((error) => logger.error('Could not sweep the webhooks of removed tasks', error)),
        SWEEP_MS,
      )
      this.#sweep.unref()
    }
  }

  /** Refuses a webhook the guard does not allow, naming the field: scheme, credentials, resolved addresses. */
  async check(url: string, field: string): Promise<void> {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      throw new InvalidParamsError(`\`${field}\` must be an absolute https: URL`)
    }
    const why = await refusedWebhook(parsed, this.#policy)
    if (why) throw new InvalidParamsError(`\`${field}\` ${why}`)
  }

  /** Refuses a webhook the task has no room for (a new id past `maxConfigsPerTask`). */
  async assertRoom(taskId: string, id: string): Promise<void> {
    const existing = await this.configs.list(taskId)
    if (existing.length >= this.maxConfigsPerTask && !existing.some((other) => other.id === id)) {
      throw new InvalidParamsError(
        `task ${taskId} already has ${this.maxConfigsPerTask} push notification configs; delete one first`,
      )
    }
  }

  /** Adds or replaces a webhook of a task (already checked), within the limit per task. */
  async save(config: PushConfig): Promise<void> {
    await this.assertRoom(config.taskId, config.id)
    await this.configs.save(config)
    this.delivery.changed(config.taskId)
  }

  async delete(taskId: string, id: string): Promise<boolean> {
    const deleted = await this.configs.delete(taskId, id)
    this.delivery.changed(taskId)
    return deleted
  }

  /** Gives queued notifications (a task's final one above all) up to `ms` to go out, then stops. */
  async close(ms: number): Promise<void> {
    clearInterval(this.#sweep)
    await this.delivery.settle(ms)
    this.delivery.close()
  }
}

async function sweep(configs: MemoryPushConfigs, store: TaskStore): Promise<void> {
  for (const taskId of [...configs.taskIds()]) {
    if (!(await store.get(taskId))) configs.forget(taskId)
  }
}
