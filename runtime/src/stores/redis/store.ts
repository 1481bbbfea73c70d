import { failWithReason } from '../../core/_failed.js'
import { newId } from '../../core/_ids.js'
import { isSettled, isTerminal } from '../../core/_lifecycle.js'
import { InvalidParamsError, ServerUnavailableError, TaskNotFoundError } from '../../errors.js'
import type { PushConfig, PushConfigStore } from '../../push/push-config.js'
import { processEnv } from '../../settings.js'
import { storeCall } from '../../telemetry/_store-calls.js'
import type { Message, Task, TaskEvent } from '../../types.js'
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
import { foldEntries, type TaskEntry } from '../_fold.js'
import { decodeCursor, encodeCursor } from '../_paging.js'
import { openConfig, readPushConfigKey, sealConfig } from '../_sealed-configs.js'
import type { SharedStoreOptions } from '../_shared-store-options.js'
import { DEFAULT_EVENT_LOG_BYTES, DEFAULT_MAX_TASKS, DEFAULT_TTL_MS } from '../memory.js'
import type { ClusterLink, TaskPage, TaskQuery, TaskStore } from '../task-store.js'
import { CancelForwarding } from './_cancels.js'
import { noop, type RedisClient, RedisConnection } from './_connection.js'
import { followTask } from './_follow.js'
import { RedisKeys } from './_keys.js'
import { Leases } from './_leases.js'
import { runScript } from './_scripts.js'

/** Which Redis the store uses, how it names its keys, and what it keeps of the tasks there. */
export interface RedisStoreOptions extends SharedStoreOptions {
  /** `redis://[user:password@]host:port/db` (`rediss://` for TLS); with `cluster`, any node of the cluster. */
  url: string
  /**
   * Redis Cluster: `url` names one node, the others are found from it (the database number must be 0). Each
   * task's keys share a hash tag, so every script runs on one node. Off: a single Redis.
   * @default false
   */
  cluster?: boolean
  /**
   * Prefix of every key and channel, so several agents can share one Redis (no `{` or `}`).
   * @default 'a2a:'
   */
  prefix?: string
  /**
   * How long an instance's hold on a running task lasts without renewal, in ms. A task whose instance died
   * is failed by another instance once its lease has run out. Renewed every third of it.
   * @default 10_000
   */
  leaseMs?: number
  /**
   * How long a request waits for Redis to connect at first, for a command's answer (past it the request gets a 503
   * saying Redis did not answer in time), and for another instance to answer a cancel, in ms.
   * @default 5_000
   */
  timeoutMs?: number
}

const DEFAULT_LEASE_MS = 10_000
const TRIM_EVERY = 64
/**
 * On a Redis Cluster, how long a follower hears nothing live before it reads the task's log (see
 * `RedisConnection.hearsEveryReconnect`): an event lost while the listening connection moved, with none after it,
 * is up to one and a half of this late (one after it brings it at once). About one read of the log's end per quiet
 * follower per period.
 */
const QUIET_READ_MS = 1000

/** Index entries looked at per sweep step. */
const SWEEP_BATCH = 500

/**
 * Tasks in Redis, shared by any number of instances of one agent: each task in a hash (its JSON without history,
 * its head for listings, its history one message per field; see `RedisKeys.task`), its events in a Redis Stream
 * (so any instance can replay them, in order, to a stream that resumes), live events on a channel, and a lease
 * per running task. Any instance answers `tasks/get`, follows a task that runs on another, and forwards a cancel
 * to the instance that runs the task. Settled tasks expire after `ttlMs`.
 *
 * While Redis is unreachable, requests that need it fail at once with a JSON-RPC error (HTTP 503); the
 * connection is retried in the background. A command Redis does not answer within `timeoutMs` fails the same
 * way, saying so.
 */
export class RedisTaskStore implements TaskStore {
  readonly keepsOwners = true
  readonly cluster: ClusterLink
  readonly instanceId = newId()
  readonly prefix: string
  readonly keys: RedisKeys
  readonly maxTasks: number
  readonly ttlMs: number
  readonly leaseMs: number
  readonly eventLogBytes: number
  readonly #timeoutMs: number
  readonly #pushConfigKey: Uint8Array | undefined
  readonly #connection: RedisConnection
  readonly #logger: RedisStoreOptions['logger']
  readonly #leases: Leases
  // On Redis Cluster: the index keys are on another node than a task's, so no script touches both.
  readonly #clustered: boolean
  readonly #timers: Array<ReturnType<typeof setInterval>> = []
  /**
   * What this instance has written of each task it runs: how much of its history, and how large its json is
   * against the entries added since, so an event is written alone and the json only when worth folding in.
   */
  readonly #written = new Map<string, Written>()
  /**
   * The number of the last event handed to the store with each task the runtime holds (the run's live task,
   * which moves on while an earlier event's write is retried): tells a retry whether the task is still as of its
   * event.
   */
  readonly #handed = new WeakMap<Task, number>()
  #settledSinceTrim = 0
  #sweeping = false
  #checkingLost = false

