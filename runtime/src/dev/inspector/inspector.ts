import type { IncomingMessage, ServerResponse } from 'node:http'
import { ServerUnavailableError } from '../../errors.js'
import type { AuthCheck } from '../../http/_auth.js'
import type { WebOriginGuard } from '../../http/_web-origin.js'
import type { TaskStore } from '../../stores/task-store.js'
import type { MaybePromise, Task } from '../../types.js'
import { inspectorAssets } from './_assets.js'
import { InspectorChannel } from './_channel.js'
import { EventClock } from './_event-clock.js'
import { EventTraces, type TraceSource } from './_event-traces.js'
import { type FeedAccess, feedAccess } from './_feed-access.js'
import { PushReceiver } from './_push-receiver.js'
import { reportingStates, taskLine } from './_task-feed.js'
import type { Finding, LoadFailure, LoadState, PushDelivery, Tracing } from './wire.js'

/** Where the inspector lives: a path no agent route can take (the app serves only the card and JSON-RPC). */
const INSPECTOR_PATH = '/__a2a/'
const PUSH_PATH = `${INSPECTOR_PATH}push`
/** A task's event times, by its id (percent-encoded). */
const TIMES_PATH = /^\/__a2a\/api\/tasks\/([^/]+)\/times$/
/** A task's line, by its id (percent-encoded): the traces of its events as they are now. */
const LINE_PATH = /^\/__a2a\/api\/tasks\/([^/]+)$/
/** The task list's first page; the page adds tasks as they come. */
const MAX_LISTED_TASKS = 200
/** A reload during a page's credential check makes it check again, this many times at most. */
const CHECK_ATTEMPTS = 3

