import { messageHeapBytes } from '../_heap-bytes.js'
import { heapShare } from '../_heap-limit.js'
import { isTerminal } from '../core/_lifecycle.js'
import { ConfigurationError } from '../errors.js'
import { type Env, processEnv } from '../settings.js'
import type { Task, TaskEvent } from '../types.js'
import { readByteBudget } from './_byte-budget.js'
import { EventLog } from './_event-log.js'
import { pageOf } from './_paging.js'
import { SettledOrder } from './_settled-order.js'
import { eventBytes, eventBytesFrom, ownerBytes, taskBytes, taskGrowthBytes } from './_stored-bytes.js'
import type { TaskPage, TaskQuery, TaskStore } from './task-store.js'

/**
 * What the memory store keeps, by count, bytes and age, so a flood of tasks cannot grow the process without limit.
 * The file and Durable Object stores keep their tasks in memory too, and take the same options.
 */
export interface MemoryStoreOptions {
  /**
   * Where the `A2A_*` budgets not given as options are read from: the process's environment, none where there
   * is no `process`.
   * @default process.env
   */
  env?: Env
  /**
   * Most tasks kept. Past it, the tasks that settled longest ago go first; a task that is running is never
   * removed.
   * @default 10_000
   */
  maxTasks?: number
  /**
   * Most bytes kept: the tasks and their event logs together, in memory (structure included, not as JSON
   * text). Past it, the tasks that settled longest ago go first, as with `maxTasks`; a running task is never
   * removed (when running tasks alone pass it, their event logs shrink). A task larger than the whole budget is
   * still answered to its sender, then not kept (`tasks/get` later: not found). A Durable Object store, whose
   * object has 128 MB of memory, keeps 33,554,432 (32 MiB) without the variable.
   * @default A2A_STORE_MAX_BYTES, else 134_217_728 (128 MiB) or a quarter of the heap limit
   * (`--max-old-space-size`) when that is less
   */
  maxBytes?: number
  /**
   * Most bytes of one task's event log (its newest events, in memory) kept for clients that resume a broken
   * stream with `Last-Event-ID`; a resume from before them is told to get the task.
   * @default A2A_EVENT_LOG_BYTES, else 1_048_576 (1 MiB)
   */
  eventLogBytes?: number
  /**
   * How long a settled task (terminal, or waiting for input) is kept after its last change, in ms.
   * @default 3_600_000 (one hour)
   */
  ttlMs?: number
  /**
   * How many of the most recently ended tasks keep their event log, so a client whose stream broke can
   * resume it with `Last-Event-ID` after the task ended; older ended tasks keep only their final state.
   * @default 1_000
   */
  endedLogs?: number
}

interface Entry {
  task: Task
  /** The `Principal.id` of the caller that created the task; undefined when the agent checks no credentials. */
  owner: string | undefined
  /** The task's newest events; dropped some time after it ends (`endedLogs`), when the task says it all. */
  log: EventLog | undefined
  /** When the task last settled; 0 while it runs. */
  settledAt: number
  /** Its place in the settled order (-1 while it runs). */
  place: number
  /**
   * The task's bytes as counted so far: its JSON at creation, then what each event added (a status replaces
   * the previous one; an artifact chunk adds). Shared with the log's events, so an over-estimate, never under.
   */
  taskBytes: number
  /** Bytes of the status counted in `taskBytes` (the next status replaces them). */
  statusBytes: number
  /** Messages of `task.history` counted (a follow-up joins the history outside any event). */
  historyCounted: number
  /** Its place in the ring of ended tasks that keep their log, or -1. */
  endedSlot: number
  /** The entries of the task's context are linked through these (see `#byContext`). */
  previousInContext: Entry | undefined
  nextInContext: Entry | undefined
}

export const DEFAULT_MAX_TASKS = 10_000
export const DEFAULT_TTL_MS = 60 * 60 * 1000
const DEFAULT_ENDED_LOGS = 1000
/** The store's default budget: this, or a quarter of the heap limit when that is less (`_heap-limit.ts`). */
export const DEFAULT_STORE_MAX_BYTES = 128 * 1024 * 1024
export const DEFAULT_EVENT_LOG_BYTES = 1024 * 1024
/** What a running task's event log keeps when the store is short of room: its newest few events. */
const SHRUNK_LOG_BYTES = 16 * 1024

/**
 * The embedded default store: tasks in a Map, bounded by count, bytes and age so a flood of tasks cannot grow
 * the process without limit. It keeps the task objects the runtime hands it (no copies) and counts their
 * bytes as they grow, event by event (never the whole task again).
 */