  constructor(options: RedisStoreOptions) {
    this.prefix = options.prefix ?? 'a2a:'
    this.keys = new RedisKeys(this.prefix)
    this.maxTasks = options.maxTasks ?? DEFAULT_MAX_TASKS
    this.ttlMs = options.ttlMs ?? DEFAULT_TTL_MS
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS
    const env = options.env ?? processEnv()
    this.eventLogBytes = readByteBudget(
      options.eventLogBytes,
      'eventLogBytes',
      'A2A_EVENT_LOG_BYTES',
      DEFAULT_EVENT_LOG_BYTES,
      env,
    )
    this.#pushConfigKey = readPushConfigKey(options.pushConfigKey, env)
    this.#timeoutMs = options.timeoutMs ?? 5000
    this.#logger = options.logger
    this.#clustered = options.cluster === true
    this.#connection = new RedisConnection(options.url, this.#clustered, this.#timeoutMs)
    this.#leases = new Leases(this.#connection, this.keys, this.instanceId, this.leaseMs, this.ttlMs)
    const cancels = new CancelForwarding(this.#connection, this.keys, this.instanceId, this.#timeoutMs, (taskId) =>
      this.get(taskId),
    )
    this.#timers.push(setInterval(() => void this.#leases.renew(), Math.max(50, Math.floor(this.leaseMs / 3))))
    this.#timers.push(setInterval(() => void this.#failLostTasks(), this.leaseMs))
    this.#timers.push(
      setInterval(() => void this.sweep().catch(noop), Math.min(60_000, Math.max(1000, Math.floor(this.ttlMs / 4)))),
    )
    for (const timer of this.#timers) timer.unref()
    void this.#connection.connected.then(() => this.#failLostTasks())
    this.cluster = {
      claimsOnCreate: true,
      claim: (taskId) => this.#leases.claim(taskId),
      release: (taskId) => this.#leases.release(taskId),
      follow: (taskId, afterSeq, onEvent) =>
        followTask(
          this.#connection,
          this.keys,
          (id, after) => this.events(id, after),
          taskId,
          afterSeq,
          onEvent,
          this.#connection.hearsEveryReconnect ? undefined : QUIET_READ_MS,
        ),
      cancel: (taskId) => cancels.forward(taskId),
      onCancel: (handler) => cancels.onCancel(handler),
      onLost: (handler) => this.#leases.onLost(handler),
    }
  }

