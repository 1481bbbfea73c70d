import { failWithReason } from '../../core/_failed.js'
import { newId } from '../../core/_ids.js'
import { isSettled, isTerminal } from '../../core/_lifecycle.js'
import { ConfigurationError, InvalidParamsError, ServerUnavailableError, TaskNotFoundError } from '../../errors.js'
import type { PushConfig, PushConfigStore } from '../../push/push-config.js'
import { processEnv } from '../../settings.js'
import { storeCall } from '../../telemetry/_store-calls.js'
import type { Task, TaskEvent } from '../../types.js'
import {
  ALREADY_WRITTEN,
  APPEND_RETRIES,
  appendRefusal,
  LOST_REASON,
  MAX_WRITTEN,
  NOT_NEXT,
  WRITTEN,
} from '../_append-outcomes.js'
import { readByteBudget } from '../_byte-budget.js'
import { decodeCursor, encodeCursor } from '../_paging.js'
import { openConfig, readPushConfigKey, sealConfig } from '../_sealed-configs.js'
import type { SharedStoreOptions } from '../_shared-store-options.js'
import { DEFAULT_EVENT_LOG_BYTES, DEFAULT_MAX_TASKS, DEFAULT_TTL_MS } from '../memory.js'
import type { ClusterLink, TaskPage, TaskQuery, TaskStore } from '../task-store.js'
import { CancelForwarding } from './_cancels.js'
import { CreateBatches, type NewTaskRow } from './_creates.js'
import { Followers, type LogRead, notification } from './_follow.js'
import { Leases, leaseTimings } from './_leases.js'
import { type ListView, type PageRow, pageStatement, viewOf } from './_list.js'
import { eventsChannel, instanceChannel, PgListener } from './_listener.js'
import { joinedJson } from './_parameters.js'
import { endWithin, loadPg, noop, PgPool } from './_pg.js'
import { checkCurrent, lockKey, migrate, quoteSchema } from './_schema.js'
import { folded, headOf, parsedMessages, withoutHistory } from './_task-json.js'

/** Which PostgreSQL the store uses, under which schema, and what it keeps of the tasks there. */
export interface PostgresStoreOptions extends SharedStoreOptions {
  /**
   * `postgres://[user:password@]host:port/database` (or `postgresql://`); libpq's query options (`sslmode`,
   * `application_name`…) are passed on to the client.
   */
  url: string
  /**
   * The schema that holds the store's tables, so several agents can share one database (letters, digits and `_`).
   * @default 'a2a'
   */
  schema?: string
  /**
   * The longest a running task whose instance died (killed, crashed, cut off from the database) waits before another
   * instance fails it, in ms. The instance that runs a task holds a lease on it for 3/4 of this past each renewal,
   * renews every quarter, and every instance looks for tasks whose lease ran out every fifth. An instance that could
   * not renew its lease in time stops running the task.
   * @default 10_000
   */
  leaseMs?: number
  /**
   * How long a request waits to connect, for a free connection of the pool, for a statement (the server's
   * `statement_timeout`; past it the request gets a 503 saying so), and for another instance to answer a cancel, in ms.
   * @default 5_000
   */
  timeoutMs?: number
  /**
   * Most connections the store opens for its statements (one more listens for other instances' events).
   * @default 10
   */
  poolSize?: number
  /**
   * Applies the schema's pending migrations at start (safe with several instances starting at once). `false`: the
   * schema must be current already (`a2a store migrate`), else the store refuses to start.
   * @default true
   */
  migrate?: boolean
  /**
   * Keeps the events of a task that ends in the statement that creates it (an agent that answers at once). By default
   * it keeps none (they were a fifth of what such a send costs PostgreSQL): its row holds what they did, and a replay
   * from before its last event (`Last-Event-ID`, the dev inspector's timeline) is told to read the task instead.
   * `a2a dev` sets it, so that its inspector replays every task it made.
   * @default false
   */
  keepInstantLogs?: boolean
}

const DEFAULT_LEASE_MS = 10_000
const DEFAULT_TIMEOUT_MS = 5000
const DEFAULT_POOL_SIZE = 10
const TRIM_EVERY = 64

/** Most events, and about the most bytes, one statement writes (see `#batched`). */
const BATCH_EVENTS = 256
const BATCH_BYTES = 4 * 1024 * 1024
/** Tasks removed per statement of a sweep. */
const SWEEP_BATCH = 500
/** Running tasks looked at per lost-task check. */
const LOST_BATCH = 100

/**
 * Tasks in PostgreSQL, shared by any number of instances of one agent: a row per task (its JSON without history as
 * of a folded event, its head for listings, its lease), its history one row per message, its events one row each
 * (so any instance can replay them, in order, to a stream that resumes; a task that ends in the statement that
 * creates it keeps none: nobody followed it yet), live events by LISTEN/NOTIFY, and a lease
 * per running task. Any instance answers `tasks/get`, follows a task that runs on another, and forwards a cancel to
 * the instance that runs the task. Settled tasks go after `ttlMs`, the oldest past `maxTasks`.
 *
 * Each call is one statement (the writes are functions of the schema): a create one round trip, and a task's events
 * handed while its previous write is on its way one round trip together (an answer at once: two commits). Events are
 * notified (NOTIFY) only while some instance follows their task. While PostgreSQL is unreachable, restarting, or out
 * of connections, requests fail at once with a JSON-RPC error (HTTP 503) that says so; a statement that runs past
 * `timeoutMs` fails the same way.
 */