export class MemoryTaskStore implements TaskStore {
  readonly keepsOwners = true
  readonly maxTasks: number
  readonly maxBytes: number
  readonly eventLogBytes: number
  readonly ttlMs: number
  readonly endedLogs: number
  readonly #entries = new Map<string, Entry>()
  // The first entry of each context, the others linked from it: a context's page (ListTasks by contextId, an
  // agent reading its conversation) costs the context's size, not the store's. A list in the entries rather than
  // a Set per context: most contexts hold one task, which then costs one Map entry and no Set. Built on the first
  // list by context and kept from then on: a store nobody asks by context (most) never pays for it.
  readonly #byContext = new Map<string, Entry>()
  #contextsIndexed = false
  // The settled tasks in the order they settled, oldest first: retention walks it from the front, and every
  // task it visits goes, so evicting costs O(1) per task however many tasks are running.
  readonly #settled = new SettledOrder<Entry>()
  #bytes = 0
  // The store's bytes after the last walk that shrank the running tasks' logs (see `#shrinkRunningLogs`).
  #logsShrunkAt = Number.NEGATIVE_INFINITY
  readonly #sweeper: ReturnType<typeof setInterval>
  // The last `endedLogs` tasks to end, a ring of their entries: the one overwritten loses its log. An entry knows
  // its slot (`endedSlot`), so a task that goes leaves the ring at once and the ring never holds a task retention
  // dropped, nor looks one up.
  readonly #ended: Array<Entry | undefined>
  #endedNext = 0

  readonly #removed: ((taskId: string) => void) | undefined

  /** `removed` (for stores built on this one) hears of each task that retention drops. */
  constructor(options: MemoryStoreOptions = {}, removed?: (taskId: string) => void) {
    this.#removed = removed
    this.maxTasks = positive(options.maxTasks, DEFAULT_MAX_TASKS, 'maxTasks')
    const env = options.env ?? processEnv()
    this.maxBytes = readByteBudget(
      options.maxBytes,
      'maxBytes',
      'A2A_STORE_MAX_BYTES',
      heapShare(DEFAULT_STORE_MAX_BYTES),
      env,
    )
    this.eventLogBytes = readByteBudget(
      options.eventLogBytes,
      'eventLogBytes',
      'A2A_EVENT_LOG_BYTES',
      DEFAULT_EVENT_LOG_BYTES,
      env,
    )
    this.ttlMs = positive(options.ttlMs, DEFAULT_TTL_MS, 'ttlMs')
    this.endedLogs = options.endedLogs === 0 ? 0 : positive(options.endedLogs, DEFAULT_ENDED_LOGS, 'endedLogs')
    this.#ended = new Array(this.endedLogs)
    this.#sweeper = setInterval(() => this.sweep(), Math.min(this.ttlMs, 60_000))
    this.#sweeper.unref()
  }

  get size(): number {
    return this.#entries.size
  }

  /** Bytes held now (tasks and event logs, as counted). */
  get bytes(): number {
    return this.#bytes
  }

  /** Whether the task is kept now (retention may have let it go). */
  has(taskId: string): boolean {
    return this.#entries.has(taskId)
  }

  get(taskId: string, owner?: string): Task | undefined {
    const entry = this.#entries.get(taskId)
    // Another owner's task answers as one that does not exist (and is not swept on that caller's behalf).
    if (!entry || (owner !== undefined && entry.owner !== owner)) return undefined
    if (entry.settledAt && Date.now() - entry.settledAt > this.ttlMs) {
      this.#drop(taskId, entry)
      return undefined
    }
    return entry.task
  }

  create(task: Task, owner?: string): void {
    this.#put(task, owner, new EventLog(this.eventLogBytes, eventBytes), 0)
    this.#keepWithinBudget()
  }

  append(task: Task, event: TaskEvent): void {
    const entry = this.#entries.get(task.id)
    if (!entry) return
    entry.task = task
    const growth = taskGrowthBytes(event)
    let added = this.#historyGrowth(entry, task)
    if (event.kind === 'artifact-update') added += growth
    else {
      added += growth - entry.statusBytes
      entry.statusBytes = growth
    }
    entry.taskBytes += added
    if (entry.log) added += entry.log.push(event, eventBytesFrom(event, growth))
    this.#bytes += added
    if (event.kind === 'status-update' && event.final) this.#settle(task.id, entry, isTerminal(event.status.state))
    else if (entry.settledAt) {
      // A follow-up resumed the task: it runs again, and retention leaves it alone until it settles.
      entry.settledAt = 0
      this.#settled.remove(entry)
    }
    this.#keepWithinBudget()
  }

  /**
   * Without `afterSeq`, the events kept (the newest `eventLogBytes` of them). With it, the events after it,
   * or `undefined` when some of those are no longer kept (older than the window) or the log was dropped.
   */
  events(taskId: string, afterSeq?: number): TaskEvent[] | undefined {
    const log = this.#entries.get(taskId)?.log
    if (!log) return undefined
    return afterSeq === undefined ? log.all() : log.after(Math.max(0, afterSeq))
  }

