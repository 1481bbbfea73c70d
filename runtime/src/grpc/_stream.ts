import { constants as http2, type ServerHttp2Stream } from 'node:http2'
import type { ServerWritableStream, StatusObject } from '@grpc/grpc-js'
import type { EventStream, StreamFrame } from '../bindings/shared/_binding.js'
import type { WatchedBody } from '../http/_outgoing.js'
import type { CountedStream } from '../http/_stream-limit.js'
import { INTERNAL } from './_status.js'

/** A gRPC server stream has no HTTP answer: `EventStream.response` is this, and the gRPC handler ignores it. */
const NO_RESPONSE = new Response(null)

type Call = ServerWritableStream<Buffer, Buffer>

/**
 * A v1.0 method's event stream written to a gRPC server stream: each result (a StreamResponse, the ProtoJSON object
 * the gRPC binding's `frameV1` hands over as it is) encoded once and written to the call.
 *
 * A client that stops reading is cut, never buffered for. grpc-js hands the HTTP/2 stream one message at a time
 * (its writable waits for each write's callback, which comes once HTTP/2 flow control lets the message out), so
 * what the client has not taken is counted here: every message written and not yet let out, against the app's
 * `maxStreamBacklogBytes` (less the largest message among them, as SSE counts it: one event, however large, never
 * counts by itself) and the server's `maxPendingResponseBytes`; and a call whose client takes nothing for
 * `writeTimeoutMs` while messages wait is cut too. Cutting resets the HTTP/2 stream (RST_STREAM CANCEL): the
 * client's call ends with CANCELLED, its other calls on the connection go on, and it can resubscribe.
 */
export class GrpcEventStream implements EventStream, WatchedBody {
  readonly response = NO_RESPONSE
  readonly #call: Call
  readonly #encode: (frame: object) => Buffer
  readonly #counted: CountedStream
  /** The call's HTTP/2 stream, as the call gate found it: cutting resets it. */
  readonly #stream: ServerHttp2Stream | undefined
  /** Sizes of the messages written and not yet let out, oldest first. */
  readonly #waiting: number[] = []
  #queued = 0
  /** The largest message written since nothing last waited: at least the largest waiting, found without a scan. */
  #largest = 0
  #accepting = true
  /** The method that opened the stream has returned: `close()` may end the call (before, an error may follow). */
  #started = false
  #closing = false
  #ended = false
  #cancelled = false
  #failed = false
  #onCancel: (() => void) | undefined
  reads = 0

  constructor(
    call: Call,
    encode: (frame: object) => Buffer,
    counted: CountedStream,
    stream: ServerHttp2Stream | undefined,
  ) {
    this.#call = call
    this.#encode = encode
    this.#counted = counted
    this.#stream = stream
    counted.outgoing.watch(this)
    call.on('cancelled', this.#cancel)
    call.on('finish', this.#end)
    call.on('close', this.#end)
    // 'cancelled' fires once: a client that left while the method was getting ready is gone already.
    if (call.cancelled) this.#cancel()
  }

  get owing(): boolean {
    return this.#queued > 0
  }

  send(frame: StreamFrame, _seq?: number): void {
    if (!this.#accepting) return
    let bytes: Buffer
    try {
      // The gRPC binding frames results as themselves (`frameV1`): a frame here is never text.
      bytes = this.#encode(frame as object)
    } catch (error) {
      // The agent's value has no protobuf form (bytes that are not base64, say): this call ends, never the agent's
      // move that produced it, and other clients of the task go on.
      const why = error instanceof Error ? error.message : String(error)
      this.#counted.outgoing.logger.error(`A gRPC stream ended INTERNAL: an event cannot be encoded (${why})`)
      this.failed(INTERNAL)
      return
    }
    const { limits } = this.#counted.outgoing
    if (this.#queued > 0 && this.#backlogWith(bytes.length) > limits.maxStreamBacklogBytes) {
      this.#counted.outgoing.backlogCuts++
      this.#drop(`its unread events would pass maxStreamBacklogBytes (${limits.maxStreamBacklogBytes} bytes)`)
      return
    }
    if (!this.#counted.outgoing.reserve(bytes.length)) {
      this.#drop(
        `bytes waiting for slow clients would pass maxPendingResponseBytes (${limits.maxPendingResponseBytes} bytes)`,
      )
      return
    }
    this.#waiting.push(bytes.length)
    this.#queued += bytes.length
    if (bytes.length > this.#largest) this.#largest = bytes.length
    this.#call.write(bytes, this.#taken)
  }

  /** Ends the call (status OK) after what was sent, once the method that opened it has returned. */
  close(): void {
    if (!this.#accepting) return
    this.#accepting = false
    this.#closing = true
    if (this.#started) this.#call.end()
  }

  onCancel(callback: () => void): void {
    this.#onCancel = callback
    if (this.#cancelled) callback()
  }

  /** The method returned: a stream it closed already ends now, one it keeps open ends on `close()`. */
  started(): void {
    this.#started = true
    if (this.#closing) this.#call.end()
  }

  /** The method failed after opening the stream (it closed it first): the call ends with its error instead. */
  failed(error: Partial<StatusObject>): void {
    this.#started = true
    this.#accepting = false
    if (this.#failed || this.#ended) return
    this.#failed = true
    this.#call.emit('error', error)
  }

  /** Drops the client now: its HTTP/2 stream is reset, what waits for it freed. */
  cut(reason: string): void {
    if (this.#ended) return
    this.#counted.outgoing.logger.info(`gRPC stream cut: ${reason}`)
    this.#accepting = false
    // grpc-js has no public way to reset one call's stream: a status would wait behind the messages the client does
    // not read. The call gate found the HTTP/2 stream (test/runtime/grpc-backpressure pins the reset); without it
    // the whole writable is destroyed, which frees what waits here but not the stream.
    this.#stream?.close(http2.NGHTTP2_CANCEL)
    this.#call.destroy()
    this.#cancel()
  }

  #drop(why: string): void {
    this.cut(`${why}; it can resubscribe with SubscribeToTask`)
  }

  #backlogWith(bytes: number): number {
    return this.#queued + bytes - Math.max(this.#largest, bytes)
  }

  readonly #taken = (): void => {
    const size = this.#waiting.shift()
    if (size === undefined) return
    this.reads++
    this.#queued -= size
    if (this.#queued === 0) this.#largest = 0
    this.#counted.outgoing.release(size)
  }

  readonly #cancel = (): void => {
    if (this.#cancelled) return
    this.#cancelled = true
    this.#end()
    this.#onCancel?.()
  }

  /** The call is over (its status sent, or its client gone): it no longer counts, what waited is released. */
  readonly #end = (): void => {
    if (this.#ended) return
    this.#ended = true
    this.#accepting = false
    this.#counted.outgoing.release(this.#queued)
    this.#queued = 0
    this.#waiting.length = 0
    this.#counted.outgoing.unwatch(this)
    this.#counted.onEnd()
  }
}