export class PostgresTaskStore implements TaskStore {
  readonly keepsOwners = true
  readonly cluster: ClusterLink
  readonly instanceId = newId()
  readonly schema: string
  readonly maxTasks: number
  readonly ttlMs: number
  readonly leaseMs: number
  readonly eventLogBytes: number
  /** The schema, quoted: the one form statements use. */
  readonly #s: string
  readonly #timeoutMs: number
  readonly #pool: PgPool
  readonly #listener: PgListener
  readonly #followers: Followers
  readonly #leases: Leases
  readonly #logger: PostgresStoreOptions['logger']
  readonly #pushConfigKey: Uint8Array | undefined
  readonly #keepInstantLogs: boolean
  readonly #timers: Array<ReturnType<typeof setInterval>> = []
  readonly #statements: Statements
  /**
   * What this instance has written of each task it runs: how much of its history, and how large its json is
   * against the events added since, so an event is written alone and the json only when worth folding in.
   */
  readonly #written = new Map<string, Written>()
  /**
   * The number of the last event handed to the store with each task the runtime holds (the run's live task,
   * which moves on while an earlier event's write is retried): tells a retry whether the task is still as of its
   * event.
   */
  readonly #handed = new WeakMap<Task, number>()
  /** Each task's writes, one after the other: the pool has several connections, and events must land in order. */
  readonly #queues = new Map<string, Promise<void>>()
  /** Each task's events handed since its last write left: they go together once it lands (see `#batched`). */
  readonly #openBatches = new Map<string, Batch>()
  /** The creates of a turn, written together (see `#createWith`). */
  readonly #creates: CreateBatches
  #settledSinceTrim = 0
  #sweeping = false
  #checkingLost = false

