import { FastResponse } from 'srvx'
import { type Outgoing, PIECE_BYTES, type WatchedBody } from './_outgoing.js'

/** Headers the platform spec requires on every stream (as pairs, which the response writer takes as they are). */
const SSE_HEADERS: Array<[string, string]> = [
  ['content-type', 'text/event-stream'],
  ['cache-control', 'no-cache'],
  ['connection', 'keep-alive'],
]

const encoder = new TextEncoder()

/**
 * A push-style server-sent-events body: events written before the client reads are queued, each as exactly
 * `data: <json>\n\n`. Writing after the client has gone is a no-op, so a disconnect never throws into the task.
 *
 * Events sent in one synchronous run (an agent that works, adds an artifact and completes in one go) leave
 * as one chunk at the end of that run: one write to the socket instead of one per event, with no delay (the
 * flush is a microtask, before any I/O).
 *
 * The connection gets a piece only when it asks for one (it has sent the last), so a client that stops
 * reading leaves the bytes here, counted: past `maxStreamBacklogBytes` (its backlog, below) or past the
 * server's `maxPendingResponseBytes`, the subscriber is dropped (its connection closed, its bytes freed, its
 * listener removed as for a disconnect); the task and other subscribers go on, and the client can resume with
 * `Last-Event-ID`. A client that keeps up gets each run's chunk handed straight to its connection.
 *
 * The backlog is every byte queued here and not yet handed to the connection (the chunk at the head of the
 * queue by what is left of it), less the largest single chunk among them; it is checked each time a chunk is
 * queued, that chunk included, and the subscriber is dropped when it would be more than the cap (exactly at the
 * cap is kept). So one event, however large, never counts by itself: a client that reads is not dropped for it
 * — not when it is queued behind smaller events the connection has not taken yet, as at the start of a stream
 * before the connection has asked for anything, nor when it comes while the connection is still sending an
 * earlier piece. Large events are bounded elsewhere (`maxTaskBytes`, `maxPendingResponseBytes`). A client that
 * stops reading is dropped once what waits for it besides its largest event passes the cap: it holds at most
 * the cap plus one event here (plus the piece Node holds and the kernel's buffers). Of several events waiting
 * at once, all but the largest count: an agent that writes more than the cap in large events faster than a
 * client reads them can still pass it.
 */
export interface SseOptions {
  /** Writes a comment (`: keep-alive`) after this many ms without an event, so proxies keep the stream. */
  heartbeatMs?: number
  /** Called once when the stream ends (closed, dropped, or the client went away). */
  onEnd?: () => void
  /** The server's budget of unread bytes, the backlog cap and the write timeout. */
  outgoing: Outgoing
}

const HEARTBEAT = encoder.encode(': keep-alive\n\n')

const frame = (json: string, id: number | undefined) =>
  id === undefined ? `data: ${json}\n\n` : `id: ${id}\ndata: ${json}\n\n`

// The last single-event chunk encoded, by its event: the subscribers of one task get the same JSON for each
// event (the platform dialect's notifications, or any dialect's frames under one request id) and share one copy
// of its bytes instead of holding one each while they wait. Comparing costs less than encoding, and nothing
// when the lengths differ.
let lastJson = ''
let lastId: number | undefined
let lastChunk = encoder.encode('')
function encodeEvent(json: string, id: number | undefined): Uint8Array {
  if (json !== lastJson || id !== lastId) {
    lastChunk = encoder.encode(frame(json, id))
    lastJson = json
    lastId = id
  }
  return lastChunk
}

