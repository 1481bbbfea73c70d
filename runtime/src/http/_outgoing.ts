import { ServerUnavailableError } from '../errors.js'
import type { Logger } from '../logger.js'
import { type Env, type Variable, wholeNumberSetting } from '../settings.js'

/**
 * What the server has written that its clients have not read yet. A client that stops reading must not make the
 * server hold its answers without limit: every response body hands the connection one piece at a time, as the
 * client takes them, and what waits in between is counted here against one server-wide budget. A response whose
 * client takes nothing for `writeTimeoutMs` while bytes wait for it is cut.
 */

const DEFAULT_MAX_STREAM_BACKLOG_BYTES = 1024 * 1024
const DEFAULT_MAX_PENDING_RESPONSE_BYTES = 64 * 1024 * 1024
const DEFAULT_WRITE_TIMEOUT_MS = 30_000
/**
 * The most a body hands the connection at once. Node keeps a piece it could not send in its own buffer until the
 * client reads, uncounted: small pieces keep that to about this much (plus the socket's high-water mark) per client.
 */
export const PIECE_BYTES = 64 * 1024
/** The longest delay Node's timers take. */
const MAX_TIMER_MS = 2_147_483_647

export interface OutgoingLimits {
  maxStreamBacklogBytes: number
  maxPendingResponseBytes: number
  writeTimeoutMs: number
}

/** The limits from the options, else the environment, else the defaults; a bad one names itself and its value. */
export function readOutgoingLimits(options: Partial<OutgoingLimits>, env: Env): OutgoingLimits {
  const read = (
    option: keyof OutgoingLimits,
    variable: Variable,
    fallback: number,
    max = Number.MAX_SAFE_INTEGER,
  ): number => wholeNumberSetting({ option, variable, given: options[option], env, fallback, min: 1, max })
  return {
    maxStreamBacklogBytes: read('maxStreamBacklogBytes', 'A2A_SSE_MAX_BACKLOG_BYTES', DEFAULT_MAX_STREAM_BACKLOG_BYTES),
    maxPendingResponseBytes: read(
      'maxPendingResponseBytes',
      'A2A_MAX_PENDING_RESPONSE_BYTES',
      DEFAULT_MAX_PENDING_RESPONSE_BYTES,
    ),
    writeTimeoutMs: read('writeTimeoutMs', 'A2A_WRITE_TIMEOUT_MS', DEFAULT_WRITE_TIMEOUT_MS, MAX_TIMER_MS),
  }
}

/** A response body the write timeout watches. */
export interface WatchedBody {
  /** It holds bytes its client has not taken (waiting here, or handed to the connection and not yet drained). */
  readonly owing: boolean
  /** Grows each time the client takes a piece: the sweep sees progress by it, with no clock read per piece. */
  readonly reads: number
  /** Ends the response now (the connection closes) and releases what it holds. */
  cut(reason: string): void
}

/** What the sweep last saw of a body: its `reads`, or -1 when it owed nothing, and since when it has not moved. */
interface Seen {
  reads: number
  since: number
}

export class Outgoing {
  readonly limits: OutgoingLimits
  readonly logger: Logger
  #pending = 0
  /** Answers refused so far for want of room (read by telemetry). */
  refused = 0
  /** Streams cut so far for a backlog past `maxStreamBacklogBytes` (counted by the streams; read by telemetry). */
  backlogCuts = 0
  readonly #bodies = new Map<WatchedBody, Seen>()
  #sweeper: ReturnType<typeof setInterval> | undefined
  readonly #sweepMs: number

  constructor(limits: OutgoingLimits, logger: Logger) {
    this.limits = limits
    this.logger = logger
    // One timer for every body, not one per write: often enough to cut within two periods of the timeout.
    this.#sweepMs = Math.max(10, Math.min(1000, Math.floor(limits.writeTimeoutMs / 4)))
  }

  /** Bytes waiting for clients now, across the server. */
  get pendingBytes(): number {
    return this.#pending
  }

  /** Counts `bytes` as waiting for a client, unless that would pass `maxPendingResponseBytes`. */
  reserve(bytes: number): boolean {
    if (this.#pending + bytes > this.limits.maxPendingResponseBytes) {
      this.refused++
      return false
    }
    this.#pending += bytes
    return true
  }

  release(bytes: number): void {
    this.#pending -= bytes
  }

  /** The error a response gets when its answer does not fit the budget. */
  busy(bytes: number): ServerUnavailableError {
    const { maxPendingResponseBytes } = this.limits
    return new ServerUnavailableError(
      `Too many bytes waiting for slow clients to read (an answer of ${bytes} bytes would pass maxPendingResponseBytes, ${maxPendingResponseBytes}); retry shortly`,
      503,
    )
  }

  watch(body: WatchedBody): void {
    this.#bodies.set(body, { reads: -1, since: 0 })
    if (this.#sweeper === undefined) {
      this.#sweeper = setInterval(this.#sweep, this.#sweepMs)
      this.#sweeper.unref()
    }
  }

  unwatch(body: WatchedBody): void {
    this.#bodies.delete(body)
    if (this.#bodies.size === 0 && this.#sweeper !== undefined) {
      clearInterval(this.#sweeper)
      this.#sweeper = undefined
    }
  }

  readonly #sweep = (): void => {
    const now = performance.now()
    const { writeTimeoutMs } = this.limits
    for (const [body, seen] of this.#bodies) {
      // The stall is timed from the first sweep that sees it, so a body is never cut early.
      if (!body.owing) seen.reads = -1
      else if (body.reads !== seen.reads) {
        seen.reads = body.reads
        seen.since = now
      } else if (now - seen.since >= writeTimeoutMs) {
        this.logger.info(
          `Response cut: its client read nothing for ${writeTimeoutMs} ms while bytes waited for it (writeTimeoutMs)`,
        )
        body.cut(`the client read nothing for ${writeTimeoutMs} ms (writeTimeoutMs)`)
      }
    }
  }
}