  /** The number of the task's last event, while its log is kept (`undefined` once dropped): O(1). */
  lastSeq(taskId: string): number | undefined {
    return this.#entries.get(taskId)?.log?.lastSeq
  }

  /** Every event of the task after this number is in its log (0: none was dropped yet). */
  keptAfter(taskId: string): number {
    return this.#entries.get(taskId)?.log?.keptAfter ?? 0
  }

  /** When the task last settled (ms since the epoch); 0 while it runs or once it is not kept. */
  settledAt(taskId: string): number {
    return this.#entries.get(taskId)?.settledAt ?? 0
  }

  list(query: TaskQuery): TaskPage {
    const { owner } = query
    const tasks: Task[] = []
    if (query.contextId === undefined) {
      for (const entry of this.#entries.values())
        if (owner === undefined || entry.owner === owner) tasks.push(entry.task)
      return pageOf(tasks, query)
    }
    if (!this.#contextsIndexed) {
      this.#contextsIndexed = true
      for (const entry of this.#entries.values()) this.#link(entry)
    }
    for (let entry = this.#byContext.get(query.contextId); entry; entry = entry.nextInContext)
      if (owner === undefined || entry.owner === owner) tasks.push(entry.task)
    return pageOf(tasks, query)
  }

  /** The `Principal.id` the task was created by (undefined: created without one, or not kept). */
  ownerOf(taskId: string): string | undefined {
    return this.#entries.get(taskId)?.owner
  }

  /** Removes settled tasks older than the time-to-live. Runs on a timer; callable for tests and tools. */
  sweep(now = Date.now()): void {
    // Settled entries sit in the order they settled, so the first young one ends the walk.
    for (let entry = this.#settled.first(); entry && now - entry.settledAt > this.ttlMs; entry = this.#settled.first())
      this.#evict(entry)
  }

  /**
   * Puts back a task read from elsewhere (a durable store's files at start): `settledAt` 0 for a running
   * task. Call in the order the tasks settled, oldest first, so retention drops the oldest first. `owner` as
   * `create` was given it.
   */
  restore(
    task: Task,
    events: TaskEvent[] | undefined,
    settledAt: number,
    keptAfter = 0,
    owner: string | undefined = undefined,
  ): void {
    const log = events && new EventLog(this.eventLogBytes, eventBytes, events, keptAfter)
    const entry = this.#put(task, owner, log, settledAt)
    if (settledAt) this.#settle(task.id, entry, Boolean(log) && isTerminal(task.status.state), settledAt)
    this.#keepWithinBudget()
  }

  /** Drops a task at once (a durable store whose write of it failed). */
  forget(taskId: string): void {
    const entry = this.#entries.get(taskId)
    if (entry) this.#drop(taskId, entry, false)
  }

  close(): void {
    clearInterval(this.#sweeper)
  }

  #historyGrowth(entry: Entry, task: Task): number {
    const history = task.history
    // Another part of the runtime may have shortened the history: count from where it is now.
    if (entry.historyCounted > history.length) entry.historyCounted = history.length
    let bytes = 0
    while (entry.historyCounted < history.length) bytes += messageHeapBytes(history[entry.historyCounted++]!)
    return bytes
  }

  #settle(taskId: string, entry: Entry, ended: boolean, at = Date.now()): void {
    // To the end: retention walks from the front, oldest settled first. A running task is not in the walk.
    entry.settledAt = at
    this.#settled.push(entry)
    if (ended && entry.log) this.#keepEndedLog(entry)
    // Too large to keep whatever else goes: its sender has had the answer; later reads find nothing.
    if (entry.taskBytes + (entry.log?.bytes ?? 0) > this.maxBytes) this.#drop(taskId, entry)
  }

  #keepEndedLog(entry: Entry): void {
    if (this.endedLogs === 0) {
      this.#dropLog(entry)
      return
    }
    const slot = this.#endedNext
    const oldest = this.#ended[slot]
    if (oldest) {
      oldest.endedSlot = -1
      this.#dropLog(oldest)
    }
    if (entry.endedSlot >= 0) this.#ended[entry.endedSlot] = undefined // ended again (after a follow-up): one slot
    this.#ended[slot] = entry
    entry.endedSlot = slot
    this.#endedNext = (slot + 1) % this.endedLogs
  }

  #dropLog(entry: Entry): void {
    if (!entry.log) return
    this.#bytes -= entry.log.bytes
    entry.log = undefined
  }

  #drop(taskId: string, entry: Entry, tell = true): void {
    if (this.#entries.get(taskId) !== entry) return
    this.#remove(taskId, entry, tell)
  }

  /** Drops the entry retention visits: the one at the front of the settled order, known to be kept. */
  #evict(entry: Entry): void {
    this.#remove(entry.task.id, entry, true)
  }

