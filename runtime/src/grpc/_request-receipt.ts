import type { ServerHttp2Stream } from 'node:http2'
import { status } from '@grpc/grpc-js'
import type { BodyBudget, BodyReservation } from '../http/_body-budget.js'
import { type GrpcStatus, statusOf } from './_status.js'

/** gRPC frames each message with a flag byte and its length in four bytes, big-endian. */
const PREFIX_BYTES = 5

/**
 * A call's request message while it is received, held to what an HTTP request body is held to: it counts against
 * the app's `maxBodyBytesInFlight` (its declared length as soon as its prefix arrives, as a Content-Length counts,
 * and every byte that comes), and it must be whole, half-close included, within `requestTimeoutMs`. Past either the
 * call ends (`UNAVAILABLE`, `DEADLINE_EXCEEDED`) with nothing more of it buffered: grpc-js discards what follows.
 *
 * grpc-js reads a call's messages off its HTTP/2 stream, which it keeps as `stream` on its own call object, and
 * says nothing of the bytes until a message is whole: the receipt listens to the stream's data beside it (a
 * listener added to a paused stream does not start the flow). Where the stream is not found (another grpc-js),
 * the largest message's worth is reserved up front instead.
 */
export class RequestReceipt {
  readonly #reservation: BodyReservation | undefined
  readonly #stream: ServerHttp2Stream | undefined
  readonly #timer: ReturnType<typeof setTimeout>
  readonly #refuse: (ended: GrpcStatus) => void
  #received = 0
  #prefix: Buffer = Buffer.alloc(0)
  #done = false

  constructor(
    stream: ServerHttp2Stream | undefined,
    budget: BodyBudget,
    limits: { maxBodySize: number; requestTimeoutMs: number },
    refuse: (ended: GrpcStatus) => void,
  ) {
    this.#stream = stream
    this.#refuse = refuse
    this.#reservation = budget.reserve(stream ? 0 : limits.maxBodySize)
    this.#timer = setTimeout(
      () =>
        this.#end({
          code: status.DEADLINE_EXCEEDED,
          details: `The request message did not arrive whole within requestTimeoutMs (${limits.requestTimeoutMs} ms)`,
        }),
      limits.requestTimeoutMs,
    )
    this.#timer.unref()
    if (!this.#reservation) {
      // Reported once the caller's listener is in place: a refusal must not run inside its constructor.
      queueMicrotask(() => this.#end(statusOf(budget.refusal())))
      return
    }
    stream?.on('data', this.#count)
  }

  /** The message is whole (half-close) or the call is over: the receipt gives back what it held. */
  done(): void {
    if (this.#done) return
    this.#done = true
    clearTimeout(this.#timer)
    this.#stream?.off('data', this.#count)
    this.#reservation?.release()
  }

  readonly #count = (chunk: Buffer): void => {
    if (this.#done) return
    this.#received += chunk.length
    let total = this.#received
    if (this.#prefix.length < PREFIX_BYTES) {
      this.#prefix = Buffer.concat([this.#prefix, chunk.subarray(0, PREFIX_BYTES - this.#prefix.length)])
      if (this.#prefix.length === PREFIX_BYTES) total = Math.max(total, PREFIX_BYTES + this.#prefix.readUInt32BE(1))
    }
    if (!this.#reservation!.cover(total)) this.#end(statusOf(this.#reservation!.refusal()))
  }

  #end(ended: GrpcStatus): void {
    if (this.#done) return
    this.done()
    this.#refuse(ended)
  }
}
