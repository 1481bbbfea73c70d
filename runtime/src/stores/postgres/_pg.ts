import { createRequire } from 'node:module'
import type { ClientConfig, Pool, PoolConfig, QueryResultRow } from 'pg'
import { A2AError, ConfigurationError, ServerUnavailableError } from '../../errors.js'

export type PgModule = typeof import('pg')

export const noop = (): void => {}

/**
 * Waits for `ending` (a client's or the pool's `end`), at most `ms`: node-postgres may never settle the end of a
 * connection that the network dropped mid-handshake, and a store's close must not hang on it.
 */
export async function endWithin(ending: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined
  await Promise.race([ending.catch(noop), new Promise((resolve) => (timer = setTimeout(resolve, ms)))])
  clearTimeout(timer)
}

/** node-postgres is an optional peer of the runtime: only an agent that keeps its tasks in PostgreSQL installs it. */
export function loadPg(): PgModule {
  try {
    // Loaded when a store is made, by require: every `a2a start` would otherwise pay for pg, and a bundle for
    // Cloudflare Workers has no module URL at load.
    return createRequire(import.meta.url)('pg') as PgModule
  } catch (error) {
    if ((error as { code?: string }).code !== 'MODULE_NOT_FOUND') throw error
    throw new ConfigurationError(
      'The PostgreSQL store needs the pg package, which is not installed: run `npm install pg` in the project',
    )
  }
}

/** Idle time before the first TCP keep-alive probe of a connection, in ms. */
const KEEP_ALIVE_DELAY_MS = 10_000

/** What a client and the pool are given: the URL (its libpq options too), and every wait bounded by `timeoutMs`. */
export function clientConfig(url: string, timeoutMs: number): ClientConfig {
  return {
    connectionString: url,
    connectionTimeoutMillis: timeoutMs,
    // The server cancels a statement that runs past it (57014); the client gives up on a server that stalls
    // (a partition, a stopped process) a moment later.
    statement_timeout: timeoutMs,
    query_timeout: timeoutMs + 1000,
    keepAlive: true,
    // The OS's default waits about two hours before its first probe: NAT and load balancers drop an idle
    // connection after minutes, without a word to either end.
    keepAliveInitialDelayMillis: KEEP_ALIVE_DELAY_MS,
  }
}

/** Codes after which the same statement may succeed: retried a few times before the client is told. */
const CONFLICTS = new Set(['40001', '40P01'])
const CONFLICT_RETRIES = [10, 40, 120]

/** PostgreSQL's codes for a server that is going away or cannot take a session now. */
const RESTARTING = new Set(['57P01', '57P02', '57P03'])

/** Messages of node-postgres for a connection it lost or could not make (they carry no code). */
const LOST_CONNECTION = [
  'Connection terminated',
  'connection timeout',
  'Client has encountered a connection error',
  'Client was closed',
  'Cannot use a pool after calling end',
]

/**
 * A PostgreSQL that cannot serve a request now, as the client hears of it: an HTTP 503 (with Retry-After) saying
 * what happened, never a stack nor a statement's text. Other errors (a bug, a schema someone changed) stay errors:
 * the runtime answers them as internal errors and logs them.
 */
function unavailable(error: unknown, timeoutMs: number): Error {
  if (error instanceof A2AError || error instanceof ConfigurationError) return error
  const { code, message } = error as { code?: string; message?: string }
  const detail = String(message ?? error)
    .split('\n')[0]!
    .slice(0, 120)
  const say = (what: string) => new ServerUnavailableError(`The task store (PostgreSQL) ${what}; retry shortly`, 503)
  if (code === '57014') return say(`did not finish a statement within ${timeoutMs} ms (statement timeout)`)
  if (code !== undefined && RESTARTING.has(code)) return say(`is restarting or shutting down (${detail})`)
  if (code === '53300' || code === '53400') return say('has no connection to spare (too many connections)')
  if (code !== undefined && CONFLICTS.has(code)) return say(`kept conflicting with other writes (${detail})`)
  if (code?.startsWith('08')) return say(`lost the connection (${detail})`)
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EPIPE' || code === 'ETIMEDOUT')
    return say(`is unreachable (${code})`)
  if (detail.includes('timeout exceeded when trying to connect'))
    return say(`had no free connection within ${timeoutMs} ms (the pool is busy, or the server does not answer)`)
  if (detail.includes('Query read timeout')) return say(`did not answer within ${timeoutMs} ms`)
  if (LOST_CONNECTION.some((lost) => detail.includes(lost))) return say(`lost the connection (${detail})`)
  if (code === undefined) return say(`is unreachable (${detail})`)
  return new Error(`PostgreSQL refused a statement of the task store: ${detail} (${code})`)
}

