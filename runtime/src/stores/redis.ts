import { createRequire } from 'node:module'
import type { Redis, RedisOptions } from 'ioredis'
import { isoNow } from '../core/_clock.js'
import { newId } from '../core/_ids.js'
import { isSettled, isTerminal } from '../core/_lifecycle.js'
import { A2AError, ServerUnavailableError, TaskNotCancelableError, TaskNotFoundError } from '../errors.js'
import type { Logger } from '../_logger.js'
import type { Task, TaskEvent } from '../types.js'
import type { PushConfig, PushConfigStore } from '../push/_configs.js'
import type { ClusterLink, TaskPage, TaskQuery, TaskStore } from './_store.js'
import { pageOf } from './_paging.js'
import { DEFAULT_MAX_TASKS, DEFAULT_TTL_MS } from './memory.js'

export interface RedisStoreOptions {
  /** `redis://[user:password@]host:port/db`. */
  url: string
  /** Prefix of every key and channel, so several agents can share one Redis. Default `a2a:`. */
  prefix?: string
  /** Most tasks kept; past it the oldest settled ones go. Default 10,000. */
  maxTasks?: number
  /** How long a settled task is kept after its last change, in ms (a Redis TTL). Default one hour. */
  ttlMs?: number
  /**
   * How long an instance's hold on a running task lasts without renewal, in ms. A task whose instance died
   * is failed by another instance once its lease has run out. Renewed every third of it. Default 10,000.
   */
  leaseMs?: number
  /** How long a request waits for Redis to connect at first, and for another instance to answer a cancel. */
  timeoutMs?: number
  logger?: Pick<Logger, 'warn' | 'error'>
}

export const DEFAULT_LEASE_MS = 10_000
const noop = (): void => {}
const TRIM_EVERY = 64

// Loaded when a Redis store is made, by require: every `a2a start` would otherwise pay for ioredis.
const require = createRequire(import.meta.url)
function connect(url: string, options: RedisOptions): Redis {
  const { Redis: Client } = require('ioredis') as typeof import('ioredis')
  return new Client(url, options)
}
export const LOST_REASON = 'The instance running the task stopped before it finished'

// Compare-and-renew / compare-and-delete of a lease: only the instance that holds it may touch it.
const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
// One event, all or nothing, and never over a task that has ended (an instance whose lease ran out may still
// be running it): the event in the log, the task, the live channel, the index, the running set and the TTLs.
const APPEND = `
local current = redis.call('get', KEYS[1])
if current then
  local state = cjson.decode(current)['status']['state']
  if state == 'completed' or state == 'failed' or state == 'canceled' or state == 'rejected' then return 0 end
end
redis.call('xadd', KEYS[2], '*', 'e', ARGV[2])
redis.call('set', KEYS[1], ARGV[1])
redis.call('publish', ARGV[3], ARGV[2])
redis.call('zadd', KEYS[4], ARGV[4], ARGV[7])
if ARGV[5] == '1' then
  redis.call('srem', KEYS[3], ARGV[7])
  redis.call('pexpire', KEYS[1], ARGV[6])
  redis.call('pexpire', KEYS[2], ARGV[6])
  redis.call('pexpire', KEYS[5], ARGV[6])
else
  redis.call('sadd', KEYS[3], ARGV[7])
  redis.call('persist', KEYS[1])
  redis.call('persist', KEYS[2])
  redis.call('persist', KEYS[5])
end
return 1`

/** Saves a webhook of a task that exists, expiring with the task when it has settled. */
const SAVE_PUSH = `
local ttl = redis.call('pttl', KEYS[1])
if ttl == -2 then return 0 end
redis.call('hset', KEYS[2], ARGV[1], ARGV[2])
if ttl > 0 then redis.call('pexpire', KEYS[2], ttl) end
return 1`

interface CancelRequest {
  requestId: string
  taskId: string
  replyTo: string
}
interface CancelReply {
  requestId: string
  task?: Task
  error?: { code: number; message: string; httpStatus: number; data?: unknown }
}

/**
 * Tasks in Redis, shared by any number of instances of one agent: each task as JSON, its events in a Redis
 * Stream (so any instance can replay them, in order, to a stream that resumes), live events on a channel,
 * and a lease per running task. Any instance answers `tasks/get`, follows a task that runs on another, and
 * forwards a cancel to the instance that runs the task. Settled tasks expire after `ttlMs`.
 *
 * While Redis is unreachable, requests that need it fail at once with a JSON-RPC error (HTTP 503); the
 * connection is retried in the background.
 */
