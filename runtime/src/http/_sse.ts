import { FastResponse } from 'srvx/node'

/** Headers the platform spec requires on every stream (as pairs, which the response writer takes as they are). */
export const SSE_HEADERS: Array<[string, string]> = [
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
 */
export interface SseOptions {
  /** Writes a comment (`: keep-alive`) after this many ms without an event, so proxies keep the stream. */
  heartbeatMs?: number
  /** Called once when the stream ends (closed, or the client went away). */
  onEnd?: () => void
}

const HEARTBEAT = encoder.encode(': keep-alive\n\n')

export class SseStream {
  readonly response: Response
  #controller!: ReadableStreamDefaultController<Uint8Array>
  #open = true
  #closeAfterFlush = false
  #pending = ''
  #onCancel: (() => void) | undefined
  #onEnd: (() => void) | undefined
  #heartbeat: ReturnType<typeof setInterval> | undefined
  #quiet = true
  readonly #flush = (): void => {
    const text = this.#pending
    this.#pending = ''
    if (!this.#open) return
    this.#controller.enqueue(encoder.encode(text))
    if (this.#closeAfterFlush) this.#end()
  }

  constructor(options: SseOptions = {}) {
    this.#onEnd = options.onEnd
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller
      },
      cancel: () => {
        this.#stop()
        this.#onCancel?.()
      },
    })
    this.response = new FastResponse(stream, { headers: SSE_HEADERS })
    if (options.heartbeatMs) {
      this.#heartbeat = setInterval(() => {
        if (this.#quiet && this.#open) this.#controller.enqueue(HEARTBEAT)
        this.#quiet = true
      }, options.heartbeatMs)
      this.#heartbeat.unref()
    }
  }

  /** Called once if the client disconnects before `close()`. */
  onCancel(callback: () => void): void {
    this.#onCancel = callback
  }

  /** One event; `id` (the task's event number) lets a client that loses the stream resume after it. */
  send(json: string, id?: number): void {
    if (!this.#open || this.#closeAfterFlush) return
    this.#quiet = false
    if (this.#pending === '') queueMicrotask(this.#flush)
    this.#pending += id === undefined ? `data: ${json}\n\n` : `id: ${id}\ndata: ${json}\n\n`
  }

  /** Ends the stream after the events already sent. */
  close(): void {
    if (!this.#open || this.#closeAfterFlush) return
    if (this.#pending !== '') {
      this.#closeAfterFlush = true
      return
    }
    this.#end()
  }

  #end(): void {
    this.#stop()
    this.#controller.close()
  }

  #stop(): void {
    this.#open = false
    clearInterval(this.#heartbeat)
    const onEnd = this.#onEnd
    this.#onEnd = undefined
    onEnd?.()
  }
}