export class SseStream implements WatchedBody {
  readonly response: Response
  #controller!: ReadableStreamDefaultController<Uint8Array>
  readonly #outgoing: Outgoing
  /** Events may still be sent (until `close()` or the end). */
  #accepting = true
  #ended = false
  #cancelled = false
  #pending = ''
  /** The one event waiting for the flush, kept apart until a second one comes (then it joins `#pending`). */
  #single: string | undefined
  #singleId: number | undefined
  /** Encoded chunks the connection has not taken, oldest first; the first is taken from `#offset` on. */
  #queue: Uint8Array[] = []
  #offset = 0
  /** Bytes in `#queue` not yet taken. */
  #queued = 0
  /** The position of `#queue[0]` among every chunk ever queued. */
  #first = 0
  /**
   * The positions of the chunks behind the head that may yet be the largest of those behind it, oldest first,
   * each larger than the next: the first is the largest (a chunk leaves once a later one is as large; the head
   * leaves as it becomes the head). Keeps the backlog's largest chunk known without a scan per event.
   */
  #largest: number[] = []
  /** The whole size of the chunks in `#queue`, counted against the server's budget until each is taken whole. */
  #reserved = 0
  /** The connection asked for more and nothing was queued: the next chunk goes straight to it. */
  #wanted = false
  /** A piece went to the connection, which has not asked for more since (it has not sent it yet). */
  #handedOff = false
  reads = 0
  #onCancel: (() => void) | undefined
  #onEnd: (() => void) | undefined
  #heartbeat: ReturnType<typeof setInterval> | undefined
  #quiet = true
  readonly #flush = (): void => {
    const single = this.#single
    const text = this.#pending
    this.#single = undefined
    this.#pending = ''
    if (this.#ended) return
    this.#write(single === undefined ? encoder.encode(text) : encodeEvent(single, this.#singleId))
    if (!this.#accepting) this.#endWhenTaken()
  }

  constructor(options: SseOptions) {
    this.#onEnd = options.onEnd
    this.#outgoing = options.outgoing
    const stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller
        },
        pull: () => this.#pull(),
        cancel: () => {
          this.#stop()
          this.#cancelled = true
          this.#onCancel?.()
        },
      },
      // Nothing waits in the stream's own queue: pieces are handed over only when the connection asks.
      { highWaterMark: 0 },
    )
    this.response = new FastResponse(stream, { headers: SSE_HEADERS })
    this.#outgoing.watch(this)
    if (options.heartbeatMs) {
      this.#heartbeat = setInterval(() => {
        if (this.#quiet && this.#accepting) this.#write(HEARTBEAT)
        this.#quiet = true
      }, options.heartbeatMs)
      this.#heartbeat.unref()
    }
  }

  /** Events wait for the flush (a microtask away). */
  get #flushing(): boolean {
    return this.#single !== undefined || this.#pending !== ''
  }

  get owing(): boolean {
    return this.#queued > 0 || this.#handedOff
  }

  /** Called once if the client disconnects (or is dropped) before `close()`; at once if it already has. */
  onCancel(callback: () => void): void {
    this.#onCancel = callback
    if (this.#cancelled) callback()
  }

  /** One event; `id` (the task's event number) lets a client that loses the stream resume after it. */
  send(json: string, id?: number): void {
    if (!this.#accepting) return
    this.#quiet = false
    if (this.#single !== undefined) {
      this.#pending = frame(this.#single, this.#singleId)
      this.#single = undefined
    }
    if (this.#pending !== '') {
      this.#pending += frame(json, id)
      return
    }
    queueMicrotask(this.#flush)
    this.#single = json
    this.#singleId = id
  }

  /** Ends the stream after the events already sent, once the client has taken them. */
  close(): void {
    if (!this.#accepting) return
    this.#accepting = false
    if (!this.#flushing) this.#endWhenTaken()
  }

  /** Drops the client now: the connection closes, its unread bytes are freed. */
  cut(reason: string): void {
    if (this.#ended) return
    this.#stop()
    this.#cancelled = true
    // An errored body makes the response writer destroy the connection, which frees what Node holds for it.
    this.#controller.error(new Error(`SSE stream cut: ${reason}`))
    this.#onCancel?.()
  }

  #write(chunk: Uint8Array): void {
    if (this.#wanted && chunk.length <= PIECE_BYTES) {
      // A client that keeps up: no copy, no count.
      this.#wanted = false
      this.#handedOff = true
      this.#controller.enqueue(chunk)
      return
    }
    const { maxStreamBacklogBytes } = this.#outgoing.limits
    if (this.#queued > 0 && this.#backlogWith(chunk.length) > maxStreamBacklogBytes) {
      this.#outgoing.backlogCuts++
      this.#drop(`its unread events would pass maxStreamBacklogBytes (${maxStreamBacklogBytes} bytes)`)
      return
    }
    if (!this.#outgoing.reserve(chunk.length)) {
      this.#drop(
        `bytes waiting for slow clients would pass maxPendingResponseBytes (${this.#outgoing.limits.maxPendingResponseBytes} bytes)`,
      )
      return
    }
    this.#queue.push(chunk)
    if (this.#queue.length > 1) {
      const largest = this.#largest
      while (largest.length > 0 && this.#sizeAt(largest.at(-1)!) <= chunk.length) largest.pop()
      largest.push(this.#first + this.#queue.length - 1)
    }
    this.#queued += chunk.length
    this.#reserved += chunk.length
    if (this.#wanted) this.#handOff()
  }

  /**
   * The backlog (see the class) once a chunk of `bytes` joins the queue: everything waiting, less the largest
   * of the head's rest, the largest chunk behind it and the new chunk. The queue is not empty.
   */
  #backlogWith(bytes: number): number {
    const head = this.#queue[0]!.length - this.#offset
    const behind = this.#largest.length > 0 ? this.#sizeAt(this.#largest[0]!) : 0
    return this.#queued + bytes - Math.max(head, behind, bytes)
  }

  #sizeAt(position: number): number {
    return this.#queue[position - this.#first]!.length
  }

  #pull(): void {
    this.reads++
    this.#handedOff = false
    if (this.#queued > 0) {
      this.#handOff()
      return
    }
    this.#wanted = true
    if (!this.#accepting) this.#endWhenTaken()
  }

  /** The next piece of the queue to the connection, which asked for it. */
  #handOff(): void {
    const head = this.#queue[0]!
    // A piece of a larger chunk is a copy: a piece Node holds for a client that stopped reading must not keep
    // the whole chunk alive once it has left the queue (and the count).
    const piece =
      this.#offset === 0 && head.length <= PIECE_BYTES ? head : head.slice(this.#offset, this.#offset + PIECE_BYTES)
    this.#offset += piece.length
    this.#queued -= piece.length
    if (this.#offset === head.length) {
      this.#queue.shift()
      this.#first++
      // The next chunk is the head now: it no longer counts among those behind it.
      if (this.#largest[0] === this.#first) this.#largest.shift()
      this.#offset = 0
      this.#reserved -= head.length
      this.#outgoing.release(head.length)
    }
    this.#wanted = false
    this.#handedOff = true
    this.#controller.enqueue(piece)
    if (!this.#accepting) this.#endWhenTaken()
  }

  /**
   * Ends the stream once the connection has sent everything: until it asks for more after the last piece, that
   * piece may sit in Node's buffer for a client that does not read, and the write timeout still watches it.
   */
  #endWhenTaken(): void {
    if (this.#ended || this.#queued > 0 || this.#flushing || this.#handedOff) return
    this.#stop()
    this.#controller.close()
  }

  #drop(why: string): void {
    this.#outgoing.logger.info(`SSE client dropped: ${why}; it can resume with Last-Event-ID`)
    this.cut(why)
  }

  #stop(): void {
    if (this.#ended) return
    this.#ended = true
    this.#accepting = false
    clearInterval(this.#heartbeat)
    this.#outgoing.release(this.#reserved)
    this.#reserved = 0
    this.#queued = 0
    this.#queue = []
    this.#largest = []
    this.#outgoing.unwatch(this)
    const onEnd = this.#onEnd
    this.#onEnd = undefined
    onEnd?.()
  }
}
