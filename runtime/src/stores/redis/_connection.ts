import { createRequire } from 'node:module'
import type { Cluster, Redis, RedisOptions } from 'ioredis'
import { A2AError, ConfigurationError, ServerUnavailableError } from '../../errors.js'
import { defineScripts } from './_scripts.js'

/** A single Redis, or a Redis Cluster: the commands the store sends are the same. */
export type RedisClient = Redis | Cluster

export const noop = (): void => {}
const yes = () => true
const no = () => false

/** ioredis is an optional peer of the runtime: only an agent that keeps its tasks in Redis installs it. */
function loadIoredis(): typeof import('ioredis') {
  try {
    return createRequire(import.meta.url)('ioredis') as typeof import('ioredis')
  } catch (error) {
    if ((error as { code?: string }).code !== 'MODULE_NOT_FOUND') throw error
    throw new ConfigurationError(
      'The Redis store needs the ioredis package, which is not installed: run `npm install ioredis` in the project',
    )
  }
}

function connect(url: string, cluster: boolean, options: RedisOptions): RedisClient {
  // Loaded when a Redis store is made, by require: every `a2a start` would otherwise pay for ioredis. The
  // require is made here too, not when the module loads: a bundle for Cloudflare Workers has no module URL.
  const ioredis = loadIoredis()
  if (!cluster) return new ioredis.Redis(url, options)
  const { protocol, hostname, port, username, password, pathname } = new URL(url)
  if (pathname.length > 1 && pathname !== '/0')
    throw new ConfigurationError(
      `A Redis Cluster has only database 0 (got ${JSON.stringify(pathname.slice(1))} in the store's URL)`,
    )
  const credentials = {
    ...(username && { username: decodeURIComponent(username) }),
    ...(password && { password: decodeURIComponent(password) }),
  }
  return new ioredis.Cluster([{ host: hostname, port: Number(port) || 6379 }], {
    redisOptions: { ...options, ...credentials, ...(protocol === 'rediss:' && { tls: {} }) },
    enableOfflineQueue: options.enableOfflineQueue ?? true,
    clusterRetryStrategy: options.retryStrategy ?? null,
  })
}

/** What ioredis rejects a command with once `commandTimeout` has passed. */
const COMMAND_TIMED_OUT = 'Command timed out'

/**
 * A Redis that cannot be reached, or that did not answer in time, as the client hears of it: a JSON-RPC error in
 * an HTTP 503 (with Retry-After), to retry. A command that timed out says so: Redis may well be up, only slow
 * (a large read ahead on the connection, a busy server).
 */
function unavailable(error: unknown, timeoutMs: number): A2AError {
  if (error instanceof A2AError) return error
  const detail = error instanceof Error ? error.message : String(error)
  if (detail === COMMAND_TIMED_OUT)
    return new ServerUnavailableError(
      `The task store (Redis) did not answer within ${timeoutMs} ms; retry shortly`,
      503,
    )
  return new ServerUnavailableError(
    `The task store (Redis) is unreachable: ${detail.slice(0, 120)}; retry shortly`,
    503,
  )
}

/**
 * The store's two connections to Redis: one for commands (with the store's scripts), one for the channels it
 * listens to. A command fails at once while Redis is unreachable (the client gets an error, not a hang), and
 * the connections keep retrying in the background.
 */
export class RedisConnection {
  /** The connection commands go through; `run` wraps it for requests. */
  readonly client: RedisClient
  readonly #subscriber: RedisClient
  readonly #timeoutMs: number
  readonly #cluster: boolean
  readonly #channels = new Map<string, { handlers: Set<(message: string) => void>; ready: Promise<void> }>()
  readonly #reconnects = new Set<(subscribed: Promise<boolean>) => void>()
  readonly #connected: Promise<void>
  #readyOnce = false
  #closed = false