  constructor(options: PostgresStoreOptions) {
    this.schema = options.schema ?? 'a2a'
    this.#s = quoteSchema(this.schema)
    this.maxTasks = positive(options.maxTasks, DEFAULT_MAX_TASKS, 'maxTasks')
    this.ttlMs = positive(options.ttlMs, DEFAULT_TTL_MS, 'ttlMs')
    this.leaseMs = positive(options.leaseMs, DEFAULT_LEASE_MS, 'leaseMs')
    this.#timeoutMs = positive(options.timeoutMs, DEFAULT_TIMEOUT_MS, 'timeoutMs')
    const poolSize = positive(options.poolSize, DEFAULT_POOL_SIZE, 'poolSize')
    const env = options.env ?? processEnv()
    this.eventLogBytes = readByteBudget(
      options.eventLogBytes,
      'eventLogBytes',
      'A2A_EVENT_LOG_BYTES',
      DEFAULT_EVENT_LOG_BYTES,
      env,
    )
    this.#pushConfigKey = readPushConfigKey(options.pushConfigKey, env)
    this.#keepInstantLogs = options.keepInstantLogs === true
    this.#logger = options.logger
    this.#statements = statements(this.#s)
    const pg = loadPg()
    this.#pool = new PgPool(pg, options.url, this.#timeoutMs, poolSize)
    const schema = this.schema
    this.#pool.gate(async () => {
      // A refusal is not logged here: a start awaits `ready` and stops with it (see `TaskStore.ready`), and each
      // request the store refuses is answered with it.
      if (options.migrate === false) await checkCurrent(this.#pool, schema)
      else await migrate(this.#pool, schema)
    })
    const timings = leaseTimings(this.leaseMs)
    this.#leases = new Leases(this.#pool, this.#s, this.instanceId, timings.holdMs)
    // Tried again over a short outage, as events are (the agent may have started: see createJoinsFirstEvents); a
    // retry of a create that landed answers 2.
    this.#creates = new CreateBatches(
      async (values) => {
        const [row] = await this.#retried(() =>
          this.#pool.query<{ created: number[] }>(this.#statements.createMany, values),
        )
        return row!.created
      },
      this.instanceId,
      () => this.#leases.holdMs,
    )
    const cancels = new CancelForwarding(
      this.#pool,
      this.#s,
      this.instanceId,
      this.#timeoutMs,
      (taskId) => this.get(taskId),
      async (taskId) => await this.#afterWrites(taskId),
    )
    this.#listener = new PgListener(
      pg,
      options.url,
      this.#timeoutMs,
      {
        [eventsChannel(schema)]: (payload) => this.#followers.heard(payload),
        [instanceChannel(this.instanceId)]: (payload) => cancels.heard(payload),
      },
      (message) => this.#logger?.warn(message),
    )
    this.#followers = new Followers(
      this.#listener,
      (id, after) => this.#log(id, after),
      () => this.#pool.closed,
      (taskId, followers) => this.#pool.query(this.#statements.follow, [taskId, followers]),
    )
    this.#timers.push(setInterval(() => void this.#leases.renew(), timings.renewEveryMs))
    this.#timers.push(setInterval(() => void this.#failLostTasks(), timings.lostCheckEveryMs))
    this.#timers.push(
      setInterval(() => void this.sweep().catch(noop), Math.min(60_000, Math.max(1000, Math.floor(this.ttlMs / 4)))),
    )
    for (const timer of this.#timers) timer.unref()
    void this.#pool.ready().then(() => this.#failLostTasks(), noop)
    this.cluster = {
      claimsOnCreate: true,
      createJoinsFirstEvents: true,
      claim: (taskId) => this.#leases.claim(taskId),
      // After the task's writes handed so far: the event that ends a task gives its lease back in its own statement,
      // and a release then has nothing to do (sent before it landed, it would wait for the task's row, then free it).
      release: async (taskId) => {
        await this.#queues.get(taskId)
        await this.#leases.release(taskId)
      },
      follow: (taskId, afterSeq, onEvent) => this.#followers.follow(taskId, afterSeq, onEvent),
      cancel: (taskId) => cancels.forward(taskId),
      onCancel: (handler) => cancels.onCancel(handler),
      onLost: (handler) => this.#leases.onLost(handler),
    }
  }

  /**
   * Resolves once the schema is ready (its migrations applied, or found current with `migrate: false`); rejects with
   * the one-line `ConfigurationError` that refuses the schema (newer than this runtime, or not migrated), or with the
   * 503 of a server that could not be reached (tried again at the next call). Requests wait for it, and fail with a
   * 503 saying the same when it failed.
   */
  ready(): Promise<void> {
    return this.#pool.ready()
  }

  /** One `SELECT 1` through the pool, after the schema's check: `/readyz` asks whether the database answers now. */
  reachable(): Promise<void> {
    return this.#pool.reachable()
  }

  /** Statements sent so far (each one round trip): for measurements. */
  get statementsSent(): number {
    return this.#pool.statements
  }

  get(taskId: string, owner?: string): Promise<Task | undefined> {
    return storeCall(this, 'postgres', 'get', taskId, async () => {
      await this.#afterWrites(taskId)
      return (await this.#read(taskId, owner))?.task
    })
  }

  /**
   * Waits for the writes of the task handed to this instance so far (landed or not): a read on another connection of
   * the pool would otherwise overtake them, and a GetTask right after a cancel or a stream's end would answer the task
   * as it was before (one Redis connection keeps that order by itself; a pool does not).
   */
  #afterWrites(taskId: string): Promise<void> | undefined {
    const queue = this.#queues.get(taskId)
    return queue && this.#within(queue, `the writes of task ${taskId}`)
  }

  /**
   * Waits for `writes` at most `timeoutMs`, else fails with a 503: while the database is unreachable a write is
   * retried for seconds, and a read behind it must not wait for all of that (nor answer what it would overtake).
   */
  async #within(writes: Promise<unknown>, what: string): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), this.#timeoutMs)))
    const timedOut = await Promise.race([writes.then(() => false), late])
    clearTimeout(timer)
    if (timedOut)
      throw new ServerUnavailableError(
        `The task store (PostgreSQL) did not finish ${what} within ${this.#timeoutMs} ms; retry shortly`,
        503,
      )
  }

  /**
   * Writes the task with its owner and this instance's lease in one statement (the owner no later write changes).
   */
  async create(task: Task, owner?: string): Promise<void> {
    // The task as it is created: what is written when no event joins it (see `#createWith`).
    const asCreated = this.#newTaskRow(task, owner ?? null, [], 0, false)
    this.#remember(task.id, {
      history: task.history.length,
      json: asCreated.json.length,
      added: 0,
      seq: 0,
      whole: false,
    })
    let created: number
    try {
      created = await this.#queued(task.id, () =>
        storeCall(this, 'postgres', 'create', task.id, () => this.#createWith(task, asCreated)),
      )
    } catch (error) {
      this.#written.delete(task.id)
      // It may have landed with its lease (the answer was lost): give that back rather than wait for it to run out.
      this.#leases.took(task.id)
      void this.#leases.release(task.id)
      throw error
    }
    if (created === 0) {
      this.#written.delete(task.id)
      throw new ServerUnavailableError(`Task ${task.id} is held by another instance`, 503)
    }
  }

  /**
   * Writes a new task a turn of the event loop later, as it stands after the events its agent handed meanwhile (the
   * engine starts the agent while the create is on its way: see `ClusterLink.createJoinsFirstEvents`), with them,
   * and with the other tasks created in that turn (see `CreateBatches`): an agent that answers at once costs a
   * share of one statement and one commit, its row written once. Events that cannot go that way (more than one
   * batch, past the log's budget) are written after the create, as any others.
   */
  async #createWith(task: Task, asCreated: NewTaskRow): Promise<number> {
    let joined: Batch | undefined
    const row = (): NewTaskRow => {
      const batch = this.#openBatches.get(task.id)
      if (!batch || !this.#joinable(task, batch)) return asCreated
      this.#openBatches.delete(task.id)
      batch.joined = true
      joined = batch
      const last = batch[batch.length - 1]!
      // A task that ended before anyone could follow it keeps no event in the log (see migration 5).
      const logged = this.#keepInstantLogs || !isTerminal(last.state)
      const events = logged ? batch.map((pending) => pending.eventJson) : []
      const withEvents = this.#newTaskRow(task, asCreated.owner, events, last.event.seq, last.ends)
      // Remembered before the statement: events handed while it is on its way follow the batch's last one.
      this.#remember(task.id, {
        history: task.history.length,
        json: withEvents.json.length,
        added: 0,
        seq: last.event.seq,
        whole: false,
      })
      return withEvents
    }
    let created: number
    try {
      created = await this.#creates.add(row)
    } catch (error) {
      if (joined) for (const pending of joined) pending.reject!(error)
      throw error
    }
    if (created === 0) {
      const refused = new ServerUnavailableError(`Task ${task.id} is held by another instance`, 503)
      if (joined) for (const pending of joined) pending.reject!(refused)
      return created
    }
    // Held from here, unless the event that ended the task gave the lease back in the same statement.
    this.#leases.took(task.id)
    if (joined)
      await this.#settleBatch(
        joined,
        joined.map(() => (created === 1 ? WRITTEN : ALREADY_WRITTEN)),
      )
    return created
  }

  /** The task as it stands, as a2a_create_many writes it with `events`, the first events its log keeps (the last `lastSeq`). */
  #newTaskRow(task: Task, owner: string | null, events: string[], lastSeq: number, frees: boolean): NewTaskRow {
    const { state, timestamp } = task.status
    return {
      id: task.id,
      contextId: task.contextId,
      owner,
      state,
      settled: isSettled(state),
      statusMs: Date.parse(timestamp),
      json: withoutHistory(task),
      head: headOf(task),
      messages: task.history.map((message) => JSON.stringify(message)),
      events,
      lastSeq,
      frees,
    }
  }

  /**
   * The task as it stands is as of the batch's last event, and the batch holds every event since its create (seq 1
   * onwards, none in an earlier batch), within the log's budget: its create can carry them (see a2a_create_with).
   */
  #joinable(task: Task, batch: Batch): boolean {
    if (this.#handed.get(task) !== batch.length) return false
    let bytes = 0
    for (const [i, pending] of batch.entries()) {
      if (pending.event.seq !== i + 1) return false
      bytes += Buffer.byteLength(pending.eventJson)
    }
    return bytes <= this.eventLogBytes
  }

  append(task: Task, event: TaskEvent): Promise<void> {
    return storeCall(this, 'postgres', 'append', task.id, () => this.#append(task, event, 0))
  }

  /**
   * Writes one event, after the task's earlier writes (see `#queued`), together with the other events of the task
   * handed meanwhile (see `#batched`). `keptAfter` past 0 marks the log as holding every event only after it (see
   * a2a_append).
   */
  #append(task: Task, event: TaskEvent, keptAfter: number): Promise<void> {
    const eventJson = JSON.stringify(event)
    const settles = event.kind === 'status-update' && event.final
    // The state after this event, read now: the run moves on (even ends the task) while the write waits or is
    // retried, and the table must hold a status only with the event that set it (a task ended there without its
    // final event leaves a client that resumes its stream waiting for an end that never comes).
    const state = task.status.state
    const ends = settles && isTerminal(state)
    const statusMs = event.kind === 'status-update' ? Date.parse(task.status.timestamp) : null
    this.#handed.set(task, event.seq)
    const args = this.#appendArgs(task, event, eventJson, settles)
    return this.#batched({ task, event, eventJson, state, ends, settles, statusMs, keptAfter, args })
  }

  /**
   * Hands an event to its task's next write: the events of a task handed while its previous write is on its way
   * (or within the same turn of the event loop) go together in one statement, one commit (a2a_append), when
   * that write landed. Each event's promise settles with its own answer.
   */
  #batched(pending: PendingEvent): Promise<void> {
    const taskId = pending.task.id
    const done = new Promise<void>((resolve, reject) => {
      pending.resolve = resolve
      pending.reject = reject
    })
    const open = this.#openBatches.get(taskId)
    const bytes = pendingBytes(pending)
    // A batch has a bound, the rest goes in the next statement: after an outage a task's backlog could otherwise
    // make one statement that runs past the statement timeout, and fails every time it is retried.
    if (open && open.length < BATCH_EVENTS && open.bytes + bytes <= BATCH_BYTES) {
      open.push(pending)
      open.bytes += bytes
      return done
    }
    const batch: Batch = Object.assign([pending], { bytes })
    this.#openBatches.set(taskId, batch)
    void this.#queued(taskId, async () => {
      // The events a turn hands in one go (a status, its answer, the end) join before the batch leaves.
      await new Promise((resolve) => setImmediate(resolve))
      if (this.#openBatches.get(taskId) === batch) this.#openBatches.delete(taskId)
      // Written with its task's create (see `#createWith`).
      if (!batch.joined) await this.#writeBatch(batch)
    })
    return done
  }

  /** Writes a batch of one task's events in one statement, then settles each as a2a_append answered for it. */
  async #writeBatch(batch: PendingEvent[]): Promise<void> {
    let answers: number[]
    try {
      answers = await this.#retried(() => this.#writeEvents(batch))
    } catch (error) {
      // What was sent may not have landed: the next write of this task is whole.
      this.#writeWhole(batch[0]!.task.id)
      for (const pending of batch) pending.reject!(error)
      return
    }
    await this.#settleBatch(batch, answers)
  }

  /** Settles each event of a written batch as a2a_append answered for it. */
  async #settleBatch(batch: PendingEvent[], answers: number[]): Promise<void> {
    for (const [i, pending] of batch.entries()) {
      try {
        await this.#landed(pending, answers[i]!)
        pending.resolve!()
      } catch (error) {
        pending.reject!(error)
      }
    }
  }

  /** One statement writing `events` of one task, in order: what a2a_append answered for each. */
  async #writeEvents(events: PendingEvent[]): Promise<number[]> {
    const [row] = await this.#pool.query<{ written: number[] }>(this.#statements.append, this.#appendValues(events))
    return row!.written
  }

  /** a2a_append's arguments for `events` of one task, in order. */
  #appendValues(events: PendingEvent[]): unknown[] {
    const messages: string[] = []
    for (const { args } of events) messages.push(...args.messages)
    return [
      events[0]!.task.id,
      events.map((e) => e.event.seq),
      joinedJson(events.map((e) => e.eventJson)),
      events.map((e) => e.state),
      events.map((e) => isSettled(e.state)),
      events.map((e) => e.ends),
      events.map((e) => e.statusMs),
      events.map((e) => e.keptAfter),
      this.eventLogBytes,
      this.instanceId,
      events.map((e) => e.args.json),
      events.map((e) => e.args.jsonSeq),
      events.map((e) => e.args.head),
      events.map((e) => e.args.whole),
      joinedJson(messages),
      events.map((e) => e.args.messages.length),
      eventsChannel(this.schema),
      events.map((e) => notification(e.task.id, e.event.seq, e.eventJson)),
    ]
  }

  #writeWhole(taskId: string): void {
    const known = this.#written.get(taskId)
    if (known) known.whole = true
  }

  /** What follows from a2a_append's answer `written` for one event of a batch. */
  async #landed(pending: PendingEvent, answer: number): Promise<void> {
    const { task, event, ends, settles } = pending
    let written = answer
    try {
      // The task's log does not end with the event before this one (another instance wrote it since, or an
      // earlier event of this task did not land): the whole task as it is now, which is as of this event only
      // while no later one was handed. Past it, the task as it is now holds statuses whose events are not
      // written yet: the newest event's own write carries the whole task instead (it cannot follow this one
      // either), and this one is left out of the log, which says so (see a2a_append's kept_after).
      if (written === NOT_NEXT) {
        if ((this.#handed.get(task) ?? event.seq) > event.seq) return this.#writeWhole(task.id)
        const whole = { ...pending, args: this.#wholeArgs(task, event.seq) }
        written = (await this.#retried(() => this.#writeEvents([whole])))[0]!
      }
      // The event that ended the task gave its lease back: no renewal may take it for lost from here on.
      if ((written === WRITTEN || written === ALREADY_WRITTEN) && ends) this.#leases.gaveBack(task.id)
    } catch (error) {
      // What was sent may not have landed: the next write of this task is whole.
      this.#writeWhole(task.id)
      throw error
    }
    if (ends) this.#written.delete(task.id)
    const refused = appendRefusal(written, task.id, event.seq)
    if (refused) throw refused
    // Checked every TRIM_EVERY settlings (trim removes a margin more): the count is the sum of the rows a2a_counts
    // keeps for all tasks (a COUNT over the table's index grew with it: 3 ms per check at 20k tasks).
    if (settles && ++this.#settledSinceTrim >= TRIM_EVERY) {
      this.#settledSinceTrim = 0
      void this.#trim().catch(noop)
    }
  }

  /**
   * Runs `work` after every write of the task handed before it, whether they landed or not: the events of a turn
   * reach the database in order over a pool of connections, as a read sent after an event sees it.
   */
  #queued<T>(taskId: string, work: () => Promise<T>): Promise<T> {
    const before = this.#queues.get(taskId)
    const run = before ? before.then(work) : work()
    const tail = run.then(noop, noop)
    this.#queues.set(taskId, tail)
    void tail.then(() => {
      if (this.#queues.get(taskId) === tail) this.#queues.delete(taskId)
    })
    return run
  }

  /**
   * An event is tried again over a short outage (a restart, a failover) before its task is failed for it. Its row's
   * key is its number, so a retry can never land twice, nor after a later event of the same task.
   */
  async #retried<T>(write: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await write()
      } catch (error) {
        if (attempt >= APPEND_RETRIES.length || this.#pool.closed || !(error instanceof ServerUnavailableError))
          throw error
        await new Promise((resolve) => setTimeout(resolve, APPEND_RETRIES[attempt]))
      }
    }
  }

  /**
   * What a2a_append writes besides the event: the messages that joined the history since this instance wrote the
   * event before this one (a follow-up, the agent's question), with the task's head when the status moved; with the
   * task's json too when the events since it outweigh it; or the whole task (see `#wholeArgs`) when this instance
   * did not write the event before (another did, or it did not land).
   */
  #appendArgs(task: Task, event: TaskEvent, eventJson: string, settles: boolean): AppendArgs {
    const written = this.#written.get(task.id)
    const history = task.history
    if (written && !written.whole && written.seq === event.seq - 1 && written.history <= history.length) {
      const messages: string[] = []
      for (let i = written.history; i < history.length; i++) messages.push(JSON.stringify(history[i]!))
      written.history = history.length
      written.added += eventJson.length
      written.seq = event.seq
      const head = event.kind === 'status-update' ? headOf(task) : null
      // Folded in when a turn settles with the events outweighing half the json (amortised: the bytes written
      // stay a small multiple of the bytes added), or mid-turn once they pass both twice the json and the event
      // log's budget (only events folded in may leave the log: it stays within a few times its bytes). The
      // history is not in the json: its messages are written once, as they join.
      const fold = settles
        ? written.added * 2 >= written.json
        : written.added > Math.max(2 * written.json, this.eventLogBytes)
      if (!fold) return { json: null, jsonSeq: null, head, whole: false, messages }
      const json = withoutHistory(task)
      written.json = json.length
      written.added = 0
      return { json, jsonSeq: event.seq, head, whole: false, messages }
    }
    return this.#wholeArgs(task, event.seq)
  }

  /**
   * The whole task as it is now, which holds every event handed to the store so far (the run applies an event,
   * then hands it over, in one go): written as of `seq`, the last of them, its history replacing the one written.
   */
  #wholeArgs(task: Task, seq: number): AppendArgs {
    const json = withoutHistory(task)
    this.#remember(task.id, { history: task.history.length, json: json.length, added: 0, seq, whole: false })
    const messages = task.history.map((message) => JSON.stringify(message))
    return { json, jsonSeq: seq, head: headOf(task), whole: true, messages }
  }

  #remember(taskId: string, written: Written): void {
    if (this.#written.size >= MAX_WRITTEN && !this.#written.has(taskId))
      this.#written.delete(this.#written.keys().next().value!)
    this.#written.set(taskId, written)
  }

  /**
   * The task as written, with the events since folded in, and the number of its last event, in one statement;
   * with `owner`, only when it is that owner's (compared in the statement, before any row of the task is read).
   */
  async #read(taskId: string, owner?: string): Promise<{ task: Task; seq: number } | undefined> {
    const [row] = await this.#pool.query<{ json: string; last_seq: number; events: string[]; history: string[] }>(
      this.#statements.read,
      [taskId, owner ?? null],
    )
    // Another owner's task answers as one that does not exist.
    if (!row) return undefined
    return { task: folded(row.json, row.events, row.history), seq: row.last_seq }
  }

  async events(taskId: string, afterSeq?: number): Promise<TaskEvent[] | undefined> {
    const log = await storeCall(this, 'postgres', 'events', taskId, () => this.#log(taskId, afterSeq ?? 0))
    if (!log) return undefined
    // Events up to `keptAfter` may be missing (one could not be written): a resume from before them is refused.
    if (afterSeq !== undefined && afterSeq < log.keptAfter) return undefined
    // None kept past it: a task that ended as it was created, its log in the task (trimming keeps the newest event).
    if (afterSeq === undefined && log.keptAfter > 0 && log.events.length === 0) return undefined
    return log.events
  }

  /** The task's events after `afterSeq` that its table holds (those past `keptAfter`); undefined: no such task. */
  async #log(taskId: string, afterSeq: number): Promise<LogRead | undefined> {
    await this.#afterWrites(taskId)
    const after = Math.max(0, Math.floor(afterSeq))
    const [row] = await this.#pool.query<{ kept_after: number; events: string[] }>(this.#statements.events, [
      taskId,
      after,
    ])
    if (!row) return undefined
    return { keptAfter: row.kept_after, events: row.events.map((event) => JSON.parse(event) as TaskEvent) }
  }

  async lastSeq(taskId: string): Promise<number | undefined> {
    const [row] = await storeCall(this, 'postgres', 'lastSeq', taskId, async () => {
      await this.#afterWrites(taskId)
      return this.#pool.query<{ last_seq: number }>(this.#statements.lastSeq, [taskId])
    })
    return row?.last_seq
  }

  snapshot(taskId: string, owner?: string): Promise<{ task: Task; seq: number } | undefined> {
    return storeCall(this, 'postgres', 'snapshot', taskId, async () => {
      await this.#afterWrites(taskId)
      return this.#read(taskId, owner)
    })
  }

  /**
   * One page and its total in one statement (see `pageStatement`): costs the page, not the number of tasks, plus the
   * count of the matches. With `historyLength` or `includeArtifacts: false` (ListTasks passes them: what its answer
   * shows of each task) only that is read of each task: its head (status, metadata), its newest messages, its
   * artifacts when asked.
   */
  async list(query: TaskQuery & ListView): Promise<TaskPage> {
    const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
    if (query.cursor !== undefined && !cursor)
      throw new InvalidParamsError('the page token is not one from a previous page')
    const view = viewOf(query)
    const start = cursor && { ms: Date.parse(cursor.status.timestamp), id: cursor.id }
    const statement = pageStatement(this.#s, query, start, view)
    const rows = await storeCall(this, 'postgres', 'list', undefined, async () => {
      // A listing sees what this instance handed over before it, as a read of one task does (see `#afterWrites`).
      if (this.#queues.size) await this.#within(Promise.all(this.#queues.values()), "this instance's writes")
      return this.#pool.query<PageRow>({ text: statement.text }, statement.values)
    })
    const total = rows[0]?.total ?? 0
    const found = rows.filter((row) => row.id !== null)
    const more = found.length > query.limit
    const page = found.slice(0, query.limit)
    const tasks = page.map((row) => {
      const task =
        row.json !== null
          ? folded(row.json, row.events ?? [], row.history ?? [])
          : { ...(JSON.parse(row.head!) as Task), history: parsedMessages(row.history ?? []) }
      if (view && !view.includeArtifacts) task.artifacts = []
      return task
    })
    const last = page.at(-1)
    // The position in the index, not the task's status now (the cursor compares status times in ms).
    const next =
      more && last
        ? encodeCursor({ id: last.id!, status: { state: 'completed', timestamp: isoOf(Number(last.status_ms)) } })
        : undefined
    return { tasks, total, ...(next && { nextCursor: next }) }
  }

  /**
   * Removes the settled tasks older than `ttlMs` (and their history, events and webhooks with them), oldest first, a
   * batch per statement; one instance at a time (an advisory lock of the schema). Runs on a timer; callable for tests
   * and tools.
   */
  async sweep(): Promise<void> {
    if (this.#sweeping || this.#pool.closed) return
    this.#sweeping = true
    try {
      for (;;) {
        const removed = await this.#pool.query(this.#statements.sweep, [
          lockKey(this.schema, 'sweep'),
          this.ttlMs,
          SWEEP_BATCH,
        ])
        if (removed.length < SWEEP_BATCH) return
      }
    } finally {
      this.#sweeping = false
    }
  }

  /**
   * Webhooks one row each, shared by the instances; they go with their task. Sealed with `pushConfigKey` when one is
   * set (see `_sealed-configs.ts`).
   */
  readonly pushConfigs: PushConfigStore = {
    save: async (config) => {
      // After the task's create, which may still be on its way (see `#createWith`).
      await this.#afterWrites(config.taskId)
      const saved = await storeCall(this, 'postgres', 'pushConfigs.save', config.taskId, () =>
        this.#pool.query(this.#statements.savePush, [
          config.taskId,
          config.id,
          sealConfig(JSON.stringify(config), this.#pushConfigKey),
        ]),
      )
      if (saved.length === 0) throw new TaskNotFoundError(config.taskId)
    },
    list: async (taskId) => {
      const rows = await storeCall(this, 'postgres', 'pushConfigs.list', taskId, () =>
        this.#pool.query<{ config: string }>(this.#statements.listPush, [taskId]),
      )
      return rows.map((row) => JSON.parse(openConfig(row.config, this.#pushConfigKey)) as PushConfig)
    },
    delete: async (taskId, id) => {
      const removed = await storeCall(this, 'postgres', 'pushConfigs.delete', taskId, () =>
        this.#pool.query(this.#statements.deletePush, [taskId, id]),
      )
      return removed.length > 0
    },
  }

  async close(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer)
    // The writes handed over before the close land first (an app closes its store once its last task settled, and
    // that task's final event may still be on its way), within the store's timeout; then the leases go.
    if (this.#queues.size) await endWithin(Promise.all(this.#queues.values()), this.#pool.timeoutMs)
    await this.#leases.releaseAll()
    this.#pool.markClosed()
    await Promise.all([this.#listener.close(), this.#pool.end()])
  }

  // --- tasks whose instance stopped ------------------------------------------------------------------------

  /**
   * Fails the tasks whose instance died: unsettled, their lease run out (by the database's clock), and their status
   * older than a lease lasts (a task just created or resumed may not hold its lease yet; one whose instance died
   * changed its status before then, so this guard adds nothing to the wait).
   */
  async #failLostTasks(): Promise<void> {
    // One check at a time: a slow one (many running tasks, a slow database) must not be joined by the next.
    if (this.#pool.closed || this.#checkingLost) return
    this.#checkingLost = true
    try {
      const lost = await this.#pool.query<{ id: string }>(this.#statements.lost, [this.#leases.holdMs, LOST_BATCH])
      for (const { id: taskId } of lost) {
        if (this.#leases.holds(taskId) || !(await this.#leases.claim(taskId))) continue
        try {
          // Read again now that it is held here: it may have moved on before the claim.
          const seen = await this.#read(taskId)
          if (!seen || isSettled(seen.task.status.state)) continue
          const seq = seen.seq + 1
          const failed = failWithReason(seen.task, LOST_REASON, seq)
          // The instance that died may have sent events it never wrote: the log is kept only from this one.
          await this.#append(seen.task, failed, seq - 1)
          this.#logger?.warn(`Task ${taskId} lost the instance that ran it (its lease ran out); it is failed`)
        } finally {
          await this.#leases.release(taskId)
        }
      }
    } catch (error) {
      this.#logger?.error('Could not check for tasks whose instance stopped', error)
    } finally {
      this.#checkingLost = false
    }
  }

  /** Past `maxTasks`, removes the oldest settled tasks (a margin more, so it does not run at every settling). */
  async #trim(): Promise<void> {
    await this.#pool.query(this.#statements.trim, [
      lockKey(this.schema, 'sweep'),
      this.maxTasks,
      Math.floor(this.maxTasks / 64),
      SWEEP_BATCH,
    ])
  }
}

/** What an instance has written of a task (see `#written`). */
interface Written {
  /** Messages of the history already in the table. */
  history: number
  /** Characters of the task's json as last written. */
  json: number
  /** Characters of the events added since. */
  added: number
  /** The last event handed to the store for this task. */
  seq: number
  /** A write did not land: the next one is whole. */
  whole: boolean
}

/** Events of one task written in one statement, and about how many bytes they send (see `#batched`). */
/** One task's events written together; `joined`: they went with the task's create. */
type Batch = PendingEvent[] & { bytes: number; joined?: boolean }

/** About the bytes an event's write sends: the event, and the task's json and messages with it. */
function pendingBytes({ eventJson, args }: PendingEvent): number {
  let bytes = eventJson.length + (args.json?.length ?? 0) + (args.head?.length ?? 0)
  for (const message of args.messages) bytes += message.length
  return bytes
}

/** An event handed to the store, waiting for its task's next write (see `#batched`). */
interface PendingEvent {
  task: Task
  event: TaskEvent
  eventJson: string
  state: Task['status']['state']
  ends: boolean
  settles: boolean
  statusMs: number | null
  keptAfter: number
  args: AppendArgs
  resolve?: () => void
  reject?: (error: unknown) => void
}

/** a2a_append's arguments besides the event (see `#appendArgs`). */
interface AppendArgs {
  json: string | null
  jsonSeq: number | null
  head: string | null
  whole: boolean
  messages: string[]
}

const isoOf = (ms: number): string => new Date(ms).toISOString()

function positive(given: number | undefined, fallback: number, option: string): number {
  if (given === undefined) return fallback
  if (!Number.isSafeInteger(given) || given <= 0)
    throw new ConfigurationError(`The PostgreSQL store's ${option} must be a positive integer (got ${given})`)
  return given
}

type Statements = ReturnType<typeof statements>

/** Parameter `n`, JSON texts `joinedJson` joined, as the text[] the schema's functions take. */
const split = (n: number) => `string_to_array($${n}::text, E'\\x1e')`

/** The store's statements over the quoted schema `s`; the hot ones are prepared once per connection (by name). */
function statements(s: string) {
  const named = (name: string, text: string) => ({ name: `a2a-${name}-${s}`, text })
  return {
    // The JSON texts go joined, each as one parameter, and are split here (see `joinedJson`).
    createMany: named(
      'create-many-joined',
      `SELECT ${s}.a2a_create_many($1, $2, $3, $4, $5, $6, ${split(7)}, ${split(8)}, $9, $10, $11, $12, $13, $14,
  ${split(15)}, $16, $17, ${split(18)}) AS created`,
    ),
    append: named(
      'append-joined',
      `SELECT ${s}.a2a_append($1, $2, ${split(3)}, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, ${split(15)}, $16,
  $17, $18) AS written`,
    ),
    read: named(
      'read',
      `SELECT t.json, t.last_seq,
  ARRAY(SELECT e.event FROM ${s}.a2a_events e WHERE e.task_id = t.id AND e.seq > t.folded_seq ORDER BY e.seq) AS events,
  ARRAY(SELECT h.message FROM ${s}.a2a_history h WHERE h.task_id = t.id ORDER BY h.n) AS history
FROM ${s}.a2a_tasks t WHERE t.id = $1 AND ($2::text IS NULL OR t.owner = $2)`,
    ),
    events: named(
      'events',
      `SELECT t.kept_after, ARRAY(SELECT e.event FROM ${s}.a2a_events e
  WHERE e.task_id = t.id AND e.seq > greatest($2, t.kept_after) ORDER BY e.seq) AS events
FROM ${s}.a2a_tasks t WHERE t.id = $1`,
    ),
    follow: named('follow', `UPDATE ${s}.a2a_tasks SET followers = greatest(followers + $2, 0) WHERE id = $1`),
    lastSeq: named('last-seq', `SELECT last_seq FROM ${s}.a2a_tasks WHERE id = $1`),
    savePush: {
      text: `INSERT INTO ${s}.a2a_push_configs (task_id, id, config)
SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM ${s}.a2a_tasks WHERE id = $1)
ON CONFLICT (task_id, id) DO UPDATE SET config = excluded.config RETURNING 1`,
    },
    listPush: { text: `SELECT config FROM ${s}.a2a_push_configs WHERE task_id = $1 ORDER BY id` },
    deletePush: { text: `DELETE FROM ${s}.a2a_push_configs WHERE task_id = $1 AND id = $2 RETURNING 1` },
    lost: {
      text: `SELECT id FROM ${s}.a2a_tasks WHERE NOT settled AND (lease_until IS NULL OR lease_until < now())
  AND status_ms < (extract(epoch FROM now()) * 1000)::bigint - $1 LIMIT $2`,
    },
    sweep: {
      text: `WITH locked AS (SELECT pg_try_advisory_xact_lock($1) AS got)
DELETE FROM ${s}.a2a_tasks WHERE (SELECT got FROM locked) AND id IN (
  SELECT id FROM ${s}.a2a_tasks WHERE settled AND changed_at < now() - $2 * interval '1 millisecond'
  ORDER BY changed_at LIMIT $3)
RETURNING 1`,
    },
    trim: {
      text: `WITH locked AS (SELECT pg_try_advisory_xact_lock($1) AS got),
excess AS (SELECT coalesce(sum(n), 0) - $2 AS n FROM ${s}.a2a_counts WHERE key = '')
DELETE FROM ${s}.a2a_tasks WHERE (SELECT got FROM locked) AND (SELECT n FROM excess) > 0 AND id IN (
  SELECT id FROM ${s}.a2a_tasks WHERE settled ORDER BY status_ms, id
  LIMIT least((SELECT n FROM excess) + $3, $4))`,
    },
  }
}

/** Tasks in PostgreSQL for several instances of one agent; see `PostgresTaskStore`. */
export function createPostgresStore(options: PostgresStoreOptions): PostgresTaskStore {
  return new PostgresTaskStore(options)
}

/**
 * Applies the schema's pending migrations (for `a2a store migrate`, when instances start with `migrate: false`):
 * says the version the schema was at and is at now. Safe while instances start or run.
 */
export async function migratePostgresStore(options: {
  /** As `PostgresStoreOptions.url`. */
  url: string
  /**
   * As `PostgresStoreOptions.schema`.
   * @default 'a2a'
   */
  schema?: string
}): Promise<{ from: number; to: number }> {
  const schema = options.schema ?? 'a2a'
  quoteSchema(schema)
  const pool = new PgPool(loadPg(), options.url, DEFAULT_TIMEOUT_MS, 1)
  try {
    return await migrate(pool, schema)
  } finally {
    await pool.end()
  }
}
