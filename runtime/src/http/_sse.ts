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
 */
export class SseStream {
  readonly response: Response
  #controller!: ReadableStreamDefaultController<Uint8Array>
  #open = true
  #onCancel: (() => void) | undefined

  constructor() {
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller
      },
      cancel: () => {
        this.#open = false
        this.#onCancel?.()
      },
    })
    this.response = new FastResponse(stream, { headers: SSE_HEADERS })
  }

  /** Called once if the client disconnects before `close()`. */
  onCancel(callback: () => void): void {
    this.#onCancel = callback
  }

  send(json: string): void {
    if (this.#open) this.#controller.enqueue(encoder.encode(`data: ${json}\n\n`))
  }

  close(): void {
    if (!this.#open) return
    this.#open = false
    this.#controller.close()
  }
}