export class RedisTaskStore implements TaskStore {
  readonly cluster: ClusterLink
  readonly instanceId = newId()
  readonly prefix: string
  readonly maxTasks: number
  readonly ttlMs: number
  readonly leaseMs: number
  readonly #timeoutMs: number
  readonly #redis: Redis
  readonly #subscriber: Redis
  readonly #logger: RedisStoreOptions['logger']
  readonly #held = new Set<string>()
  readonly #channels = new Map<string, { handlers: Set<(message: string) => void>; ready: Promise<void> }>()
  readonly #replies = new Map<string, (reply: CancelReply) => void>()
  readonly #resyncs = new Set<() => void>()
  readonly #timers: Array<ReturnType<typeof setInterval>> = []
  #cancelHandler: ((taskId: string) => Promise<Task> | undefined) | undefined
  #lostHandler: ((taskId: string) => void) | undefined
  readonly #connected: Promise<void>
  #readyOnce = false
  #settledSinceTrim = 0
  #closed = false

  constructor(options: RedisStoreOptions) {
    this.prefix = options.prefix ?? 'a2a:'
    this.maxTasks = options.maxTasks ?? DEFAULT_MAX_TASKS
    this.ttlMs = options.ttlMs ?? DEFAULT_TTL_MS
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS
    this.#timeoutMs = options.timeoutMs ?? 5000
    this.#logger = options.logger
    const connection: RedisOptions = {
      // Fail a command at once while disconnected (the client gets an error, not a hang); keep reconnecting.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt: number) => Math.min(50 * attempt, 1000),
      connectTimeout: this.#timeoutMs,
      // A Redis that stalls (a partition, a stopped process) fails requests after this long, not never.
      commandTimeout: this.#timeoutMs,
    }
    this.#redis = connect(options.url, connection)
    this.#subscriber = connect(options.url, { ...connection, enableOfflineQueue: true, maxRetriesPerRequest: null })
    for (const client of [this.#redis, this.#subscriber]) client.on('error', () => {}) // reported per request
    this.#connected = new Promise((resolve) => this.#redis.once('ready', () => resolve()))
    this.#redis.on('ready', () => (this.#readyOnce = true))
    this.#subscriber.on('message', (channel: string, message: string) => {
      for (const handler of this.#channels.get(channel)?.handlers ?? []) handler(message)
    })
    // After a reconnect the subscriptions are back, but what was published meanwhile is not: catch up.
    this.#subscriber.on('ready', () => {
      for (const resync of this.#resyncs) resync()
    })
    void this.#listen(`${this.prefix}cancel`, (message) => void this.#serveCancel(JSON.parse(message) as CancelRequest))
    this.#listen(`${this.prefix}reply:${this.instanceId}`, (message) => {
      const reply = JSON.parse(message) as CancelReply
      this.#replies.get(reply.requestId)?.(reply)
    })
    this.#timers.push(setInterval(() => void this.#renewLeases(), Math.max(50, Math.floor(this.leaseMs / 3))))
    this.#timers.push(setInterval(() => void this.#failLostTasks(), this.leaseMs))
    for (const timer of this.#timers) timer.unref()
    void this.#connected.then(() => this.#failLostTasks())
    this.cluster = {
      claim: (taskId) => this.#claim(taskId),
      release: (taskId) => this.#release(taskId),
      follow: (taskId, afterSeq, onEvent) => this.#follow(taskId, afterSeq, onEvent),
      cancel: (taskId) => this.#forwardCancel(taskId),
      onCancel: (handler) => {
        this.#cancelHandler = handler
      },
      onLost: (handler) => {
        this.#lostHandler = handler
      },
    }
  }

  async get(taskId: string): Promise<Task | undefined> {
    const json = await this.#run((redis) => redis.get(this.#taskKey(taskId)))
    return json === null ? undefined : (JSON.parse(json) as Task)
  }

  async create(task: Task): Promise<void> {
    await this.#run((redis) =>
      redis
        .multi()
        .set(this.#taskKey(task.id), JSON.stringify(task))
        .zadd(`${this.prefix}index`, Date.now(), task.id)
        .sadd(`${this.prefix}running`, task.id)
        .exec(),
    )
  }

  async append(task: Task, event: TaskEvent): Promise<void> {
    const json = JSON.stringify(event)
    const settles = event.kind === 'status-update' && event.final
    const keys = [this.#taskKey(task.id), this.#eventsKey(task.id), `${this.prefix}running`, `${this.prefix}index`, this.#pushKey(task.id)]
    const written = await this.#run((redis) =>
      redis.eval(APPEND, keys.length, ...keys, JSON.stringify(task), json, this.#eventsChannel(task.id), Date.now(), settles ? 1 : 0, this.ttlMs, task.id),
    )
    // Another instance ended the task (it took this one for dead when its lease ran out): nothing is overwritten.
    if (written === 0) throw new ServerUnavailableError(`Task ${task.id} was ended by another instance while this one ran it (its lease ran out)`, 503)
    // Counting the index costs a round trip: check it every TRIM_EVERY settlings (trim removes a margin more).
    if (settles && ++this.#settledSinceTrim >= TRIM_EVERY) {
      this.#settledSinceTrim = 0
      void this.#trim().catch(noop)
    }
  }

  async events(taskId: string, afterSeq = 0): Promise<TaskEvent[] | undefined> {
    const [exists, entries] = await this.#run(async (redis) => {
      const results = await redis.multi().exists(this.#taskKey(taskId)).xrange(this.#eventsKey(taskId), '-', '+').exec()
      return [results![0]![1] as number, results![1]![1] as Array<[string, string[]]>] as const
    })
    if (!exists) return undefined
    return entries.map(([, fields]) => JSON.parse(fields[1]!) as TaskEvent).filter((event) => event.seq > afterSeq)
  }

  async snapshot(taskId: string): Promise<{ task: Task; seq: number } | undefined> {
    const results = await this.#run((redis) => redis.multi().get(this.#taskKey(taskId)).xrevrange(this.#eventsKey(taskId), '+', '-', 'COUNT', 1).exec())
    const json = results?.[0]?.[1] as string | null
    if (!json) return undefined
    const last = (results?.[1]?.[1] as Array<[string, string[]]> | undefined)?.[0]
    return { task: JSON.parse(json) as Task, seq: last ? (JSON.parse(last[1][1]!) as TaskEvent).seq : 0 }
  }

  async list(query: TaskQuery): Promise<TaskPage> {
    const tasks = await this.#run(async (redis) => {
      const ids = await redis.zrange(`${this.prefix}index`, 0, -1)
      const found: Task[] = []
      const gone: string[] = []
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500)
        const values = chunk.length ? await redis.mget(chunk.map((id) => this.#taskKey(id))) : []
        values.forEach((json, at) => (json === null ? gone.push(chunk[at]!) : found.push(JSON.parse(json) as Task)))
      }
      // Expired tasks leave their id in the index: tidy it.
      if (gone.length) void redis.zrem(`${this.prefix}index`, ...gone).catch(() => {})
      return found
    })
    return pageOf(tasks, query)
  }

  /** Webhooks in a hash per task, shared by the instances; they expire with their task. */
  readonly pushConfigs: PushConfigStore = {
    save: async (config) => {
      const saved = await this.#run((redis) => redis.eval(SAVE_PUSH, 2, this.#taskKey(config.taskId), this.#pushKey(config.taskId), config.id, JSON.stringify(config)))
      if (saved === 0) throw new TaskNotFoundError(config.taskId)
    },
    list: async (taskId) => {
      const entries = await this.#run((redis) => redis.hvals(this.#pushKey(taskId)))
      return entries.map((json) => JSON.parse(json) as PushConfig)
    },
    delete: async (taskId, id) => (await this.#run((redis) => redis.hdel(this.#pushKey(taskId), id))) > 0,
  }

  async close(): Promise<void> {
    this.#closed = true
    for (const timer of this.#timers) clearInterval(timer)
    await Promise.allSettled([...this.#held].map((taskId) => this.#release(taskId)))
    this.#redis.disconnect()
    this.#subscriber.disconnect()
  }

  // --- keys and the connection -------------------------------------------------------------------------

  #taskKey = (taskId: string) => `${this.prefix}task:${taskId}`
  #pushKey = (taskId: string) => `${this.prefix}push:${taskId}`
  #eventsKey = (taskId: string) => `${this.prefix}events:${taskId}`
  #eventsChannel = (taskId: string) => `${this.prefix}live:${taskId}`
  #leaseKey = (taskId: string) => `${this.prefix}lease:${taskId}`

  /** Runs commands; a Redis that is unreachable becomes a clear 503 for the client. */
  async #run<T>(work: (redis: Redis) => Promise<T>): Promise<T> {
    if (this.#redis.status !== 'ready') await this.#waitForConnection()
    try {
      return await work(this.#redis)
    } catch (error) {
      throw this.#unavailable(error)
    }
  }

  /** Before the first connection a request waits for it (up to `timeoutMs`); after, a lost one fails fast. */
  async #waitForConnection(): Promise<void> {
    if (this.#closed) throw this.#unavailable(new Error('the store is closed'))
    if (this.#readyOnce) throw this.#unavailable(new Error(`connection ${this.#redis.status}`))
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(this.#unavailable(new Error('no connection'))), this.#timeoutMs)))
    try {
      await Promise.race([this.#connected, timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  #unavailable(error: unknown): A2AError {
    if (error instanceof A2AError) return error
    const detail = error instanceof Error ? error.message : String(error)
    return new ServerUnavailableError(`The task store (Redis) is unreachable: ${detail.slice(0, 120)}; retry shortly`, 503)
  }

  /** Subscribes `handler` to a channel; `ready` resolves once Redis has confirmed the subscription. */
  #listen(channel: string, handler: (message: string) => void): { ready: Promise<void>; stop: () => void } {
    let entry = this.#channels.get(channel)
    if (!entry) {
      const handlers = new Set<(message: string) => void>()
      entry = { handlers, ready: this.#subscriber.subscribe(channel).then(noop, noop) }
      this.#channels.set(channel, entry)
    }
    const current = entry
    current.handlers.add(handler)
    const stop = () => {
      current.handlers.delete(handler)
      if (current.handlers.size === 0 && this.#channels.get(channel) === current) {
        this.#channels.delete(channel)
        void this.#subscriber.unsubscribe(channel).catch(noop)
      }
    }
    return { ready: current.ready, stop }
  }

  // --- the cluster link ----------------------------------------------------------------------------------

  async #claim(taskId: string): Promise<boolean> {
    const taken = await this.#run((redis) => redis.set(this.#leaseKey(taskId), this.instanceId, 'PX', this.leaseMs, 'NX'))
    if (taken === 'OK') this.#held.add(taskId)
    return taken === 'OK'
  }

  async #release(taskId: string): Promise<void> {
    this.#held.delete(taskId)
    await this.#run((redis) => redis.eval(RELEASE, 1, this.#leaseKey(taskId), this.instanceId)).catch(() => {})
  }

  async #renewLeases(): Promise<void> {
    if (this.#redis.status !== 'ready' || this.#held.size === 0) return
    const held = [...this.#held]
    const batch = this.#redis.pipeline()
    for (const taskId of held) batch.eval(RENEW, 1, this.#leaseKey(taskId), this.instanceId, this.leaseMs)
    const results = await batch.exec().catch(() => null)
    // A lease that could not be renewed has run out (this instance stalled past it): another instance may
    // have failed the task already. Stop running it here.
    results?.forEach(([error, renewed], at) => {
      const taskId = held[at]!
      if (error || renewed !== 0 || !this.#held.has(taskId)) return
      this.#held.delete(taskId)
      this.#lostHandler?.(taskId)
    })
  }

  /** Fails the tasks whose instance died: still running in Redis, with no live lease, for a whole lease. */
  async #failLostTasks(): Promise<void> {
    if (this.#redis.status !== 'ready') return
    try {
      const running = await this.#redis.smembers(`${this.prefix}running`)
      for (const taskId of running) {
        if (this.#held.has(taskId)) continue
        if (await this.#redis.exists(this.#leaseKey(taskId))) continue
        const seen = await this.get(taskId)
        if (!seen) {
          await this.#redis.srem(`${this.prefix}running`, taskId)
          continue
        }
        // A task that has just been created or resumed may not have its lease yet: give it one lease.
        if (isSettled(seen.status.state) || Date.now() - Date.parse(seen.status.timestamp) < this.leaseMs) continue
        if (!(await this.#claim(taskId))) continue
        try {
          // Read again now that it is held here: it may have moved on before the claim.
          const task = await this.get(taskId)
          if (!task || isSettled(task.status.state)) continue
          const events = (await this.events(taskId)) ?? []
          const status: Task['status'] = {
            state: 'failed',
            timestamp: isoNow(),
            message: { kind: 'message', messageId: newId(), role: 'agent', parts: [{ kind: 'text', text: LOST_REASON }], contextId: task.contextId, taskId },
          }
          task.status = status
          const seq = (events.at(-1)?.seq ?? 0) + 1
          await this.append(task, { kind: 'status-update', seq, taskId, contextId: task.contextId, status, final: true })
          this.#logger?.warn(`Task ${taskId} lost the instance that ran it (no lease for ${this.leaseMs} ms); it is failed`)
        } finally {
          await this.#release(taskId)
        }
      }
    } catch (error) {
      this.#logger?.error('Could not check for tasks whose instance stopped', error)
    }
  }

  #follow(taskId: string, afterSeq: number, onEvent: (event: TaskEvent) => void): () => void {
    let delivered = afterSeq
    let ended = false
    // Live events wait here while the log is being read, so they cannot overtake the ones it holds.
    let waiting: TaskEvent[] | undefined = []
    const deliver = (event: TaskEvent) => {
      if (ended || event.seq <= delivered) return
      delivered = event.seq
      onEvent(event)
      if (event.kind === 'status-update' && event.final) stop()
    }
    const channel = this.#listen(this.#eventsChannel(taskId), (message) => {
      const event = JSON.parse(message) as TaskEvent
      if (waiting) waiting.push(event)
      else deliver(event)
    })
    // Reads the log after the subscription is confirmed (so nothing falls between the two), delivers it,
    // then what arrived live meanwhile; `delivered` drops what both carry. Run again after a reconnect,
    // and retried while Redis is unreachable.
    let attempt = 0
    const catchUp = async (): Promise<void> => {
      waiting ??= []
      try {
        await channel.ready
        for (const event of (await this.events(taskId, delivered)) ?? []) deliver(event)
        attempt = 0
      } catch {
        if (!ended && !this.#closed) setTimeout(() => void catchUp(), Math.min(100 * ++attempt, 1000)).unref()
        return
      }
      const held = waiting ?? []
      waiting = undefined
      for (const event of held) deliver(event)
    }
    const resync = () => void catchUp()
    this.#resyncs.add(resync)
    const stop = () => {
      ended = true
      channel.stop()
      this.#resyncs.delete(resync)
    }
    void catchUp()
    return stop
  }

  async #forwardCancel(taskId: string): Promise<Task | undefined> {
    const requestId = newId()
    const answered = new Promise<CancelReply>((resolve) => this.#replies.set(requestId, resolve))
    try {
      await this.#run((redis) => redis.publish(`${this.prefix}cancel`, JSON.stringify({ requestId, taskId, replyTo: this.instanceId } satisfies CancelRequest)))
      // The task may end on its own before its instance sees the request; then the store has the answer.
      const deadline = Date.now() + this.#timeoutMs
      for (;;) {
        const reply = await Promise.race([answered, new Promise<undefined>((resolve) => setTimeout(resolve, 100))])
        if (reply?.error) throw new A2AError(reply.error.code, reply.error.message, reply.error.httpStatus, reply.error.data)
        if (reply?.task) return reply.task
        const task = await this.get(taskId)
        if (!task) throw new TaskNotFoundError(taskId)
        if (isTerminal(task.status.state)) {
          if (task.status.state === 'canceled') return task
          throw new TaskNotCancelableError(`Task cannot be canceled: it is already ${task.status.state}`)
        }
        // At rest (waiting for input) and held by no one: the caller cancels it itself.
        if (isSettled(task.status.state) && !(await this.#run((redis) => redis.exists(this.#leaseKey(taskId))))) return undefined
        if (Date.now() > deadline) throw new ServerUnavailableError(`The instance running task ${taskId} did not answer the cancel; retry shortly`, 503)
      }
    } finally {
      this.#replies.delete(requestId)
    }
  }

  async #serveCancel(request: CancelRequest): Promise<void> {
    const answer = this.#cancelHandler?.(request.taskId)
    if (!answer) return // not running here
    let reply: CancelReply
    try {
      reply = { requestId: request.requestId, task: await answer }
    } catch (error) {
      reply = {
        requestId: request.requestId,
        error: error instanceof A2AError ? { code: error.code, message: error.message, httpStatus: error.httpStatus, data: error.data } : { code: -32603, message: 'Internal error', httpStatus: 200 },
      }
    }
    await this.#redis.publish(`${this.prefix}reply:${request.replyTo}`, JSON.stringify(reply)).catch(() => {})
  }

  /** Past `maxTasks`, removes the oldest settled tasks. */
  async #trim(): Promise<void> {
    const excess = (await this.#redis.zcard(`${this.prefix}index`)) - this.maxTasks
    if (excess <= 0) return
    const oldest = await this.#redis.zrange(`${this.prefix}index`, 0, excess + Math.floor(this.maxTasks / 64))
    const running = new Set(await this.#redis.smembers(`${this.prefix}running`))
    const settled = oldest.filter((taskId) => !running.has(taskId))
    if (!settled.length) return
    await this.#redis
      .multi()
      .zrem(`${this.prefix}index`, ...settled)
      .del(...settled.flatMap((taskId) => [this.#taskKey(taskId), this.#eventsKey(taskId), this.#pushKey(taskId)]))
      .exec()
  }
}

/** Tasks in Redis for several instances of one agent; see `RedisTaskStore`. */
export function createRedisStore(options: RedisStoreOptions): RedisTaskStore {
  return new RedisTaskStore(options)
}