  get(taskId: string, owner?: string): Promise<Task | undefined> {
    return storeCall(this, 'redis', 'get', taskId, async () => (await this.#read(taskId, owner))?.task)
  }

  /**
   * Writes the task with its owner in one script (the hash's `owner` field, which no later write touches), and
   * files it under its owner's sets of the index (see `RedisKeys.byOwner`).
   */
  async create(task: Task, owner?: string): Promise<void> {
    const json = withoutHistory(task)
    const [taskKey, entriesKey] = this.keys.taskKeys(task.id)
    const taskArgs = [taskKey, entriesKey, this.keys.lease(task.id)]
    const messages = task.history.map((message) => JSON.stringify(message))
    const createArgs = [
      json,
      task.status.state,
      this.ttlMs,
      this.instanceId,
      this.leaseMs,
      headOf(task),
      ownerArg(owner),
      messages.length,
      ...messages,
    ]
    this.#remember(task.id, { history: task.history.length, json: json.length, added: 0, seq: 0, whole: false })
    let created: unknown
    try {
      created = await storeCall(this, 'redis', 'create', task.id, () =>
        this.#connection.run(async (redis) => {
          // On one Redis, one call with its indexing. On a cluster the index is on another node: both sent at once,
          // and a list that finds the id before the task skips it, until its first event (at once) files it again.
          if (!this.#clustered)
            return runScript(
              redis,
              'a2aCreate',
              10,
              ...taskArgs,
              ...this.#indexKeys(task),
              ...createArgs,
              ...this.#indexArgs(task),
            )
          const [result] = await Promise.all([
            runScript(redis, 'a2aCreate', 3, ...taskArgs, ...createArgs),
            this.#index(redis, task, ownerArg(owner)),
          ])
          return result
        }),
      )
    } catch (error) {
      this.#written.delete(task.id)
      // It may have landed with its lease (the answer was lost): give that back rather than wait for it to run out.
      void this.#connection
        .run((redis) => runScript(redis, 'a2aRelease', 1, this.keys.lease(task.id), this.instanceId))
        .catch(noop)
      throw error
    }
    if (created !== 1) {
      this.#written.delete(task.id)
      throw new ServerUnavailableError(`Task ${task.id} is held by another instance`, 503)
    }
    this.#leases.took(task.id)
  }

  append(task: Task, event: TaskEvent): Promise<void> {
    return storeCall(this, 'redis', 'append', task.id, () => this.#append(task, event, 0))
  }

  /**
   * Writes one event, at once: the events of a turn keep their order on the connection, so a read sent after
   * an event sees it. `keptAfter` past 0 marks the log as holding every event only after it (see APPEND).
   */
  async #append(task: Task, event: TaskEvent, keptAfter: number): Promise<void> {
    const eventJson = JSON.stringify(event)
    const settles = event.kind === 'status-update' && event.final
    // The state after this event, read now: the run moves on (even ends the task) while the write is under way
    // or retried, and Redis must hold a status only with the event that set it (a task ended there without its
    // final event leaves a client that resumes its stream waiting for an end that never comes).
    const state = task.status.state
    const ends = settles && isTerminal(state)
    this.#handed.set(task, event.seq)
    // A status files the task under its new state too: in the same call on one Redis, in another on a cluster.
    const indexHere = event.kind === 'status-update' && !this.#clustered
    const keys = [...this.keys.taskKeys(task.id), this.keys.lease(task.id), ...(indexHere ? this.#indexKeys(task) : [])]
    const indexArgs = indexHere ? this.#indexArgs(task) : []
    const write = (args: string[]) =>
      this.#retried(() =>
        this.#connection.run((redis) =>
          runScript(
            redis,
            'a2aAppend',
            keys.length,
            ...keys,
            event.seq,
            eventJson,
            state,
            this.keys.live(task.id),
            settles ? 1 : 0,
            this.ttlMs,
            keptAfter,
            this.eventLogBytes,
            this.instanceId,
            ...args,
            ...indexArgs,
          ),
        ),
      )
    let written: unknown
    try {
      written = await write(this.#appendArgs(task, event, eventJson, settles))
      // The task's log does not end with the event before this one (another instance wrote it since, or an
      // earlier event of this task did not land): the whole task as it is now, which is as of this event only
      // while no later one was handed. Past it, the task as it is now holds statuses whose events are not
      // written yet: the newest event's own write carries the whole task instead (it cannot follow this one
      // either), and this one is left out of the log, which says so (see APPEND's `kept`).
      if (written === NOT_NEXT) {
        if ((this.#handed.get(task) ?? event.seq) > event.seq) {
          const known = this.#written.get(task.id)
          if (known) known.whole = true
          return
        }
        written = await write(this.#wholeArgs(task, event.seq))
      }
      const landed = written === WRITTEN || written === ALREADY_WRITTEN
      // The event that ended the task gave its lease back: no renewal may take it for lost from here on.
      if (landed && ends) this.#leases.gaveBack(task.id)
      // The status moved: on a cluster the task moves in the indexes in another call (another slot). An event
      // that had landed before a retry still files its task there.
      if (landed && event.kind === 'status-update' && !indexHere)
        await this.#retried(() => this.#connection.run((redis) => this.#refile(redis, task)))
    } catch (error) {
      // What was sent may not have landed: the next write of this task is whole.
      const known = this.#written.get(task.id)
      if (known) known.whole = true
      throw error
    }
    if (settles && isTerminal(task.status.state)) this.#written.delete(task.id)
    const refused = appendRefusal(written, task.id, event.seq)
    if (refused) throw refused
    // Counting the index costs a round trip: check it every TRIM_EVERY settlings (trim removes a margin more).
    if (settles && ++this.#settledSinceTrim >= TRIM_EVERY) {
      this.#settledSinceTrim = 0
      void this.#trim().catch(noop)
    }
  }

  /**
   * An event is tried again over a short outage (a reconnect, a failover) before its task is failed for it. Its
   * entry id is its number, so a retry can never land twice, nor after a later event of the same task.
   */
  async #retried<T>(write: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await write()
      } catch (error) {
        if (attempt >= APPEND_RETRIES.length || this.#connection.closed) throw error
        await new Promise((resolve) => setTimeout(resolve, APPEND_RETRIES[attempt]))
      }
    }
  }

  /**
   * The end of APPEND's arguments (from its json on): the messages that joined the history since this instance
   * wrote the event before this one (a follow-up, the agent's question), with the task's head when the status
   * moved; with the task's json too when the entries since it outweigh it; or the whole task (see `#wholeArgs`)
   * when this instance did not write the event before (another did, or it did not land).
   */
  #appendArgs(task: Task, event: TaskEvent, eventJson: string, settles: boolean): string[] {
    const written = this.#written.get(task.id)
    const history = task.history
    if (written && !written.whole && written.seq === event.seq - 1 && written.history <= history.length) {
      const messages: string[] = []
      for (let i = written.history; i < history.length; i++) messages.push(JSON.stringify(history[i]!))
      written.history = history.length
      written.added += eventJson.length
      written.seq = event.seq
      const head = event.kind === 'status-update' ? headOf(task) : ''
      // Folded in when a turn settles with the entries outweighing half the json (amortised: the bytes written
      // stay a small multiple of the bytes added), or mid-turn once they pass both twice the json and the event
      // log's budget (only entries folded in may leave the log: it stays within a few times its bytes). The
      // history is not in the json: its messages are written once, as they join.
      const fold = settles
        ? written.added * 2 >= written.json
        : written.added > Math.max(2 * written.json, this.eventLogBytes)
      if (!fold) return ['', '', head, '0', String(messages.length), ...messages]
      const json = withoutHistory(task)
      written.json = json.length
      written.added = 0
      return [json, String(event.seq), head, '0', String(messages.length), ...messages]
    }
    return this.#wholeArgs(task, event.seq)
  }

  /**
   * The whole task as it is now, which holds every event handed to the store so far (the run applies an event,
   * then hands it over, in one go): written as of `seq`, the last of them, its history replacing the one written.
   */
  #wholeArgs(task: Task, seq: number): string[] {
    const json = withoutHistory(task)
    this.#remember(task.id, { history: task.history.length, json: json.length, added: 0, seq, whole: false })
    const messages = task.history.map((message) => JSON.stringify(message))
    return [json, String(seq), headOf(task), '1', String(messages.length), ...messages]
  }

