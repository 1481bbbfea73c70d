import type { ServerResponse } from 'node:http'
import type { AuthCheck } from '../../http/_auth.js'
import type { MaybePromise } from '../../types.js'
import type { FeedAccess } from './_feed-access.js'

/** A page that stops reading is cut once this much waits for it; the page reconnects and starts afresh. */
const MAX_BACKLOG_BYTES = 1024 * 1024
/** Keeps idle connections open through proxies and tells a closed tab apart from a quiet one. */
const HEARTBEAT_MS = 15_000

/**
 * The dev server's live channel to its inspector pages (Server-Sent Events): reloads, load failures, task
 * states, push deliveries. Each page gets what happens from its connection on; `hello` (written on connect)
 * says what it missed. Bounded per page in bytes: a page that does not read is cut, never buffered for.
 * What is about a task goes only to the pages allowed to see it (`FeedAccess`, decided when the page connected).
 */
export class InspectorChannel {
  readonly #pages = new Map<ServerResponse, FeedAccess>()
  #heartbeat: ReturnType<typeof setInterval> | undefined

  get pages(): number {
    return this.#pages.size
  }

  open(res: ServerResponse, hello: unknown, access: FeedAccess): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
    this.#pages.set(res, access)
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

  /**
   * Sends an event about a task (its line, a push delivery of it) to the pages that may see the task under `check`,
   * the credential check in force: every page when there is none, otherwise the pages whose caller `owns` the task
   * (asked once per caller). A page whose access was decided under another check, or whose token has expired,
   * hears nothing of it.
   */
  sendAboutTask(
    event: string,
    data: unknown,
    check: AuthCheck | undefined,
    owns: (owner: string) => MaybePromise<boolean>,
  ): void {
    if (!this.#pages.size) return
    const text = frame(event, data)
    const now = Date.now()
    const answers = new Map<string, MaybePromise<boolean>>()
    for (const [res, access] of this.#pages) {
      if (access.kind === 'all') {
        if (!check) this.#write(res, text)
        continue
      }
      if (access.kind !== 'own' || access.check !== check) continue
      if (access.expiresAt !== undefined && now >= access.expiresAt) {
        this.#end(res)
        continue
      }
      let owned = answers.get(access.owner)
      if (owned === undefined) {
        owned = owns(access.owner)
        answers.set(access.owner, owned)
      }
      if (owned === true) this.#write(res, text)
      else if (owned instanceof Promise)
        owned.then(
          (yes) => yes && this.#pages.has(res) && this.#write(res, text),
          () => {}, // a store that cannot answer shows nothing: the page's list is fetched again on reconnect
        )
    }
  }

  /**
   * Ends the streams of the pages whose access was decided under another check than `check` (a reload changed the
   * card's authentication or its credentials): they reconnect, and their credential is checked again.
   */
  recheck(check: AuthCheck | undefined): void {
    for (const [res, access] of this.#pages)
      if ((access.kind === 'all' ? undefined : access.check) !== check) this.#end(res)
  }

  /** Ends every page's stream (the server is stopping). */
  close(): void {
    for (const res of this.#pages.keys()) res.end()
    this.#pages.clear()
    this.#stopHeartbeat()
  }

  #broadcastRaw(text: string): void {
    for (const res of this.#pages.keys()) this.#write(res, text)
  }

  #write(res: ServerResponse, text: string): void {
    if (res.writableLength > MAX_BACKLOG_BYTES) {
      this.#pages.delete(res)
      res.destroy()
      return
    }
    res.write(text)
  }

  #end(res: ServerResponse): void {
    this.#pages.delete(res)
    res.end()
  }

  #stopHeartbeat(): void {
    clearInterval(this.#heartbeat)
    this.#heartbeat = undefined
  }
}

const frame = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
