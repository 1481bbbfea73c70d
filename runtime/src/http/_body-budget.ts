import { ServerUnavailableError } from '../errors.js'
import { type Env, wholeNumberSetting } from '../settings.js'

/**
 * Request bodies being received, across the server, in bytes. A body is buffered whole before it is parsed, so
 * clients that declare large bodies and send them slowly (or stall one byte short) would otherwise hold
 * `maxBodySize` each for as long as the request timeout lets them. Counted in the app, so it holds on every
 * runtime the app is served on.
 */

const DEFAULT_MAX_BODY_BYTES_IN_FLIGHT = 64 * 1024 * 1024
/**
 * An ordinary message's body is at most this large. Larger bodies may fill only half of the budget, so however
 * many large bodies stall, ordinary messages keep being read (stalled small bodies are bounded by the connection
 * caps).
 */
const SMALL_BODY_BYTES = 64 * 1024

export class BodyBudget {
  readonly max: number
  readonly #largeCeiling: number
  #inFlight = 0
  /** Bodies refused so far (read by telemetry). */
  refused = 0

  constructor(max: number) {
    this.max = max
    this.#largeCeiling = Math.floor(max / 2)
  }

  /** Bytes reserved by bodies being received now. */
  get inFlight(): number {
    return this.#inFlight
  }

  /**
   * A reservation for one body: `declared` bytes now (its Content-Length, when it has one), or undefined when they do
   * not fit.
   */
  reserve(declared: number): BodyReservation | undefined {
    const reservation = new BodyReservation(this)
    return reservation.cover(declared) ? reservation : undefined
  }

  /** Takes `bytes` more for a body of `total` bytes (these included); false, taking nothing, when they do not fit. */
  take(bytes: number, total: number): boolean {
    if (this.#inFlight + bytes > (total > SMALL_BODY_BYTES ? this.#largeCeiling : this.max)) {
      this.refused++
      return false
    }
    this.#inFlight += bytes
    return true
  }

  give(bytes: number): void {
    this.#inFlight -= bytes
  }

  /** The answer to a body that does not fit: 503 with Retry-After, and the connection closed (its body unread). */
  refusal(): ServerUnavailableError {
    return new ServerUnavailableError(
      `Too many request bodies being received at once (maxBodyBytesInFlight: ${this.max} bytes); retry shortly`,
      503,
    )
  }
}

/** What one body holds of the budget, from before it is read until it has been read or abandoned. */
export class BodyReservation {
  readonly #budget: BodyBudget
  #taken = 0

  constructor(budget: BodyBudget) {
    this.#budget = budget
  }

  /** Grows the reservation to `total` bytes (a body counted as it arrives); false when that does not fit. */
  cover(total: number): boolean {
    if (!(total > this.#taken)) return true
    if (!this.#budget.take(total - this.#taken, total)) return false
    this.#taken = total
    return true
  }

  release(): void {
    this.#budget.give(this.#taken)
    this.#taken = 0
  }

  refusal(): ServerUnavailableError {
    return this.#budget.refusal()
  }
}

/**
 * The budget from the option, else `A2A_MAX_BODY_BYTES_IN_FLIGHT`, else 64 MiB (or twice `maxBodySize`, if that
 * is more). It must hold two of the largest bodies: large bodies may take only half of it.
 */
export function readBodyBudget(option: number | undefined, maxBodySize: number, env: Env): BodyBudget {
  const value = wholeNumberSetting({
    option: 'maxBodyBytesInFlight',
    variable: 'A2A_MAX_BODY_BYTES_IN_FLIGHT',
    given: option,
    env,
    fallback: Math.max(DEFAULT_MAX_BODY_BYTES_IN_FLIGHT, 2 * maxBodySize),
    min: 2 * maxBodySize,
    unit: 'bytes',
    atLeast: `twice maxBodySize (${2 * maxBodySize}), so the largest body fits`,
  })
  return new BodyBudget(value)
}