const isLoopback = (address: string | undefined): boolean =>
  address !== undefined && (address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.'))

const LOCATED = /^(?<file>[^\s:][^:]*):(?<line>\d+):(?<column>\d+) (?<cause>.*)$/s

export function splitFailure(text: string): LoadFailure {
  const match = LOCATED.exec(text)?.groups
  if (!match) return { text, cause: text }
  return { text, file: match.file!, line: Number(match.line), column: Number(match.column), cause: match.cause! }
}

/**
 * The dev inspector behind `/__a2a/`: the page and its files, the live channel (reloads, task states, push
 * deliveries), and the push receiver. Every request is checked against the dev server's Host and Origin rules
 * first: a web page on another site may not read it or post to it. When the agent's card declares authentication,
 * the task feed (the list, the live task lines, the event times) answers a page the tasks of the credential it sends
 * (`Authorization` or `X-API-Key`, as the agent's own methods take it), checked as the agent checks JSON-RPC.
 */
export class Inspector {
  readonly #channel = new InspectorChannel()
  readonly #push = new PushReceiver()
  readonly #clock: EventClock
  readonly #traces: EventTraces
  #tracing: Tracing | undefined
  /** One agent of several: its name, and every agent's for the page's switch. */
  #agents: { name: string; names: () => string[] } | undefined
  #load: LoadState | undefined
  #url = ''
  #store: TaskStore | undefined
  #check: () => AuthCheck | undefined = () => undefined

  /**
   * `traceUrl` reads `A2A_TRACE_URL` again at each load (a saved .env may change it). The inspectors of several
   * agents share one store, so they share what it notes of each task (`feed`, see `InspectorFeed`).
   */
  constructor(
    readonly webOrigin: WebOriginGuard,
    readonly traceUrl: () => string | undefined = () => undefined,
    feed: { clock: EventClock; traces: EventTraces } = { clock: new EventClock(), traces: new EventTraces() },
  ) {
    this.#clock = feed.clock
    this.#traces = feed.traces
  }

  /** The credential check of the agent served now (none until one loads, or when its card declares none). */
  checkWith(check: () => AuthCheck | undefined): void {
    this.#check = check
  }

  /**
   * The app's instrumentation, once the app is made with one (`A2A_TELEMETRY`): from then on the store notes the
   * trace each task event is made in, and the pages show it. Without one nothing is asked or shown.
   */
  traceWith(source: TraceSource | undefined): void {
    this.#traces.source = source
  }

  /** The agent's address (the server's, or `http://host/planner/` for one of several): the page is below it. */
  setUrl(url: string): void {
    this.#url = url
  }

  get pageUrl(): string {
    return new URL(INSPECTOR_PATH.slice(1), this.#url || 'http://localhost/').href
  }

  /** The store, reporting tasks' states to the pages (nothing is built while no page is open). */
  observe(store: TaskStore): TaskStore {
    this.#store = store
    return reportingStates(store, (task) => this.taskChanged(task), this.#clock, this.#traces)
  }

  /**
   * The inspector of one agent of several (`InspectorFeed` reports the shared store's tasks): `view` is the agent's
   * own view of that store (a caller's owner read as that agent's), whose tasks alone its pages list and hear of.
   */
  showAgent(name: string, view: TaskStore, names: () => string[]): void {
    this.#store = view
    this.#agents = { name, names }
  }

  /** Agents came or went: the pages' switch lists them again. */
  agentsChanged(): void {
    if (this.#agents) this.#channel.send('agents', this.#agents.names())
  }

  /** A task was made or changed its state: its line goes to the pages that may see it. */
  taskChanged(task: Task): void {
    const store = this.#store
    if (!this.#channel.pages || !store) return
    const send = () =>
      this.#channel.sendAboutTask('task', taskLine(task, this.#traces), this.#check(), (owner) =>
        owns(store, task.id, owner),
      )
    // One agent of several, checking no credentials: its pages see every task of its own, none of the others'.
    if (!this.#agents || this.#check()) {
      send()
      return
    }
    const mine = store.get(task.id)
    if (mine instanceof Promise)
      mine.then(
        (found) => found && send(),
        () => {},
      )
    else if (mine) send()
  }

  loaded(state: LoadState): void {
    this.#load = state
    this.#channel.send('load', state)
    const tracing = this.#tracingNow()
    if (JSON.stringify(tracing) !== JSON.stringify(this.#tracing)) this.#channel.send('tracing', tracing ?? null)
    this.#tracing = tracing
    // A load that changed the check (a reload makes a new one) has the pages connect again and be checked by it.
    this.#channel.recheck(this.#check())
  }

  cardChecked(findings: Finding[]): void {
    if (!this.#load) return
    this.#load = { ...this.#load, findings }
    this.#channel.send('load', this.#load)
  }

  close(): void {
    this.#channel.close()
  }

  /** Answers a request under `/__a2a` (the caller routes by `isInspectorPath`). */
  handle(req: IncomingMessage, res: ServerResponse): void {
    const refused = isLoopback(req.socket.remoteAddress)
      ? this.webOrigin.refusal(req.headers.host ?? null, req.headers.origin ?? null)
      : 'the inspector answers this machine only (it shows push deliveries, their credentials included, and the code' +
        "'s errors): open it on the machine that runs a2a dev, or through an SSH tunnel"
    if (refused) {
      sendJson(res, 403, { error: refused }, { connection: 'close' })
      return
    }
    const path = (req.url ?? '/').split('?')[0]!
    const method = req.method ?? 'GET'
    if (path === PUSH_PATH || path.startsWith(`${PUSH_PATH}/`)) {
      if (method !== 'POST') {
        sendJson(res, 405, { error: 'the push receiver takes POST' }, { allow: 'POST' })
        return
      }
      return void this.#receive(req, res, path)
    }
    if (method !== 'GET' && method !== 'HEAD' && !(method === 'DELETE' && path === `${INSPECTOR_PATH}api/push`)) {
      sendJson(res, 405, { error: `${method} is not served here` }, { allow: 'GET' })
      return
    }
    if (path === INSPECTOR_PATH.slice(0, -1)) {
      redirect(res, INSPECTOR_PATH)
      return
    }
    if (path === `${INSPECTOR_PATH}events`) {
      if (method === 'HEAD') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
        res.end()
      } else void this.#openChannel(req, res)
      return
    }
    if (path === `${INSPECTOR_PATH}api/tasks`) {
      void this.#withAccess(req, res, (access) => this.#listTasks(res, access))
      return
    }
    const lined = LINE_PATH.exec(path)
    if (lined) {
      void this.#withAccess(req, res, (access) => this.#sendLine(res, lined[1]!, access))
      return
    }
    const timed = TIMES_PATH.exec(path)
    if (timed) {
      void this.#withAccess(req, res, (access) => this.#sendTimes(res, timed[1]!, access))
      return
    }
    if (path === `${INSPECTOR_PATH}api/push`) {
      void this.#deliveries(req, res, method === 'DELETE')
      return
    }
    const asset = inspectorAssets().get(path.slice(INSPECTOR_PATH.length))
    if (!asset) {
      const built = inspectorAssets().size > 0
      sendJson(res, 404, {
        error: built ? `${path} is not part of the inspector` : 'the inspector was not built with this package',
      })
      return
    }
    res.writeHead(200, {
      'content-type': asset.type,
      'content-length': asset.body.length,
      'cache-control': asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      'x-content-type-options': 'nosniff',
      // The page runs only its own code: no inline script, no other origin.
      ...(asset.type.startsWith('text/html') && {
        'content-security-policy':
          "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      }),
    })
    res.end(method === 'HEAD' ? undefined : asset.body)
  }

  /** What a page needs first; the deliveries it fetches itself (up to 2 MiB: not for a stream's first write). */
  #hello() {
    return {
      load: this.#load,
      pushUrl: new URL(PUSH_PATH.slice(1), this.#url || 'http://localhost/').href,
      ...(this.#tracing && { tracing: this.#tracing }),
      ...(this.#agents && { agent: this.#agents.name, agents: this.#agents.names() }),
    }
  }

  /** Traces are shown when the app traces; linked when a viewer's address is set. */
  #tracingNow(): Tracing | undefined {
    if (!this.#traces.source) return undefined
    const url = this.traceUrl()
    return url === undefined ? {} : { url }
  }

  /**
   * The live channel, its task lines for the page's credential. A page without one (or with a wrong one) still
   * hears of loads and push deliveries, but of no task. Its access is decided under the check in force when it
   * connects: should a reload change the check meanwhile, it is decided again.
   */
  async #openChannel(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let access: FeedAccess
    for (let attempt = 1; ; attempt++) {
      const check = this.#check()
      try {
        access = await feedAccess(check, req.headers)
      } catch {
        if (!res.headersSent) sendJson(res, 500, { error: 'the credential check failed' })
        return
      }
      if (this.#check() === check || attempt === CHECK_ATTEMPTS) break
    }
    // A page gone during the check would never hear "close" again: it is not added.
    if (req.socket.destroyed) return
    this.#channel.open(res, this.#hello(), access)
  }

  /**
   * Answers `reply` with the page's access to the task feed, or refuses: a missing or wrong credential gets the
   * agent's own reason (401; 403 for a missing scope, 503 while an issuer is out), never a task.
   */
  async #withAccess(
    req: IncomingMessage,
    res: ServerResponse,
    reply: (access: FeedAccess) => Promise<void>,
  ): Promise<void> {
    let access: FeedAccess
    try {
      access = await feedAccess(this.#check(), req.headers)
    } catch {
      sendJson(res, 500, { error: 'the credential check failed' })
      return
    }
    if (access.kind === 'refused') sendJson(res, access.status, { error: access.reason })
    else await reply(access)
  }

  /**
   * The push deliveries the page may see: with authentication declared, those about the caller's tasks (a delivery
   * carries a task's content) and those about no task; `forget` forgets them (and only them) first.
   */
  async #deliveries(req: IncomingMessage, res: ServerResponse, forget: boolean): Promise<void> {
    let visible: Set<PushDelivery>
    try {
      const access = await feedAccess(this.#check(), req.headers)
      const all = this.#push.deliveries
      const shown = await Promise.all(
        all.map((delivery) =>
          access.kind === 'all' || delivery.taskId === undefined
            ? true
            : access.kind === 'own' && this.#owns(delivery.taskId, access.owner),
        ),
      )
      visible = new Set(all.filter((_, i) => shown[i]))
    } catch (error) {
      sendJson(res, 500, { error: `the deliveries could not be sorted by caller: ${(error as Error).message}` })
      return
    }
    if (forget) this.#push.clear((delivery) => visible.has(delivery))
    sendJson(res, 200, { deliveries: forget ? [] : [...visible] })
  }

  #owns(taskId: string, owner: string): MaybePromise<boolean> {
    return this.#store ? owns(this.#store, taskId, owner) : false
  }

  /**
   * The newest tasks as lines, from the dev store itself (it answers while the agent does not load): every task, or
   * the caller's only.
   */
  async #listTasks(res: ServerResponse, access: FeedAccess): Promise<void> {
    const owner = access.kind === 'own' ? { owner: access.owner } : {}
    try {
      const page = this.#store ? await this.#store.list({ limit: MAX_LISTED_TASKS, ...owner }) : { tasks: [], total: 0 }
      sendJson(res, 200, { tasks: page.tasks.map((task) => taskLine(task, this.#traces)), total: page.total })
    } catch (error) {
      storeFailed(res, error)
    }
  }

  /**
   * The task's line as it is now, which a page asks for an answer without an event number (a task read, a send's
   * answer): the trace of the task's latest event then is the answer's. 404 for another caller's task, as for none.
   */
  async #sendLine(res: ServerResponse, encodedId: string, access: FeedAccess): Promise<void> {
    const taskId = decodedId(res, encodedId)
    if (taskId === undefined) return
    let task: Awaited<ReturnType<TaskStore['get']>>
    try {
      task = this.#store && (await this.#store.get(taskId, access.kind === 'own' ? access.owner : undefined))
    } catch (error) {
      storeFailed(res, error)
      return
    }
    if (task) sendJson(res, 200, taskLine(task, this.#traces))
    else sendJson(res, 404, { error: `no task ${JSON.stringify(taskId.slice(0, 80))}` })
  }

  /**
   * When each event of a task came, for a replay of its timeline; 404 when the dev server has no times for it, and
   * for another caller's task, exactly as for one it never saw.
   */
  async #sendTimes(res: ServerResponse, encodedId: string, access: FeedAccess): Promise<void> {
    const taskId = decodedId(res, encodedId)
    if (taskId === undefined) return
    let visible = true
    try {
      // The owner is asked first: nothing of another caller's task is read.
      if (access.kind === 'own') visible = await this.#owns(taskId, access.owner)
    } catch (error) {
      storeFailed(res, error)
      return
    }
    const times = visible ? this.#clock.timesOf(taskId) : undefined
    if (times) sendJson(res, 200, times)
    else
      sendJson(res, 404, {
        error: `no event times for task ${JSON.stringify(taskId.slice(0, 80))}: the dev server did not see it, or has forgotten`,
      })
  }

  async #receive(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    try {
      const delivery = await this.#push.receive(req, path)
      if (!delivery) {
        sendJson(res, 413, { error: 'a push delivery is limited to 256 KiB' }, { connection: 'close' })
        // The page says so: a notification that never shows would otherwise look like one never sent.
        this.#channel.send('push-refused', { at: new Date().toISOString(), path, reason: 'over 256 KiB' })
        return
      }
      const { taskId } = delivery
      if (taskId === undefined) this.#channel.send('push', delivery)
      else this.#channel.sendAboutTask('push', delivery, this.#check(), (owner) => this.#owns(taskId, owner))
      sendJson(res, 200, { received: delivery.id })
    } catch {
      if (!res.headersSent) sendJson(res, 400, { error: 'the delivery could not be read' }, { connection: 'close' })
    }
  }
}

/** `/__a2a` and everything under it (no agent route starts so: the app serves only the card and JSON-RPC). */
export const isInspectorPath = (url: string | undefined): boolean =>
  url?.startsWith('/__a2a') === true && (url.length === 6 || url[6] === '/' || url[6] === '?')

/** Whether the store holds the task as `owner`'s (asked the way the agent asks it: another's answers as none). */
function owns(store: TaskStore, taskId: string, owner: string): MaybePromise<boolean> {
  const task = store.get(taskId, owner)
  return task instanceof Promise ? task.then((found) => found !== undefined) : task !== undefined
}

/** The task id of a path, or undefined once the request is answered 400. */
function decodedId(res: ServerResponse, encodedId: string): string | undefined {
  try {
    return decodeURIComponent(encodedId)
  } catch {
    sendJson(res, 400, { error: 'the task id in the path is not valid percent-encoding' })
    return undefined
  }
}

/**
 * A store that failed: 503 (or 429) with Retry-After when it is out of reach for now (a database restarting, a pool
 * with no connection free), as the agent's own requests answer; 500 for anything else. The message says what.
 */
function storeFailed(res: ServerResponse, error: unknown): void {
  const message = { error: `the task store failed: ${(error as Error).message}` }
  if (error instanceof ServerUnavailableError) sendJson(res, error.httpStatus, message, { 'retry-after': '1' })
  else sendJson(res, 500, message)
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers })
  res.end(text)
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(308, { location })
  res.end()
}