/** A statement: its text and a name under which each connection prepares it once (the hot ones). */
export interface Statement {
  text: string
  name?: string
}

const REACHABLE: Statement = { text: 'SELECT 1', name: 'a2a_reachable' }

/**
 * The store's pool of connections. Each call is one statement (one round trip); a server that is down fails it at
 * once with a 503, and the pool connects again for the next. `ready` gates every call until the schema is checked.
 */
export class PgPool {
  readonly pool: Pool
  readonly timeoutMs: number
  #closed = false
  #ready: Promise<void> = Promise.resolve()
  #start: (() => Promise<void>) | undefined
  #startFailed = false
  /** Statements sent: each is one round trip (counted for the benchmarks and tests). */
  statements = 0

  constructor(pg: PgModule, url: string, timeoutMs: number, poolSize: number) {
    this.timeoutMs = timeoutMs
    const config: PoolConfig = {
      ...clientConfig(url, timeoutMs),
      // The store's statements each read a page or a task: JIT compiling them (the planner's estimates for the
      // per-task reads pass jit_above_cost) costs tens of ms and saves nothing. Set as the session starts (a
      // statement sent on connect would race the pool's first query on that connection); an `options` the URL
      // gives replaces it.
      options: '-c jit=off',
      max: poolSize,
      idleTimeoutMillis: 30_000,
    }
    this.pool = new pg.Pool(config)
    // An idle connection the server closed (a restart): reported per request, when one is made again.
    this.pool.on('error', noop)
  }

  get closed(): boolean {
    return this.#closed
  }

  /**
   * Calls wait for `start` first (the schema's check at start), and fail with what it failed with. A start that
   * failed because the server could not be reached is tried again by the next call; one the schema refused (a
   * `ConfigurationError`) stays refused.
   */
  gate(start: () => Promise<void>): void {
    this.#start = start
    this.#startNow()
  }

  /** The schema's check at start, tried again when it last failed for want of the server. */
  ready(): Promise<void> {
    if (this.#startFailed) this.#startNow()
    return this.#ready
  }

  #startNow(): void {
    const start = this.#start
    if (!start) return
    this.#startFailed = false
    const attempt = start()
    this.#ready = attempt
    attempt.catch((error: unknown) => {
      if (!(error instanceof ConfigurationError) && this.#ready === attempt) this.#startFailed = true
    })
  }

  /** The database answers now: one `SELECT 1` (after the schema's check, which fails it as it fails requests). */
  async reachable(): Promise<void> {
    await this.query(REACHABLE)
  }

  /** Runs one statement; errors as `unavailable` says, conflicts retried. */
  async query<R extends QueryResultRow = QueryResultRow>(statement: Statement, values: unknown[] = []): Promise<R[]> {
    await this.ready().catch((error: unknown) => {
      // The schema was refused at start (see `_schema.ts`): each request says why, in the one line of the refusal.
      throw error instanceof ConfigurationError ? new ServerUnavailableError(error.message, 503) : error
    })
    return this.queryNow<R>(statement, values)
  }

  /** `query` without waiting for the schema's check (the check itself). */
  async queryNow<R extends QueryResultRow = QueryResultRow>(
    statement: Statement,
    values: unknown[] = [],
  ): Promise<R[]> {
    if (this.#closed) throw unavailable(new Error('the store is closed'), this.timeoutMs)
    for (let attempt = 0; ; attempt++) {
      try {
        this.statements++
        const config = statement.name ? { name: statement.name, text: statement.text } : { text: statement.text }
        return (await this.pool.query<R>({ ...config, values })).rows
      } catch (error) {
        const code = (error as { code?: string }).code
        if (code !== undefined && CONFLICTS.has(code) && attempt < CONFLICT_RETRIES.length) {
          await new Promise((resolve) => setTimeout(resolve, CONFLICT_RETRIES[attempt]! * (1 + Math.random())))
          continue
        }
        throw unavailable(error, this.timeoutMs)
      }
    }
  }

  /** An error of this pool's server as the client is told it (see `unavailable`). */
  unavailable(error: unknown): Error {
    return unavailable(error, this.timeoutMs)
  }

  /** Requests fail from now on. */
  markClosed(): void {
    this.#closed = true
  }

  async end(): Promise<void> {
    this.#closed = true
    await endWithin(this.pool.end(), this.timeoutMs)
  }
}
