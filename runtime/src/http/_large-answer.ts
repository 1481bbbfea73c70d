import { FastResponse } from 'srvx'
import { type Outgoing, PIECE_BYTES, type WatchedBody } from './_outgoing.js'

/**
 * Answers longer than this (in UTF-16 units, so at most three times as many bytes) are handed to the connection
 * piece by piece; shorter ones keep the plain string body, written whole at once.
 */
export const LARGE_ANSWER_CHARS = 64 * 1024

const encoder = new TextEncoder()
const SENT = new Uint8Array(0)

/**
 * A large JSON answer as a body the connection pulls one piece at a time: the answer counts whole against
 * `maxPendingResponseBytes` until its last piece has been taken (so many slow clients of a large task cannot
 * hold a copy each beyond it), and a client that takes nothing for `writeTimeoutMs` is cut. An answer that does
 * not fit the budget now throws the 503 error (`Outgoing.busy`) before anything is written.
 */
export function largeJsonResponse(json: string, outgoing: Outgoing): Response {
  // The string's length is a lower bound of its bytes: a budget already too full is known before encoding.
  if (!outgoing.reserve(json.length)) throw outgoing.busy(json.length)
  outgoing.release(json.length)
  const bytes = encoder.encode(json)
  if (!outgoing.reserve(bytes.length)) throw outgoing.busy(bytes.length)
  const body = new PulledBody(bytes, outgoing)
  return new FastResponse(body.stream, {
    headers: [
      ['content-type', 'application/json'],
      ['content-length', String(bytes.length)],
    ],
  })
}

class PulledBody implements WatchedBody {
  readonly stream: ReadableStream<Uint8Array>
  #controller!: ReadableStreamDefaultController<Uint8Array>
  #bytes: Uint8Array
  #offset = 0
  #done = false
  readonly #outgoing: Outgoing
  reads = 0
  // Owed from the start: the whole answer waits for the client until its last piece has been sent.
  readonly owing = true

  constructor(bytes: Uint8Array, outgoing: Outgoing) {
    this.#bytes = bytes
    this.#outgoing = outgoing
    this.stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller
        },
        pull: (controller) => this.#pull(controller),
        cancel: () => this.#finish(),
      },
      { highWaterMark: 0 },
    )
    outgoing.watch(this)
  }

  cut(reason: string): void {
    if (this.#done) return
    this.#finish()
    // An errored body makes the response writer destroy the connection, which frees what Node holds for it.
    this.#controller.error(new Error(`Response cut: ${reason}`))
  }

  #pull(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.reads++
    // Asked for more after the last piece: the connection has sent it all.
    if (this.#bytes === SENT) {
      this.#finish()
      controller.close()
      return
    }
    // A copy: a piece Node holds for a client that stopped reading must not keep the whole answer alive.
    const piece = this.#bytes.slice(this.#offset, this.#offset + PIECE_BYTES)
    this.#offset += piece.length
    controller.enqueue(piece)
    if (this.#offset === this.#bytes.length) this.#releaseAnswer()
  }

  #finish(): void {
    if (this.#done) return
    this.#done = true
    this.#releaseAnswer()
    this.#outgoing.unwatch(this)
  }

  /** Every piece has left (or never will): the answer is no longer held here. */
  #releaseAnswer(): void {
    if (this.#bytes === SENT) return
    this.#outgoing.release(this.#bytes.length)
    this.#bytes = SENT
    this.#offset = 0
  }
}