  constructor(url: string, cluster: boolean, timeoutMs: number) {
    this.#timeoutMs = timeoutMs
    this.#cluster = cluster
    const options: RedisOptions = {
      // Fail a command at once while disconnected (the client gets an error, not a hang); keep reconnecting.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt: number) => Math.min(50 * attempt, 1000),
      connectTimeout: timeoutMs,
      // A Redis that stalls (a partition, a stopped process) fails requests after this long, not never.
      commandTimeout: timeoutMs,
    }
    this.client = connect(url, cluster, options)
    // The channels are subscribed again by `#resubscribe`, not by ioredis: its own resubscription keeps no handler on
    // its promise (a store closed before Redis answers it leaves an unhandled rejection), and nothing waits for it.
    this.#subscriber = connect(url, cluster, {
      ...options,
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      autoResubscribe: cluster,
    })
    defineScripts(this.client)
    for (const client of [this.client, this.#subscriber]) client.on('error', noop) // reported per request
    this.#connected = new Promise((resolve) => this.client.once('ready', () => resolve()))
    this.client.on('ready', () => {
      this.#readyOnce = true
    })
    this.#subscriber.on('message', (channel: string, message: string) => {
      for (const handler of this.#channels.get(channel)?.handlers ?? []) handler(message)
    })
    // Each time the connection is (back) up, every channel is subscribed (again: a subscription sent before may
    // have failed with the connection), and the followers catch up from the log with what was published meanwhile
    // once Redis has confirmed it, so that nothing falls between. They are told at once, before any reply on the
    // new connection is read ('ready' comes first), so they hold what arrives live until they have read the log.
    // A cluster's subscriber connection is picked and subscribed again by ioredis's cluster client, which tells the
    // store nothing of it: the followers there read the log when quiet instead (`hearsEveryReconnect`).
    this.#subscriber.on('ready', () => {
      if (this.#closed) return
      const subscribed = cluster ? Promise.resolve(true) : this.#resubscribe()
      for (const reconnected of this.#reconnects) reconnected(subscribed)
    })
  }

  /**
   * Whether every drop of the listening connection reaches the followers (`onReconnect`), so that they catch up
   * with what was published while it was down. On one Redis it does. On a cluster ioredis moves that connection
   * to another node and subscribes it again on its own, without a word to the store, and gives up on a
   * subscription that fails: a follower there reads the log whenever it has heard nothing for a while
   * (`QUIET_READ_MS`), and when a live event's number skips some, so an event published meanwhile reaches it late
   * rather than never.
   */
  get hearsEveryReconnect(): boolean {
    return !this.#cluster
  }

  /** Connected now: background work (renewals, sweeps) skips a turn otherwise. */
  get ready(): boolean {
    return this.client.status === 'ready'
  }

  get closed(): boolean {
    return this.#closed
  }

  /** Resolves once the command connection is up for the first time. */
  get connected(): Promise<void> {
    return this.#connected
  }

  /** Runs commands; a Redis that is unreachable becomes a clear 503 for the client. */
  async run<T>(work: (redis: RedisClient) => Promise<T>): Promise<T> {
    if (this.client.status !== 'ready') await this.#waitForConnection()
    try {
      return await work(this.client)
    } catch (error) {
      throw unavailable(error, this.#timeoutMs)
    }
  }

  /** Before the first connection a request waits for it (up to `timeoutMs`); after, a lost one fails fast. */
  async #waitForConnection(): Promise<void> {
    if (this.#closed) throw unavailable(new Error('the store is closed'), this.#timeoutMs)
    if (this.#readyOnce) throw unavailable(new Error(`connection ${this.client.status}`), this.#timeoutMs)
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(unavailable(new Error('no connection'), this.#timeoutMs)), this.#timeoutMs)
    })
    try {
      await Promise.race([this.#connected, timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  /** Subscribes `handler` to a channel; `ready` resolves once Redis has confirmed the subscription. */
  listen(channel: string, handler: (message: string) => void): { ready: Promise<void>; stop: () => void } {
    let entry = this.#channels.get(channel)
    if (!entry) {
      const handlers = new Set<(message: string) => void>()
      entry = { handlers, ready: this.#subscriber.subscribe(channel).then(noop, () => this.#subscribeFailed()) }
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

  /**
   * Subscribes every channel listened to (again), one command each (a command for many channels that a dropped
   * connection cut midway would be answered wrongly when ioredis sends it again); resolves true once Redis has
   * confirmed them all, false when one failed.
   */
  async #resubscribe(): Promise<boolean> {
    const confirmed = await Promise.all(
      [...this.#channels.keys()].map((channel) => this.#subscriber.subscribe(channel).then(yes, no)),
    )
    if (confirmed.every(Boolean)) return true
    this.#subscribeFailed()
    return false
  }

  /**
   * A subscription Redis did not confirm in time (a busy or stalled Redis; the command timed out) on a connection
   * that is still up: nothing would tell the followers when it lands. The connection is made again, and its
   * 'ready' subscribes every channel and has the followers catch up. (A cluster's subscriber is ioredis's to manage.)
   */
  #subscribeFailed(): void {
    if (!this.#cluster && !this.#closed && this.#subscriber.status === 'ready') this.#subscriber.disconnect(true)
  }

  /**
   * Calls `reconnected` each time the listening connection is (back) up, with whether its channels are subscribed
   * again (false: the connection will be made again, and `reconnected` called again); the function returned stops
   * that.
   */
  onReconnect(reconnected: (subscribed: Promise<boolean>) => void): () => void {
    this.#reconnects.add(reconnected)
    return () => this.#reconnects.delete(reconnected)
  }

  /** Requests fail from now on; both connections close. */
  markClosed(): void {
    this.#closed = true
  }

  disconnect(): void {
    this.#closed = true
    this.client.disconnect()
    this.#subscriber.disconnect()
  }
}
