import http from 'node:http'
import https from 'node:https'
import { isIP } from 'node:net'
import type { Logger } from '../_logger.js'
import type { Task, TaskEvent } from '../types.js'
import { type AddressPolicy, bareHost, guardedLookup, refusedAddress } from './_address-guard.js'
import type { PushConfig, PushConfigStore } from './_configs.js'

/** What one notification to one webhook carries. */
export interface PushPayload {
  body: string
  contentType: string
}

/** Renders the notification of `event` for a webhook, in the dialect it was configured in. */
export type RenderPush = (config: PushConfig, task: Task, event: TaskEvent) => PushPayload

export interface DeliveryOptions {
  policy: AddressPolicy
  /** Per attempt: connecting, sending and the webhook's answer. */
  timeoutMs: number
  /** Attempts after the first when the webhook is unreachable, times out, or answers 408, 429 or 5xx. */
  retries: number
  /** Wait before the first retry; each next one waits twice as long (with jitter). */
  retryDelayMs: number
  /** Notifications in flight at once, all tasks together. */
  maxConcurrent: number
  /**
   * While a task's notifications are queued, how long the webhooks read from a shared store are reused before
   * reading them again (each new burst of updates reads them anyway). 0 for a store in this process.
   */
  cacheMs: number
}

interface Pending {
  task: Task
  event: TaskEvent
}

interface TaskQueue {
  items: Pending[]
  /** Notifications in a row each webhook failed to take, by config id: past a few, only the final one is tried. */
  failures: Map<string, number>
}

/** After this many notifications in a row failed for a webhook, only the task's final one is still tried. */
const FAILURES_BEFORE_FINAL_ONLY = 3

/**
 * Delivers task updates to webhooks: a queue per task, so each webhook gets a task's notifications in order;
 * tasks are independent of each other and of their webhooks (the agent never waits for a delivery).
 */
export class PushDelivery {
  readonly #queues = new Map<string, TaskQueue>()
  readonly #cache = new Map<string, { at: number; configs: PushConfig[] }>()
  readonly #lookup: ReturnType<typeof guardedLookup>
  readonly #agents: { http: http.Agent; https: https.Agent }
  #inFlight = 0
  #closed = false
  readonly #slots: Array<() => void> = []
  readonly #idle: Array<() => void> = []

  constructor(
    readonly configs: PushConfigStore,
    readonly render: RenderPush,
    readonly options: DeliveryOptions,
    readonly logger: Logger,
  ) {
    this.#lookup = guardedLookup(options.policy)
    // Connections to a webhook are reused across notifications; each new one passes the guard again.
    this.#agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) }
  }

  /** Hears every event of the tasks this instance runs. Returns at once; delivery happens later. */
  event(task: Task, event: TaskEvent): void {
    const queue = this.#queues.get(task.id)
    if (queue) return void queue.items.push({ task, event })
    // Without a queue, a task whose webhooks are known here to be none costs nothing more.
    const known = this.options.cacheMs === 0 ? (this.configs.list(task.id) as PushConfig[]) : this.#cached(task.id)
    if (known && known.length === 0) return
    const fresh: TaskQueue = { items: [{ task, event }], failures: new Map() }
    this.#queues.set(task.id, fresh)
    void this.#drain(task.id, fresh)
  }

  /** Forgets what was read of a task's webhooks (this instance changed them). */
  changed(taskId: string): void {
    this.#cache.delete(taskId)
  }