  /**
   * Keeps `task` (in place of an entry of the same id) and counts its bytes; the caller settles it and applies
   * retention.
   */
  #put(task: Task, owner: string | undefined, log: EventLog | undefined, settledAt: number): Entry {
    const entry: Entry = {
      task,
      owner,
      log,
      settledAt,
      place: -1,
      taskBytes: taskBytes(task) + ownerBytes(owner),
      statusBytes: 0,
      historyCounted: task.history.length,
      previousInContext: undefined,
      nextInContext: undefined,
      endedSlot: -1,
    }
    const replaced = this.#entries.get(task.id)
    if (replaced) this.#drop(task.id, replaced, false)
    this.#add(entry)
    this.#bytes += entry.taskBytes + (log?.bytes ?? 0)
    return entry
  }

  #add(entry: Entry): void {
    this.#entries.set(entry.task.id, entry)
    if (this.#contextsIndexed) this.#link(entry)
  }

  /** Into its context's list: second when the context has a first, so the Map is left as it is. */
  #link(entry: Entry): void {
    const { contextId } = entry.task
    const first = this.#byContext.get(contextId)
    if (first === undefined) this.#byContext.set(contextId, entry)
    else {
      const next = first.nextInContext
      entry.previousInContext = first
      entry.nextInContext = next
      if (next) next.previousInContext = entry
      first.nextInContext = entry
    }
  }

  #remove(taskId: string, entry: Entry, tell: boolean): void {
    this.#entries.delete(taskId)
    if (entry.endedSlot >= 0) {
      this.#ended[entry.endedSlot] = undefined
      entry.endedSlot = -1
    }
    if (this.#contextsIndexed) this.#unlink(entry)
    this.#settled.remove(entry)
    this.#bytes -= entry.taskBytes + (entry.log?.bytes ?? 0)
    if (tell) this.#removed?.(taskId)
  }

  #unlink(entry: Entry): void {
    const { previousInContext: previous, nextInContext: next } = entry
    if (previous) previous.nextInContext = next
    else if (next) this.#byContext.set(entry.task.contextId, next)
    else this.#byContext.delete(entry.task.contextId)
    if (next) next.previousInContext = previous
    // A removed entry holds no others (a stale place in the settled order may still hold it).
    entry.previousInContext = undefined
    entry.nextInContext = undefined
  }

  /**
   * Past either budget, drops the tasks that settled longest ago, a little below the budget, so a flood pays
   * one walk per batch rather than per task. Running tasks are not in the walk: they never go.
   */
  #keepWithinBudget(): void {
    const overCount = this.#entries.size > this.maxTasks
    const overBytes = this.#bytes > this.maxBytes
    if (!overCount && !overBytes) return
    const countTarget = overCount ? this.maxTasks - Math.floor(this.maxTasks / 64) : this.maxTasks
    const byteTarget = overBytes ? this.maxBytes - Math.floor(this.maxBytes / 16) : this.maxBytes
    for (let entry = this.#settled.first(); entry; entry = this.#settled.first()) {
      if (this.#entries.size <= countTarget && this.#bytes <= byteTarget) return
      this.#evict(entry)
    }
    if (this.#bytes > byteTarget) this.#shrinkRunningLogs(byteTarget)
  }

  /**
   * Nothing settled is left to drop, and the running tasks hold more than the budget: their event logs (kept for
   * clients that resume a broken stream) give way, down to their newest few events each. The tasks themselves are
   * bounded by maxRunningBytes; their logs, a window of events each, are not, and a thousand running tasks
   * streaming word by word would otherwise hold a thousand windows. A walk over the running tasks frees at least
   * a sixteenth of the budget, or is not walked again until the store has grown by that much.
   */
  #shrinkRunningLogs(target: number): void {
    // Tasks settled and went since: growth counts from here.
    if (this.#bytes < this.#logsShrunkAt) this.#logsShrunkAt = this.#bytes
    if (this.#bytes < this.#logsShrunkAt + Math.floor(this.maxBytes / 16)) return
    for (const entry of this.#entries.values()) {
      if (this.#bytes <= target) break
      if (entry.log && entry.log.bytes > SHRUNK_LOG_BYTES) this.#bytes -= entry.log.shrinkTo(SHRUNK_LOG_BYTES)
    }
    this.#logsShrunkAt = this.#bytes
  }
}

/** The in-memory store with a retention policy; see `MemoryStoreOptions` for the defaults. */
export function createMemoryStore(options?: MemoryStoreOptions): MemoryTaskStore {
  return new MemoryTaskStore(options)
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (!Number.isFinite(value) || value <= 0)
    throw new ConfigurationError(`${name} (memory store) must be a positive number (got ${value})`)
  return value
}
