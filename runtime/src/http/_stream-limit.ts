import { ServerUnavailableError } from '../errors.js'
import type { Outgoing } from './_outgoing.js'
import { SseStream } from './_sse.js'

/** The SSE streams open at once: past `maxStreams` a streaming request gets HTTP 503 until some end. */
export class StreamLimit {
  #open = 0
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
    if (this.#open >= this.#maxStreams)
      throw new ServerUnavailableError(`Too many open streams (${this.#maxStreams}); retry shortly`, 503)
    this.#open++
    return new SseStream({ heartbeatMs: this.#heartbeatMs, onEnd: this.#ended, outgoing: this.#outgoing })
  }
}
