import { ServerUnavailableError } from '../errors.js'
import type { Outgoing } from './_outgoing.js'
import { SseStream } from './_sse.js'

/** What a stream of a binding other than SSE (gRPC) gets to be counted and budgeted as an SSE stream is. */
export interface CountedStream {
  /** Call once when the stream ends (closed, cut, or its client went away): it no longer counts as open. */
  onEnd: () => void
  /** The server's budget of unread bytes, the backlog cap and the write timeout, shared with SSE. */
  outgoing: Outgoing
}

/** The streams open at once, over every binding: past `maxStreams` a new one is refused (HTTP 503) until some end. */
export class StreamLimit {
  #open = 0
  /** Streams refused so far past `maxStreams` (read by telemetry). */
  refused = 0
  readonly #maxStreams: number
  readonly #heartbeatMs: number
  readonly #outgoing: Outgoing
  readonly #ended = () => {
    this.#open--
  }

  constructor(maxStreams: number, heartbeatMs: number, outgoing: Outgoing) {
    this.#maxStreams = maxStreams
    this.#heartbeatMs = heartbeatMs
    this.#outgoing = outgoing
  }

  /** A new stream, counted until it ends (bound: the bindings call it without its object). */
  readonly open = (): SseStream => {
    this.#claim()
    return new SseStream({ heartbeatMs: this.#heartbeatMs, onEnd: this.#ended, outgoing: this.#outgoing })
  }

  /**
   * A stream of another binding (gRPC), made by `make` and counted with the SSE streams until it calls `onEnd`:
   * past `maxStreams` it is refused as `open` refuses.
   */
  openCounted<T>(make: (counted: CountedStream) => T): T {
    this.#claim()
    let ended = false
    const onEnd = () => {
      if (ended) return
      ended = true
      this.#ended()
    }
    try {
      return make({ onEnd, outgoing: this.#outgoing })
    } catch (error) {
      onEnd()
      throw error
    }
  }

  /** Streams open now. */
  get openCount(): number {
    return this.#open
  }

  #claim(): void {
    if (this.#open >= this.#maxStreams) {
      this.refused++
      throw new ServerUnavailableError(`Too many open streams (${this.#maxStreams}); retry shortly`, 503)
    }
    this.#open++
  }
}
