import { constants as http2, type ServerHttp2Stream } from 'node:http2'
import type { sendUnaryData } from '@grpc/grpc-js'
import type { Outgoing, WatchedBody } from '../http/_outgoing.js'
import { statusOf } from './_status.js'

/**
 * A unary call's answer, counted as HTTP counts a large answer (`http/_large-answer.ts`): against the server's
 * `maxPendingResponseBytes` from when it is handed to grpc-js until its HTTP/2 stream closes (the client took it
 * all, or left), and cut, its stream reset, when the client takes nothing for `writeTimeoutMs`. An answer that
 * does not fit the budget ends the call `UNAVAILABLE` before anything is written, as HTTP answers 503.
 */
export function answerCounted(
  bytes: Buffer,
  callback: sendUnaryData<Buffer>,
  stream: ServerHttp2Stream | undefined,
  outgoing: Outgoing,
): void {
  // The client is gone (or grpc-js keeps its stream elsewhere): grpc-js drops or sends it, nothing waits here.
  if (!stream || stream.closed || stream.destroyed) {
    callback(null, bytes)
    return
  }
  if (!outgoing.reserve(bytes.length)) {
    callback(statusOf(outgoing.busy(bytes.length)))
    return
  }
  const answer = new UnaryAnswer(bytes.length, stream, outgoing)
  stream.once('close', answer.finish)
  callback(null, bytes)
}

class UnaryAnswer implements WatchedBody {
  readonly owing = true
  readonly #bytes: number
  readonly #stream: ServerHttp2Stream
  readonly #outgoing: Outgoing
  #done = false

  constructor(bytes: number, stream: ServerHttp2Stream, outgoing: Outgoing) {
    this.#bytes = bytes
    this.#stream = stream
    this.#outgoing = outgoing
    outgoing.watch(this)
  }

  /** What waits to be sent on the stream: it changes only as the client takes bytes, which the sweep sees. */
  get reads(): number {
    return this.#stream.bufferSize ?? 0
  }

  cut(reason: string): void {
    if (this.#done) return
    this.#outgoing.logger.info(`gRPC answer cut: ${reason}`)
    this.#stream.close(http2.NGHTTP2_CANCEL)
    this.finish()
  }

  readonly finish = (): void => {
    if (this.#done) return
    this.#done = true
    this.#outgoing.release(this.#bytes)
    this.#outgoing.unwatch(this)
  }
}
