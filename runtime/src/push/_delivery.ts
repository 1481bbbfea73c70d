import { isIP } from 'node:net'
import type { Logger } from '../logger.js'
import type { Instrumentation } from '../telemetry/_hooks.js'
import type { Task, TaskEvent } from '../types.js'
import { type AddressPolicy, bareHost, refusedAddress } from './_address-guard.js'
import { Slots } from './_slots.js'
import {
  fetchTransport,
  nodeTransport,
  type Outcome,
  onCloudflareWorkers,
  type WebhookTransport,
} from './_webhook-transport.js'
import type { PushConfig, PushConfigStore } from './push-config.js'

/** What one notification to one webhook carries. */
export interface PushPayload {
  body: string
  contentType: string
}

/** Renders the notification of `event` for a webhook, in the dialect it was configured in. */
export type RenderPush = (config: PushConfig, task: Task, event: TaskEvent) => PushPayload

export interface DeliveryOptions {
  policy: AddressPolicy
  /** Per attempt: connecting, sending and the webhook's whole answer. */
  timeoutMs: number
  /** Attempts after the first when the webhook is unreachable, times out, or answers 408, 429 or 5xx. */
  retries: number
  /** Wait before the first retry; each next one waits twice as long (with jitter). */
  retryDelayMs: number
  /** Notifications in flight at once, all webhooks together. */
  maxConcurrent: number
  /**
   * How long the webhooks read from a shared store are reused before reading them again: a webhook added on
   * another instance hears the task's updates from at most this long after, and its final one always. 0 for a
   * store in this process.
   */
  cacheMs: number
}

interface Pending {
  task: Task
  event: TaskEvent
  /** The trace the event happened in (telemetry), which its delivery joins. */
  trace?: unknown
}

/** One webhook of one task: its own queue, so a slow webhook never holds up the task's others. */
interface Lane {
  config: PushConfig
  items: Pending[]
}

/** What a webhook that takes the whole task last received: the task as it stood at its latest update then. */
interface Covered {
  url: string
  seq: number
}

/** After this many notifications in a row failed for a webhook, only the task's final one is still tried. */
const FAILURES_BEFORE_FINAL_ONLY = 3
/** Notifications waiting per webhook of a task; past it the oldest non-final ones are dropped (far behind). */
const MAX_QUEUED_PER_LANE = 1000
/** Notifications in flight to one origin, so one slow or hostile receiver cannot take every slot. */
const MAX_PER_ORIGIN = 8
/** Entries kept of the failure counts and the webhook cache before the oldest are forgotten. */
const MAX_REMEMBERED = 10_000

const isFinal = (event: TaskEvent): boolean => event.kind === 'status-update' && event.final

/**
 * Delivers task updates to webhooks. A task's updates pass in order through one queue that reads its webhooks,
 * then into a lane per webhook, so each webhook gets them in order at its own pace; tasks are independent of
 * each other and of their webhooks (the agent never waits for a delivery).
 */
export class PushDelivery {
  /** Updates of each task waiting to be handed to its webhooks' lanes. */
  readonly #queues = new Map<string, Pending[]>()
  /** By `taskId config id`. */
  readonly #lanes = new Map<string, Lane>()
  /** The number of each task's latest update until it ends: a whole Task sent now reflects it. */
  readonly #latest = new Map<string, number>()
  readonly #cache = new Map<string, { at: number; configs: PushConfig[] }>()
  /** Notifications in a row each webhook failed to take, by `taskId config id`, until the task ends. */
  readonly #failures = new Map<string, number>()
  /**
   * For webhooks that take the whole task, by `taskId config id`, until the task ends. Kept apart from the
   * lane: a lane ends when it runs dry, and the final update (slowed by its fresh read of the webhooks) may
   * reach a new lane after an earlier Task post already carried it.
   */
  readonly #covered = new Map<string, Covered>()
  readonly #transport: WebhookTransport
  readonly #slots: Slots
  readonly #originSlots = new Map<string, Slots>()
  readonly #idle: Array<() => void> = []
  #closed = false
  /** The app's telemetry: each POST is an attempt it hears of, each notification's end a delivery. */
  instrumentation: Instrumentation | undefined

  constructor(
    readonly configs: PushConfigStore,
    readonly render: RenderPush,
    readonly options: DeliveryOptions,
    readonly logger: Logger,
  ) {
    this.#slots = new Slots(options.maxConcurrent)
    this.#transport = onCloudflareWorkers()
      ? fetchTransport()
      : nodeTransport(options.policy, options.timeoutMs, options.maxConcurrent)
  }

