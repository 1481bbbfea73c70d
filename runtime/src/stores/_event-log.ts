import type { TaskEvent } from '../types.js'

/**
 * The events of one task kept for clients that resume a broken stream (`Last-Event-ID`): the newest ones, at
 * most `maxBytes` of them (counted as JSON by `sizeOf`) or the newest alone when it is larger; older ones are
 * dropped as new ones arrive, and the log remembers up to which number it lost them, so a resume from before its
 * window is told so instead of given a gap.
 */
export class EventLog {
  readonly maxBytes: number
  readonly #sizeOf: (event: TaskEvent) => number
  // Kept events start at `#head`: dropping the oldest moves it on, and the array is cut down once most of it
  // is dropped ones, so each event costs O(1) however long the task runs. Sizes are not kept per event: the
  // oldest is measured again when it is dropped (events do not change once published), which spares every
  // task a second array when most never fill their window.
  #events: TaskEvent[]
  #head = 0
  #bytes = 0
  #lastSeq: number
  #keptAfter: number

  /** `events` and `keptAfter`: a log read back from a file, which may have lost its oldest. */
  constructor(maxBytes: number, sizeOf: (event: TaskEvent) => number, events: TaskEvent[] = [], keptAfter = 0) {
    this.maxBytes = maxBytes
    this.#sizeOf = sizeOf
    this.#events = events
    this.#keptAfter = keptAfter
    this.#lastSeq = events.length > 0 ? events[events.length - 1]!.seq : keptAfter
    if (events.length > 0) {
      for (const event of events) this.#bytes += sizeOf(event)
      this.#trim()
    }
  }

  /** Bytes of the events kept. */
  get bytes(): number {
    return this.#bytes
  }

  /** The number of the last event, kept or not (0 before the first). */
  get lastSeq(): number {
    return this.#lastSeq
  }

  /** Every event numbered after this one is kept (0: none was dropped). */
  get keptAfter(): number {
    return this.#keptAfter
  }

  /**
   * Adds the newest event (`size` its bytes, as `sizeOf` counts it); returns how the bytes kept changed (it may drop
   * older ones).
   */
  push(event: TaskEvent, size: number): number {
    const before = this.#bytes
    this.#events.push(event)
    this.#bytes += size
    this.#lastSeq = event.seq
    if (this.#bytes > this.maxBytes) this.#trim()
    return this.#bytes - before
  }

  /** The events kept, oldest first. */
  all(): TaskEvent[] {
    return this.#events.slice(this.#head)
  }

  /** The events after `afterSeq`, oldest first; `undefined` when some of them were dropped. */
  after(afterSeq: number): TaskEvent[] | undefined {
    if (afterSeq < this.#keptAfter) return undefined
    if (afterSeq >= this.#lastSeq) return []
    const events = this.#events
    const first = events[this.#head]
    if (!first) return []
    // Numbers are consecutive unless a repair after a crash jumped past the ones a stopped process may have
    // sent: then look the position up.
    const index = this.#head + (afterSeq + 1 - first.seq)
    if (index >= this.#head && events[index]?.seq === afterSeq + 1) return events.slice(index)
    return events.slice(this.#head).filter((event) => event.seq > afterSeq)
  }

  /**
   * Drops the oldest events until the rest fit in `maxBytes` (less than the log's own budget: the store is short
   * of room); returns the bytes let go. Later events fill the log up to its own budget again.
   */
  shrinkTo(maxBytes: number): number {
    const before = this.#bytes
    this.#trim(maxBytes)
    return before - this.#bytes
  }

  /**
   * Drops the oldest events until the rest fit. The newest is kept even when it alone does not (it is part of the
   * task anyway): the log always tells the number of the last event, which numbers the task's next turn.
   */
  #trim(maxBytes = this.maxBytes): void {
    const events = this.#events
    while (this.#bytes > maxBytes && this.#head < events.length - 1) {
      const oldest = events[this.#head]!
      // Never below zero, whatever an agent did to an event's objects after publishing it.
      this.#bytes = Math.max(0, this.#bytes - this.#sizeOf(oldest))
      this.#keptAfter = oldest.seq
      events[this.#head] = undefined as unknown as TaskEvent // released now, not at the next cut
      this.#head++
    }
    if (this.#head > 32 && this.#head * 2 > events.length) {
      this.#events = events.slice(this.#head)
      this.#head = 0
    }
  }
}
