import type { ServerResponse } from 'node:http'

/** A page that stops reading is cut once this much waits for it; the page reconnects and starts afresh. */
const MAX_BACKLOG_BYTES = 1024 * 1024
/** Keeps idle connections open through proxies and tells a closed tab apart from a quiet one. */
const HEARTBEAT_MS = 15_000

/**
 * The dev server's live channel to its inspector pages (Server-Sent Events): reloads, load failures, task
 * states, push deliveries. Each page gets what happens from its connection on; `hello` (written on connect)
 * says what it missed. Bounded per page in bytes: a page that does not read is cut, never buffered for.
 */
export class InspectorChannel {
  readonly #pages = new Set<ServerResponse>()
  #heartbeat: ReturnType<typeof setInterval> | undefined

  get pages(): number {
    return this.#pages.size
  }

  open(res: ServerResponse, hello: unknown): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
    this.#pages.add(res)
    res.once('close', () => {
      this.#pages.delete(res)
      if (!this.#pages.size) this.#stopHeartbeat()
    })
    this.#write(res, frame('hello', hello))
    this.#heartbeat ??= setInterval(() => this.#broadcastRaw(': heartbeat\n\n'), HEARTBEAT_MS).unref()
  }

  /** Sends one event to every page; serialised once, whatever the number of pages. */
  send(event: string, data: unknown): void {
    if (this.#pages.size) this.#broadcastRaw(frame(event, data))
  }

  /** Ends every page's stream (the server is stopping). */
  close(): void {
    for (const res of this.#pages) res.end()
    this.#pages.clear()
    this.#stopHeartbeat()
  }

  #broadcastRaw(text: string): void {
    for (const res of this.#pages) this.#write(res, text)
  }

  #write(res: ServerResponse, text: string): void {
    if (res.writableLength > MAX_BACKLOG_BYTES) {
      this.#pages.delete(res)
      res.destroy()
      return
    }
    res.write(text)
  }

  #stopHeartbeat(): void {
    clearInterval(this.#heartbeat)
    this.#heartbeat = undefined
  }
}

const frame = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