  /** Hears every event of the tasks this instance runs. Returns at once; delivery happens later. */
  event(task: Task, event: TaskEvent): void {
    if (this.#closed) return
    const queue = this.#queues.get(task.id)
    if (queue) {
      remember(this.#latest, task.id, event.seq)
      return void queue.push({ task, event, trace: this.instrumentation?.eventTrace() })
    }
    // Without a queue, a task whose webhooks are known here to be none costs nothing more.
    const known = this.options.cacheMs === 0 ? (this.configs.list(task.id) as PushConfig[]) : this.#cached(task.id)
    // The final update always reads the webhooks afresh (below): one added on another instance moments ago
    // still hears how the task ended.
    if (known && known.length === 0 && (this.options.cacheMs === 0 || !isFinal(event))) return
    const fresh: Pending[] = [{ task, event, trace: this.instrumentation?.eventTrace() }]
    remember(this.#latest, task.id, event.seq)
    this.#queues.set(task.id, fresh)
    this.#drain(task.id, fresh).catch((error) =>
      this.logger.error(`Push notifications of task ${task.id} stopped`, error),
    )
  }

  /** Forgets what was read of a task's webhooks (this instance changed them). */
  changed(taskId: string): void {
    this.#cache.delete(taskId)
  }

  /** Resolves when every queued notification was delivered or given up, or after `ms`. */
  async settle(ms: number): Promise<void> {
    if (this.#queues.size === 0 && this.#lanes.size === 0) return
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([
      new Promise<void>((resolve) => this.#idle.push(resolve)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
    ])
    clearTimeout(timer)
  }

  /** Stops: nothing more is sent, waiting deliveries give up, open connections close. */
  close(): void {
    this.#closed = true
    this.#slots.close()
    for (const slots of this.#originSlots.values()) slots.close()
    this.#transport.close()
  }

  /** Hands an update to a webhook's lane, starting the lane when it is idle. */
  #toLane(config: PushConfig, item: Pending): void {
    const key = `${item.task.id} ${config.id}`
    const lane = this.#lanes.get(key)
    if (!lane) {
      const fresh: Lane = { config, items: [item] }
      this.#lanes.set(key, fresh)
      this.#runLane(key, fresh).catch((error) =>
        this.logger.error(`Push notifications of task ${item.task.id} stopped`, error),
      )
      return
    }
    // The webhook as it stands now (a config replaced under the same id takes effect from here).
    lane.config = config
    lane.items.push(item)
    if (lane.items.length <= MAX_QUEUED_PER_LANE) return
    // A webhook this far behind: drop the oldest update that is not the task's final one.
    const at = lane.items.findIndex((pending) => !isFinal(pending.event))
    lane.items.splice(at === -1 ? 0 : at, 1)
    if (lane.items.length === MAX_QUEUED_PER_LANE)
      this.logger.warn(`Push notifications of task ${item.task.id} fall behind a webhook; older updates are dropped`)
  }

  #maybeIdle(): void {
    if (this.#queues.size === 0 && this.#lanes.size === 0) for (const resolve of this.#idle.splice(0)) resolve()
  }

  #cached(taskId: string): PushConfig[] | undefined {
    const entry = this.#cache.get(taskId)
    if (!entry) return undefined
    if (Date.now() - entry.at < this.options.cacheMs) return entry.configs
    this.#cache.delete(taskId)
    return undefined
  }

  async #configsOf(taskId: string, fresh: boolean): Promise<PushConfig[]> {
    if (this.options.cacheMs === 0) return this.configs.list(taskId)
    const cached = fresh ? undefined : this.#cached(taskId)
    if (cached) return cached
    const configs = await this.configs.list(taskId)
    remember(this.#cache, taskId, { at: Date.now(), configs })
    return configs
  }

  /** Reads the webhooks for each of a task's updates, in order, and hands the update to each one's lane. */
  async #drain(taskId: string, queue: Pending[]): Promise<void> {
    try {
      for (let item = queue.shift(); item && !this.#closed; item = queue.shift()) {
        const final = isFinal(item.event)
        let configs: PushConfig[]
        try {
          configs = await this.#configsOf(taskId, final)
        } catch (error) {
          this.logger.error(`Could not read the webhooks of task ${taskId}; its notification is dropped`, error)
          continue
        }
        for (const config of configs) this.#toLane(config, item)
        if (final) {
          this.#cache.delete(taskId)
          this.#latest.delete(taskId)
        }
      }
    } finally {
      this.#queues.delete(taskId)
      this.#maybeIdle()
    }
  }

  /** Delivers a webhook's updates of one task in order; the task's end leaves nothing of it behind. */
  async #runLane(key: string, lane: Lane): Promise<void> {
    try {
      for (let item = lane.items.shift(); item && !this.#closed; item = lane.items.shift()) {
        const final = isFinal(item.event)
        try {
          // A webhook that takes the whole task gets the task as it stands, which carries every update up to
          // the latest: one already sent to this URL, or a later one in the lane, makes this one's POST needless.
          const wholeTask = lane.config.dialect !== 'a2a-1.0'
          const covered = this.#covered.get(key)
          if (
            wholeTask &&
            ((covered?.url === lane.config.url && item.event.seq <= covered.seq) || lane.items.length > 0)
          )
            continue
          if (!final && (this.#failures.get(key) ?? 0) >= FAILURES_BEFORE_FINAL_ONLY) continue
          // Read as the body is rendered (synchronously, at the start of the delivery).
          const reflected = this.#latest.get(item.task.id) ?? item.event.seq
          const url = lane.config.url
          if ((await this.#deliver(lane.config, item, key)) && wholeTask)
            remember(this.#covered, key, { url, seq: reflected })
        } finally {
          if (final) {
            this.#failures.delete(key)
            this.#covered.delete(key)
          }
        }
      }
    } finally {
      this.#lanes.delete(key)
      this.#maybeIdle()
    }
  }

  /** Delivers one notification to one webhook, with its retries; never throws. `true` once delivered. */
  async #deliver(config: PushConfig, item: Pending, key: string): Promise<boolean> {
    const where = originOf(config.url)
    let outcome: Outcome = SHUTTING_DOWN
    let attempts = 0
    try {
      const payload = this.render(config, item.task, item.event)
      for (; attempts <= this.options.retries; attempts++) {
        if (attempts > 0) await sleep(this.options.retryDelayMs * 2 ** (attempts - 1))
        outcome = await this.#attempt(config, payload, where, item, attempts)
        if (outcome.delivered || !outcome.retry || this.#closed) break
      }
    } catch (error) {
      outcome = {
        delivered: false,
        retry: false,
        reason: `it could not be prepared (${(error as Error).message})`,
        error: 'not_prepared',
      }
    }
    this.instrumentation?.pushDelivered(outcome)
    if (outcome.delivered) {
      this.#failures.delete(key)
      return true
    }
    if (this.#closed) return false
    const failures = (this.#failures.get(key) ?? 0) + 1
    remember(this.#failures, key, failures)
    const tried = Math.min(attempts + 1, this.options.retries + 1)
    this.logger.warn(
      `Push notification for task ${item.task.id} to ${where} (config ${config.id}) not delivered after ${tried} attempt${tried === 1 ? '' : 's'}: ${outcome.reason}` +
        (failures === FAILURES_BEFORE_FINAL_ONLY ? '; only the final notification will be tried from now on' : ''),
    )
    return false
  }

  /** One attempt, holding a slot of all deliveries and one of the webhook's origin. */
  async #attempt(
    config: PushConfig,
    payload: PushPayload,
    origin: string,
    item: Pending,
    resendCount: number,
  ): Promise<Outcome> {
    let perOrigin = this.#originSlots.get(origin)
    if (!perOrigin) {
      perOrigin = new Slots(MAX_PER_ORIGIN)
      this.#originSlots.set(origin, perOrigin)
    }
    if (!(await perOrigin.take())) return SHUTTING_DOWN
    try {
      if (!(await this.#slots.take())) return SHUTTING_DOWN
      try {
        return await this.#post(config, payload, item, resendCount)
      } finally {
        this.#slots.give()
      }
    } finally {
      perOrigin.give()
      if (perOrigin.idle) this.#originSlots.delete(origin)
    }
  }

  #post(config: PushConfig, payload: PushPayload, item: Pending, resendCount: number): Promise<Outcome> {
    let url: URL
    try {
      url = new URL(config.url)
    } catch {
      return Promise.resolve({ delivered: false, retry: false, reason: 'the URL is not valid', error: 'invalid_url' })
    }
    const { policy, timeoutMs } = this.options
    if (url.protocol === 'http:' && !policy.allowHttp)
      return Promise.resolve({
        delivered: false,
        retry: false,
        reason: 'http: webhooks are not allowed',
        error: 'refused',
      })
    // A literal address is connected to without a lookup, so the guard checks it here.
    const host = bareHost(url.hostname)
    const refused = isIP(host) ? refusedAddress(host, policy) : undefined
    if (refused)
      return Promise.resolve({ delivered: false, retry: false, reason: `refused: ${refused}`, error: 'refused' })

    const headers: Record<string, string> = {
      'content-type': payload.contentType,
      'user-agent': 'a2a-runtime',
    }
    if (config.token) headers['x-a2a-notification-token'] = config.token
    const auth = config.authentication
    if (auth?.credentials && auth.schemes[0]) headers.authorization = `${auth.schemes[0]} ${auth.credentials}`
    // Telemetry's CLIENT span of this POST, announced to the webhook in `traceparent`.
    const ended = this.instrumentation?.pushAttempt({
      url,
      headers,
      taskId: item.task.id,
      resendCount,
      trace: item.trace,
    })
    const posted = this.#transport.post(url, headers, payload.body, timeoutMs)
    return ended ? posted.then(ended) : posted
  }
}

const SHUTTING_DOWN: Outcome = {
  delivered: false,
  retry: false,
  reason: 'the server is shutting down',
  error: 'shutdown',
}

/** A backoff wait with jitter, which never keeps the process alive on its own. */
const sleep = (delay: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, delay / 2 + Math.random() * delay).unref()
  })

/** Sets a key in a map used as a bounded memory: past the limit the oldest entries go. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key)
  map.set(key, value)
  if (map.size > MAX_REMEMBERED)
    for (const oldest of map.keys()) if (map.delete(oldest) && map.size <= MAX_REMEMBERED * 0.9) break
}

/** Logs name the webhook by its origin only: paths and queries often carry secrets (e.g. chat webhooks). */
function originOf(url: string): string {
  try {
    return new URL(url).origin
  } catch {
    return '(invalid URL)'
  }
}