  /** Resolves when every queued notification was delivered or given up, or after `ms`. */
  async settle(ms: number): Promise<void> {
    if (this.#queues.size === 0) return
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([new Promise<void>((resolve) => this.#idle.push(resolve)), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))])
    clearTimeout(timer)
  }

  close(): void {
    this.#closed = true
    this.#agents.http.destroy()
    this.#agents.https.destroy()
  }

  #cached(taskId: string): PushConfig[] | undefined {
    const entry = this.#cache.get(taskId)
    return entry && Date.now() - entry.at < this.options.cacheMs ? entry.configs : undefined
  }

  async #configsOf(taskId: string): Promise<PushConfig[]> {
    if (this.options.cacheMs === 0) return this.configs.list(taskId)
    const cached = this.#cached(taskId)
    if (cached) return cached
    const configs = await this.configs.list(taskId)
    this.#cache.set(taskId, { at: Date.now(), configs })
    return configs
  }

  async #drain(taskId: string, queue: TaskQueue): Promise<void> {
    try {
      for (let item = queue.items.shift(); item; item = queue.items.shift()) {
        let configs: PushConfig[]
        try {
          configs = await this.#configsOf(taskId)
        } catch (error) {
          this.logger.error(`Could not read the webhooks of task ${taskId}; its notification is dropped`, error)
          continue
        }
        const final = item.event.kind === 'status-update' && item.event.final
        // A webhook that takes the whole task gets the task as it stands: a later update in the queue will
        // carry this one's change too, so only the last is sent.
        const coalesced = queue.items.length > 0
        await Promise.all(
          configs.map((config) => {
            if (coalesced && config.dialect !== 'a2a-1.0') return undefined
            if (!final && (queue.failures.get(config.id) ?? 0) >= FAILURES_BEFORE_FINAL_ONLY) return undefined
            return this.#deliver(config, item, queue)
          }),
        )
      }
    } finally {
      this.#queues.delete(taskId)
      this.#cache.delete(taskId)
      if (this.#queues.size === 0) for (const resolve of this.#idle.splice(0)) resolve()
    }
  }

  async #deliver(config: PushConfig, item: Pending, queue: TaskQueue): Promise<void> {
    const payload = this.render(config, item.task, item.event)
    const where = originOf(config.url)
    for (let attempt = 0; !this.#closed; attempt++) {
      await this.#slot()
      let outcome: Outcome
      try {
        outcome = await this.#post(config, payload)
      } finally {
        this.#release()
      }
      if (outcome.delivered) {
        queue.failures.delete(config.id)
        return
      }
      if (!outcome.retry || attempt >= this.options.retries) {
        const failures = (queue.failures.get(config.id) ?? 0) + 1
        queue.failures.set(config.id, failures)
        const tried = attempt + 1
        this.logger.warn(
          `Push notification for task ${item.task.id} to ${where} (config ${config.id}) not delivered after ${tried} attempt${tried === 1 ? '' : 's'}: ${outcome.reason}` +
            (failures === FAILURES_BEFORE_FINAL_ONLY ? '; only the final notification will be tried from now on' : ''),
        )
        return
      }
      const delay = this.options.retryDelayMs * 2 ** attempt
      await new Promise((resolve) => setTimeout(resolve, delay / 2 + Math.random() * delay))
    }
  }

  #post(config: PushConfig, payload: PushPayload): Promise<Outcome> {
    let url: URL
    try {
      url = new URL(config.url)
    } catch {
      return Promise.resolve({ delivered: false, retry: false, reason: 'the URL is not valid' })
    }
    const { policy, timeoutMs } = this.options
    if (url.protocol === 'http:' && !policy.allowHttp) return Promise.resolve({ delivered: false, retry: false, reason: 'http: webhooks are not allowed' })
    // A literal address is connected to without a lookup, so the guard checks it here.
    const host = bareHost(url.hostname)
    const refused = isIP(host) ? refusedAddress(host, policy) : undefined
    if (refused) return Promise.resolve({ delivered: false, retry: false, reason: `refused: ${refused}` })

    const headers: Record<string, string> = { 'content-type': payload.contentType, 'content-length': String(Buffer.byteLength(payload.body)), 'user-agent': 'a2a-runtime' }
    if (config.token) headers['x-a2a-notification-token'] = config.token
    const auth = config.authentication
    if (auth?.credentials && auth.schemes[0]) headers.authorization = `${auth.schemes[0]} ${auth.credentials}`
    const secure = url.protocol === 'https:'
    return new Promise((resolve) => {
      let answered = false
      const finish = (outcome: Outcome) => {
        if (answered) return
        answered = true
        clearTimeout(timer)
        resolve(outcome)
      }
      const send = secure ? https.request : http.request
      const request = send(url, { method: 'POST', headers, lookup: this.#lookup, agent: secure ? this.#agents.https : this.#agents.http })
      const timer = setTimeout(() => {
        finish({ delivered: false, retry: true, reason: `no answer within ${timeoutMs} ms` })
        request.destroy()
      }, timeoutMs)
      request.on('response', (response) => {
        const status = response.statusCode ?? 0
        // The answer's body means nothing here; reading it frees the connection for the next notification.
        response.resume()
        response.on('error', () => {})
        if (status >= 200 && status < 300) finish({ delivered: true })
        else if (status >= 300 && status < 400) finish({ delivered: false, retry: false, reason: `HTTP ${status} (redirects are not followed)` })
        else finish({ delivered: false, retry: status === 408 || status === 429 || status >= 500, reason: `HTTP ${status}` })
      })
      request.on('error', (error: NodeJS.ErrnoException) => {
        const blocked = error.code === 'EA2ABLOCKED'
        finish({ delivered: false, retry: !blocked, reason: blocked ? `refused: ${error.message}` : error.code ?? error.message })
      })
      request.end(payload.body)
    })
  }

  async #slot(): Promise<void> {
    if (this.#inFlight < this.options.maxConcurrent) {
      this.#inFlight++
      return
    }
    await new Promise<void>((resolve) => this.#slots.push(resolve))
  }

  #release(): void {
    const next = this.#slots.shift()
    if (next) next()
    else this.#inFlight--
  }
}

type Outcome = { delivered: true } | { delivered: false; retry: boolean; reason: string }

/** Logs name the webhook by its origin only: paths and queries often carry secrets (e.g. chat webhooks). */
function originOf(url: string): string {
  try {
    return new URL(url).origin
  } catch {
    return '(invalid URL)'
  }
}
