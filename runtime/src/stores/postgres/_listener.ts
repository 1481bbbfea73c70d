import type { Client } from 'pg'
import { clientConfig, endWithin, noop, type PgModule } from './_pg.js'

/** The channel every instance of a schema hears each written event on. */
export const eventsChannel = (schema: string): string => `a2a.events.${schema}`

/** The channel an instance hears the cancels forwarded to it, and the answers to its own, on. */
export const instanceChannel = (instanceId: string): string => `a2a.instance.${instanceId}`

/** How often the listening connection checks that the server still answers it, in ms (at most). */
const HEARTBEAT_MS = 5000

/**
 * The store's one connection that LISTENs, apart from the pool (a pooled connection goes back to others). It
 * listens to a fixed set of channels, reconnects when the server goes away, and then tells whoever asked
 * (`onReconnect`): a NOTIFY sent while it was not connected is not delivered again, so followers read the events
 * table for what they missed. A network that drops the connection without closing it (NAT, a load balancer that
 * forgets an idle connection) sends no error: a heartbeat (`SELECT 1`, answered within `timeoutMs`) notices it, and
 * the connection is made again.
 */
export class PgListener {
  readonly #pg: PgModule
  readonly #url: string
  readonly #timeoutMs: number
  readonly #handlers = new Map<string, (payload: string) => void>()
  readonly #reconnects = new Set<() => void>()
  readonly ready: Promise<void>
  #resolveReady: () => void = noop
  #client: Client | undefined
  #closed = false
  #connectedOnce = false
  #attempt = 0
  #listening = false
  readonly #warn: (message: string) => void
  /** Notifications dropped because they could not be read (anyone may NOTIFY these channels). */
  dropped = 0

  /** `warn` hears, once, that a notification this store cannot read was dropped. */
  constructor(
    pg: PgModule,
    url: string,
    timeoutMs: number,
    handlers: Record<string, (payload: string) => void>,
    warn: (message: string) => void = noop,
  ) {
    this.#pg = pg
    this.#warn = warn
    this.#url = url
    this.#timeoutMs = timeoutMs
    for (const [channel, handler] of Object.entries(handlers)) this.#handlers.set(channel, handler)
    this.ready = new Promise((resolve) => {
      this.#resolveReady = resolve
    })
    void this.#connect()
  }

  /** Every channel is LISTENed to on a live connection now. */
  get listening(): boolean {
    return this.#listening
  }

  /** Calls `reconnected` each time the connection is back; the function returned stops that. */
  onReconnect(reconnected: () => void): () => void {
    this.#reconnects.add(reconnected)
    return () => this.#reconnects.delete(reconnected)
  }

  async #connect(): Promise<void> {
    if (this.#closed) return
    // No statement timeout here: the connection only waits for notifications.
    const { statement_timeout: _, query_timeout: __, ...config } = clientConfig(this.#url, this.#timeoutMs)
    const client = new this.#pg.Client(config)
    this.#client = client
    let lost = false
    let heartbeat: ReturnType<typeof setInterval> | undefined
    const retry = () => {
      if (lost) return
      lost = true
      clearInterval(heartbeat)
      this.#listening = false
      if (this.#client === client) this.#client = undefined
      client.end().catch(noop)
      // A connection the network dropped silently never hears the end's answer: its socket goes now.
      socketOf(client)?.destroy()
      if (this.#closed) return
      setTimeout(() => void this.#connect(), Math.min(100 * ++this.#attempt, 1000)).unref()
    }
    client.on('error', retry)
    client.on('end', retry)
    client.on('notification', ({ channel, payload }) => this.#heard(channel, payload ?? ''))
    try {
      await client.connect()
      for (const channel of this.#handlers.keys()) await client.query(`LISTEN "${channel.replaceAll('"', '""')}"`)
    } catch {
      retry()
      return
    }
    if (lost || this.#closed) return
    this.#attempt = 0
    heartbeat = setInterval(() => void this.#heartbeat(client, retry), Math.min(HEARTBEAT_MS, this.#timeoutMs))
    heartbeat.unref()
    this.#listening = true
    this.#resolveReady()
    if (this.#connectedOnce) for (const reconnected of this.#reconnects) reconnected()
    this.#connectedOnce = true
  }

  /**
   * Hands a notification to its channel's handler. A payload it cannot read (someone's NOTIFY, another version's
   * format) is dropped: thrown inside pg's notification handler, it would end the process.
   */
  #heard(channel: string, payload: string): void {
    try {
      this.#handlers.get(channel)?.(payload)
    } catch (error) {
      if (this.dropped++ === 0)
        this.#warn(`Dropped a notification on ${channel} that could not be read: ${String(error).slice(0, 120)}`)
    }
  }

  /** One `SELECT 1` that must be answered within `timeoutMs`, else the connection is given up (`lost`). */
  async #heartbeat(client: Client, lost: () => void): Promise<void> {
    if (this.#closed) return
    let timer: ReturnType<typeof setTimeout> | undefined
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.#timeoutMs)))
    const answered = client.query('SELECT 1').then(
      () => true,
      () => false,
    )
    const alive = await Promise.race([answered, timedOut])
    clearTimeout(timer)
    if (!alive && !this.#closed) lost()
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#listening = false
    this.#resolveReady()
    const client = this.#client
    if (client) {
      await endWithin(client.end(), this.#timeoutMs)
      socketOf(client)?.destroy()
    }
  }
}

/** The socket under a client of node-postgres (not part of its typed interface). */
function socketOf(client: Client): { destroy(): void } | undefined {
  return (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream
}