  #remember(taskId: string, written: Written): void {
    if (this.#written.size >= MAX_WRITTEN && !this.#written.has(taskId))
      this.#written.delete(this.#written.keys().next().value!)
    this.#written.set(taskId, written)
  }

  /**
   * The task as written, with what was added since folded in, and the number of its last event; with `owner`, only
   * when it is that owner's (checked by the script, before it reads the task).
   */
  async #read(taskId: string, owner?: string): Promise<{ task: Task; seq: number } | undefined> {
    const found = (await this.#connection.run((redis) =>
      runScript(redis, 'a2aRead', 2, this.keys.task(taskId), this.keys.entries(taskId), readerArg(owner)),
    )) as ReadReply
    // Another owner's task answers as one that does not exist.
    if (!found) return undefined
    const [json, seq, entries, history] = found
    return { task: folded(json, entries, history), seq: entries.length ? seqOf(entries.at(-1)![0]) : Number(seq) }
  }

  async events(taskId: string, afterSeq?: number): Promise<TaskEvent[] | undefined> {
    const [state, kept, entries] = await storeCall(this, 'redis', 'events', taskId, () =>
      this.#connection.run(async (redis) => {
        const results = await redis
          .multi()
          .hmget(this.keys.task(taskId), 'state', 'kept')
          .xrange(this.keys.entries(taskId), `${Math.max(0, Math.floor(afterSeq ?? 0)) + 1}-0`, '+')
          .exec()
        const [state, kept] = results![0]![1] as Array<string | null>
        return [state, Number(kept ?? 0), results![1]![1] as StreamEntry[]] as const
      }),
    )
    if (state === null) return undefined
    // Events up to `kept` may be missing (one could not be written): a resume from before them is refused.
    if (afterSeq !== undefined && afterSeq < kept) return undefined
    const events: TaskEvent[] = []
    for (const [id, fields] of entries)
      if (fields[0] === 'e' && seqOf(id) > kept) events.push(JSON.parse(fields[1]!) as TaskEvent)
    return events
  }

  async lastSeq(taskId: string): Promise<number | undefined> {
    const seq = await storeCall(this, 'redis', 'lastSeq', taskId, () =>
      this.#connection.run((redis) =>
        runScript(redis, 'a2aLastSeq', 2, this.keys.task(taskId), this.keys.entries(taskId)),
      ),
    )
    return seq === null ? undefined : Number(seq)
  }

  snapshot(taskId: string, owner?: string): Promise<{ task: Task; seq: number } | undefined> {
    return storeCall(this, 'redis', 'snapshot', taskId, () => this.#read(taskId, owner))
  }

  /**
   * A page from the index the filters pick: costs the page, not the number of tasks. With `historyLength` or
   * `includeArtifacts: false` (ListTasks passes them: what its answer shows of each task) only that is read of
   * each task: its head (status, metadata), its newest messages, its artifacts when asked; a page then costs
   * what it answers, not the size of its tasks. Tasks are read a few at a time, so one listing of large tasks
   * does not hold every other request on the connection behind it. With `owner`, the owner's own sets of the index
   * (every task is filed under its owner's too): a page costs the same however many tasks other owners have.
   */
  async list(query: TaskQuery & ListView): Promise<TaskPage> {
    const { contextId, state, owner } = query
    const index =
      owner !== undefined
        ? this.keys.byOwner(owner, { contextId, state })
        : contextId !== undefined
          ? state !== undefined
            ? this.keys.byContextState(contextId, state)
            : this.keys.byContext(contextId)
          : state !== undefined
            ? this.keys.byState(state)
            : this.keys.all
    const min = query.updatedAfter === undefined ? '-inf' : String(Date.parse(query.updatedAfter))
    const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
    if (query.cursor !== undefined && !cursor)
      throw new InvalidParamsError('the page token is not one from a previous page')
    const view = viewOf(query)
    return storeCall(this, 'redis', 'list', undefined, () => this.#list(query, index, min, cursor, view))
  }

  #list(
    query: TaskQuery & ListView,
    index: string,
    min: string,
    start: ReturnType<typeof decodeCursor>,
    view: ReturnType<typeof viewOf>,
  ): Promise<TaskPage> {
    const { owner } = query
    let cursor = start
    return this.#connection.run(async (redis) => {
      const tasks: Task[] = []
      let total = 0
      let more = false
      // Tasks that expired leave their ids in the indexes until a sweep: skipped (and tidied), the page refilled.
      for (let round = 0; round < 8 && tasks.length < query.limit; round++) {
        const wanted = query.limit - tasks.length
        const reply = (await runScript(
          redis,
          'a2aPage',
          1,
          index,
          wanted,
          min,
          cursor ? String(Date.parse(cursor.status.timestamp)) : '',
          cursor?.id ?? '',
        )) as string[]
        total = Number(reply[0])
        const ids: string[] = []
        const scores: string[] = []
        for (let i = 1; i < reply.length; i += 2) {
          ids.push(reply[i]!)
          scores.push(reply[i + 1]!)
        }
        more = ids.length > wanted
        const page = ids.slice(0, wanted)
        const read: Array<Task | undefined | typeof ANOTHERS> = []
        for (let at = 0; at < page.length; at += LIST_BATCH) {
          const batch = page.slice(at, at + LIST_BATCH)
          read.push(
            ...(await Promise.all(
              batch.map((id) => (view ? this.#readView(redis, id, view, owner) : this.#readTask(redis, id, owner))),
            )),
          )
        }
        const gone = page.filter((_, at) => !read[at])
        // Never filed under another owner's sets (CREATE writes the owner with the task and files it under it):
        // skipped all the same, and left where it is (it is not gone).
        const skipped = gone.length + read.filter((found) => found === ANOTHERS).length
        for (const found of read) if (found && found !== ANOTHERS) tasks.push(found)
        if (page.length)
          cursor = {
            id: page.at(-1)!,
            status: { state: 'completed', timestamp: new Date(Number(scores[page.length - 1])).toISOString() },
          }
        if (!skipped) break
        if (gone.length) await this.#unindex(redis, gone)
        total -= skipped
        if (!more) break
      }
      // The position in the index, not the task's status now (it may have moved since the index was read).
      return { tasks, total, ...(more && cursor && { nextCursor: encodeCursor(cursor) }) }
    })
  }

  /** The whole task, on a connection already taken (see `#read`); `ANOTHERS` when it is not `owner`'s. */
  async #readTask(redis: RedisClient, taskId: string, owner?: string): Promise<Task | undefined | typeof ANOTHERS> {
    const found = (await runScript(
      redis,
      'a2aRead',
      2,
      this.keys.task(taskId),
      this.keys.entries(taskId),
      readerArg(owner),
    )) as ReadReply
    if (found === 0) return ANOTHERS
    return found ? folded(found[0], found[2], found[3]) : undefined
  }

  /**
   * What a listing shows of a task, read alone (see LIST_READ): history and artifacts only as far as `view` asks;
   * `ANOTHERS` when it is not `owner`'s.
   */
  async #readView(
    redis: RedisClient,
    taskId: string,
    view: Required<ListView>,
    owner: string | undefined,
  ): Promise<Task | undefined | typeof ANOTHERS> {
    const history = view.historyLength === Number.POSITIVE_INFINITY ? 'all' : String(view.historyLength)
    const found = (await runScript(
      redis,
      'a2aListRead',
      2,
      this.keys.task(taskId),
      this.keys.entries(taskId),
      history,
      view.includeArtifacts ? 1 : 0,
      readerArg(owner),
    )) as [1, string, string, StreamEntry[]] | [2, string, string[], string?, string?, StreamEntry[]?] | 0 | null
    if (found === 0) return ANOTHERS
    if (!found) return undefined
    let task: Task
    if (found[0] === 1) {
      // Written by the earlier layout (the history in its json): read whole, then cut to the view.
      task = folded(found[1], found[3])
      task.history = view.historyLength === 0 ? [] : task.history.slice(-view.historyLength)
    } else {
      const [, head, messages, json, , entries] = found
      task = json === undefined ? (JSON.parse(head) as Task) : folded(json, entries ?? [], [])
      task.history = parsedMessages(messages)
    }
    if (!view.includeArtifacts) task.artifacts = []
    return task
  }

  /** Files the task in the indexes under its status now; `owner` as INDEX takes it. Answers INDEX's answer. */
  #index(redis: RedisClient, task: Task, owner: string): Promise<unknown> {
    return runScript(redis, 'a2aIndex', 7, ...this.#indexKeys(task), ...this.#indexArgs(task), owner)
  }

  /**
   * Files the task again under its status now, on Redis Cluster (where APPEND cannot): under the owner the index
   * holds. A task a listing took out of the index before its CREATE landed (see `create`) has none there: its owner
   * is read from its hash then, and it is filed again under it.
   */
  async #refile(redis: RedisClient, task: Task): Promise<void> {
    if ((await this.#index(redis, task, '?')) !== UNFILED) return
    const owner = await redis.hget(this.keys.task(task.id), 'owner')
    await this.#index(redis, task, ownerArg(owner ?? undefined))
  }

  /** INDEX's keys for the task under its status now. */
  #indexKeys(task: Task): string[] {
    const { contextId } = task
    const { state } = task.status
    const keys = this.keys
    return [
      keys.all,
      keys.indexed,
      keys.running,
      keys.byState(state),
      keys.byContext(contextId),
      keys.byContextState(contextId, state),
      keys.owners,
    ]
  }

  /** INDEX's arguments for the task under its status now. */
  #indexArgs(task: Task): Array<string | number> {
    const { state, timestamp } = task.status
    return [task.id, state, task.contextId, Date.parse(timestamp), isSettled(state) ? 1 : 0, this.keys.index]
  }

  async #unindex(redis: RedisClient, taskIds: string[]): Promise<void> {
    const keys = this.keys
    await runScript(redis, 'a2aUnindex', 4, keys.all, keys.indexed, keys.running, keys.owners, keys.index, ...taskIds)
  }

  /**
   * Takes the tasks that expired out of the indexes, oldest status first; runs on a timer, never twice at
   * once (a lock in Redis keeps other instances' sweeps apart too). Callable for tests and tools.
   */
  async sweep(now = Date.now()): Promise<void> {
    if (this.#sweeping || !this.#connection.ready) return
    this.#sweeping = true
    const token = newId()
    const lockMs = Math.max(this.#timeoutMs * 4, 10_000)
    try {
      if ((await this.#connection.client.set(this.keys.sweepLock, token, 'PX', lockMs, 'NX')) !== 'OK') return
      try {
        for (let start = 0; ; ) {
          const ids = await this.#connection.client.zrangebyscore(
            this.keys.all,
            '-inf',
            now - this.ttlMs,
            'LIMIT',
            start,
            SWEEP_BATCH,
          )
          if (!ids.length) return
          const present = await Promise.all(ids.map((id) => this.#connection.client.exists(this.keys.task(id))))
          const gone = ids.filter((_, at) => present[at] === 0)
          if (gone.length) await this.#unindex(this.#connection.client, gone)
          if (ids.length < SWEEP_BATCH) return
          start += ids.length - gone.length
          await runScript(this.#connection.client, 'a2aRenew', 1, this.keys.sweepLock, token, lockMs)
        }
      } finally {
        await runScript(this.#connection.client, 'a2aRelease', 1, this.keys.sweepLock, token).catch(noop)
      }
    } finally {
      this.#sweeping = false
    }
  }

  /**
   * Webhooks in a hash per task, shared by the instances; they expire with their task. Sealed with `pushConfigKey`
   * when one is set (see `_sealed-configs.ts`).
   */
  readonly pushConfigs: PushConfigStore = {
    save: async (config) => {
      const saved = await storeCall(this, 'redis', 'pushConfigs.save', config.taskId, () =>
        this.#connection.run((redis) =>
          runScript(
            redis,
            'a2aSavePush',
            2,
            this.keys.task(config.taskId),
            this.keys.push(config.taskId),
            config.id,
            sealConfig(JSON.stringify(config), this.#pushConfigKey),
          ),
        ),
      )
      if (saved === 0) throw new TaskNotFoundError(config.taskId)
    },
    list: async (taskId) => {
      const read = () => this.#connection.run((redis) => redis.hvals(this.keys.push(taskId)))
      const entries = await storeCall(this, 'redis', 'pushConfigs.list', taskId, read)
      return entries.map((stored) => JSON.parse(openConfig(stored, this.#pushConfigKey)) as PushConfig)
    },
    delete: async (taskId, id) => {
      const remove = () => this.#connection.run((redis) => redis.hdel(this.keys.push(taskId), id))
      return (await storeCall(this, 'redis', 'pushConfigs.delete', taskId, remove)) > 0
    },
  }

  /** One PING: `/readyz` asks whether Redis answers now (fails at once while the connection is down). */
  async reachable(): Promise<void> {
    await this.#connection.run((redis) => redis.ping())
  }

  async close(): Promise<void> {
    this.#connection.markClosed()
    for (const timer of this.#timers) clearInterval(timer)
    await this.#leases.releaseAll()
    this.#connection.disconnect()
  }

  // --- tasks whose instance stopped ------------------------------------------------------------------------

  /** Fails the tasks whose instance died: still running in Redis, with no live lease, for a whole lease. */
  async #failLostTasks(): Promise<void> {
    // One check at a time: a slow one (many running tasks, a slow Redis) must not be joined by the next.
    if (!this.#connection.ready || this.#checkingLost) return
    this.#checkingLost = true
    try {
      const running = await this.#connection.client.smembers(this.keys.running)
      for (const taskId of running) {
        if (this.#leases.holds(taskId)) continue
        if (await this.#connection.client.exists(this.keys.lease(taskId))) continue
        const seen = await this.get(taskId)
        if (!seen) {
          await this.#unindex(this.#connection.client, [taskId])
          continue
        }
        // A task that has just been created or resumed may not have its lease yet: give it one lease.
        if (isSettled(seen.status.state) || Date.now() - Date.parse(seen.status.timestamp) < this.leaseMs) continue
        if (!(await this.#leases.claim(taskId))) continue
        try {
          // Read again now that it is held here: it may have moved on before the claim.
          const task = await this.get(taskId)
          if (!task || isSettled(task.status.state)) continue
          const seq = ((await this.lastSeq(taskId)) ?? 0) + 1
          const failed = failWithReason(task, LOST_REASON, seq)
          // The instance that died may have sent events it never wrote: the log is kept only from this one.
          await this.#append(task, failed, seq - 1)
          this.#logger?.warn(
            `Task ${taskId} lost the instance that ran it (no lease for ${this.leaseMs} ms); it is failed`,
          )
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

  /** Past `maxTasks`, removes the oldest settled tasks. */
  async #trim(): Promise<void> {
    const keys = this.keys
    const excess = (await this.#connection.client.zcard(keys.all)) - this.maxTasks
    if (excess <= 0) return
    const oldest = await this.#connection.client.zrange(keys.all, 0, excess + Math.floor(this.maxTasks / 64))
    const running = await this.#connection.client.smismember(keys.running, ...oldest)
    const settled = oldest.filter((_, at) => running[at] === 0)
    if (!settled.length) return
    await this.#unindex(this.#connection.client, settled)
    // Each task's keys share a slot: one DEL per task.
    await Promise.all(settled.map((taskId) => this.#connection.client.del(...keys.taskKeys(taskId))))
  }
}

/** What an instance has written of a task (see `#written`). */
interface Written {
  /** Messages of the history already in Redis. */
  history: number
  /** Characters of the task's json as last written. */
  json: number
  /** Characters of the entries added since. */
  added: number
  /** The last event handed to the store for this task. */
  seq: number
  /** A write did not land: the next one is whole. */
  whole: boolean
}

/**
 * What ListTasks shows of each task (its `historyLength` and `includeArtifacts`), given with the query: the
 * Redis store then reads only that. Without them (or with `includeArtifacts` true and no `historyLength`) a
 * listing answers whole tasks.
 */
interface ListView {
  /** The newest messages of the history kept; 0 none. Default: all. */
  historyLength?: number
  /** Default `true`. */
  includeArtifacts?: boolean
}

/** What a listing's read of a task answers for a task of another owner than the one listing. */
const ANOTHERS = Symbol('another owner')
/** What INDEX answers when asked to keep the owner of a task the index does not hold (see `#refile`). */
const UNFILED = 2

/** The owner as CREATE and INDEX take it: '+<owner>', or '-' for a task nobody owns. */
const ownerArg = (owner: string | undefined): string => (owner === undefined ? '-' : `+${owner}`)

/** Whose task a read answers, as READ and LIST_READ take it: '' any (the runtime's own read), '+<owner>' theirs. */
const readerArg = (owner: string | undefined): string => (owner === undefined ? '' : `+${owner}`)

/** Tasks read per round trip of a listing (pipelined together). */
const LIST_BATCH = 10

/** The view a listing asks for, or `undefined` for whole tasks. */
function viewOf(query: ListView): Required<ListView> | undefined {
  const { historyLength, includeArtifacts } = query
  const cut = historyLength !== undefined && Number.isInteger(historyLength) && historyLength >= 0
  if (!cut && includeArtifacts !== false) return undefined
  return { historyLength: cut ? historyLength : Number.POSITIVE_INFINITY, includeArtifacts: includeArtifacts !== false }
}

/** The task as its json is written (the layout of APPEND): its history is kept apart, one field per message. */
function withoutHistory(task: Task): string {
  return JSON.stringify({ ...task, history: [] })
}

/** The task without history nor artifacts: what a listing that asks for neither reads (see LIST_READ). */
function headOf(task: Task): string {
  return JSON.stringify({ ...task, artifacts: [], history: [] })
}

/**
 * The task from its json and the entries after it; `history` (the layout of APPEND) is its whole history,
 * absent for a task of the earlier layout, whose json and entries hold it.
 */
function folded(json: string, entries: StreamEntry[], history?: string[]): Task {
  const task = JSON.parse(json) as Task
  if (history === undefined) return foldEntries(task, entries.map(toEntry))
  // The messages are in `history` already, the agent's questions too: the events move the rest.
  foldEntries(
    task,
    entries.flatMap((entry) => (entry[1][0] === 'e' ? [toEntry(entry)] : [])),
  )
  task.history = parsedMessages(history)
  return task
}

const parsedMessages = (messages: string[]): Message[] =>
  messages.flatMap((json) => (json ? [JSON.parse(json) as Message] : []))

/** What READ answers (see `_scripts.ts`): nothing, 0 for another owner's task, or the task's parts. */
type ReadReply = [string, string, StreamEntry[], string[]?] | 0 | null

/** A stream entry as Redis returns it: its id (`<seq>-<n>`) and one field, `e` (an event) or `m` (a message). */
type StreamEntry = [string, string[]]

const toEntry = ([, fields]: StreamEntry): TaskEntry =>
  fields[0] === 'e' ? { event: JSON.parse(fields[1]!) as TaskEvent } : { message: JSON.parse(fields[1]!) as Message }

const seqOf = (entryId: string): number => Number(entryId.slice(0, entryId.indexOf('-')))

/** Tasks in Redis for several instances of one agent; see `RedisTaskStore`. */
export function createRedisStore(options: RedisStoreOptions): RedisTaskStore {
  return new RedisTaskStore(options)
}
