import type { Task, TaskEvent } from '../types.js'
import { isTerminal } from '../core/_lifecycle.js'
import type { TaskPage, TaskQuery, TaskStore } from './_store.js'
import { pageOf } from './_paging.js'

export interface MemoryStoreOptions {
  /**
   * Most tasks kept. Past it, the tasks that settled longest ago go first; a task that is running is never
   * removed. Default `10000`.
   */
  maxTasks?: number
  /**
   * How long a settled task (terminal, or waiting for input) is kept after its last change, in ms.
   * Default one hour.
   */
  ttlMs?: number
  /**
   * How many of the most recently ended tasks keep their event log, so a client whose stream broke can
   * resume it with `Last-Event-ID` after the task ended; older ended tasks keep only their final state.
   * Default `1000`.
   */
  endedLogs?: number
}

interface Entry {
  task: Task
  /** The task's events; dropped some time after it ends (`endedLogs`), when the task says it all. */
  log: TaskEvent[] | undefined
  /** When the task last settled; 0 while it runs. */
  settledAt: number
}

export const DEFAULT_MAX_TASKS = 10_000
export const DEFAULT_TTL_MS = 60 * 60 * 1000
export const DEFAULT_ENDED_LOGS = 1000

/**
 * The embedded default store: tasks in a Map, bounded by count and age so a flood of tasks cannot grow the
 * process without limit. It keeps the task objects the runtime hands it (no copies).
 */
export class MemoryTaskStore implements TaskStore {
  readonly maxTasks: number
  readonly ttlMs: number
  readonly endedLogs: number
  // Insertion order is the eviction order: a task moves to the end when it settles.
  readonly #entries = new Map<string, Entry>()
  readonly #sweeper: ReturnType<typeof setInterval>
  // The last `endedLogs` tasks to end, a ring: the one overwritten loses its log.
  readonly #ended: Array<string | undefined>
  #endedNext = 0

  readonly #removed: ((taskId: string) => void) | undefined

  /** `removed` (for stores built on this one) hears of each task that retention drops. */
  constructor(options: MemoryStoreOptions = {}, removed?: (taskId: string) => void) {
    this.#removed = removed
    this.maxTasks = positive(options.maxTasks, DEFAULT_MAX_TASKS, 'maxTasks')
    this.ttlMs = positive(options.ttlMs, DEFAULT_TTL_MS, 'ttlMs')
    this.endedLogs = options.endedLogs === 0 ? 0 : positive(options.endedLogs, DEFAULT_ENDED_LOGS, 'endedLogs')
    this.#ended = new Array(this.endedLogs)
    this.#sweeper = setInterval(() => this.sweep(), Math.min(this.ttlMs, 60_000))
    this.#sweeper.unref()
  }

  get size(): number {
    return this.#entries.size
  }

  get(taskId: string): Task | undefined {
    const entry = this.#entries.get(taskId)
    if (!entry) return undefined
    if (entry.settledAt && Date.now() - entry.settledAt > this.ttlMs) {
      this.#entries.delete(taskId)
      this.#removed?.(taskId)
      return undefined
    }
    return entry.task
  }

  create(task: Task): void {
    this.#entries.set(task.id, { task, log: [], settledAt: 0 })
    if (this.#entries.size > this.maxTasks) this.#evictOverflow()
  }

  append(task: Task, event: TaskEvent): void {
    const entry = this.#entries.get(task.id)
    if (!entry) return
    entry.task = task
    if (event.kind === 'artifact-update') {
      entry.log?.push(event)
      return
    }
    if (!event.final) {
      entry.settledAt = 0
      entry.log?.push(event)
      return
    }
    entry.settledAt = Date.now()
    entry.log?.push(event)
    if (isTerminal(event.status.state) && entry.log) this.#keepEndedLog(task.id)
    // Move to the end: eviction walks from the front, oldest settled first.
    this.#entries.delete(task.id)
    this.#entries.set(task.id, entry)
  }

  events(taskId: string, afterSeq = 0): TaskEvent[] | undefined {
    const log = this.#entries.get(taskId)?.log
    if (!log) return undefined
    // Numbers are consecutive (1..n at indexes 0..n-1) unless a repair after a crash jumped past the ones a
    // stopped process may have sent: then look the position up.
    const from = Math.max(0, afterSeq)
    if (from === 0 || log[from - 1]?.seq === from) return log.slice(from)
    return log.filter((event) => event.seq > from)
  }

  list(query: TaskQuery): TaskPage {
    return pageOf(
      Array.from(this.#entries.values(), (entry) => entry.task),
      query,
    )
  }

  /** Removes settled tasks older than the time-to-live. Runs on a timer; callable for tests and tools. */
  sweep(now = Date.now()): void {
    for (const [id, entry] of this.#entries) {
      if (!entry.settledAt) continue
      // Settled entries sit in the order they settled, so the first young one ends the walk.
      if (now - entry.settledAt <= this.ttlMs) break
      this.#entries.delete(id)
      this.#removed?.(id)
    }
  }

  /**
   * Puts back a task read from elsewhere (a durable store's files at start): `settledAt` 0 for a running
   * task. Call in the order the tasks settled, oldest first, so retention drops the oldest first.
   */
  restore(task: Task, log: TaskEvent[] | undefined, settledAt: number): void {
    this.#entries.set(task.id, { task, log, settledAt })
    if (log && isTerminal(task.status.state)) this.#keepEndedLog(task.id)
    if (this.#entries.size > this.maxTasks) this.#evictOverflow()
  }

  #keepEndedLog(taskId: string): void {
    if (this.endedLogs === 0) {
      const entry = this.#entries.get(taskId)
      if (entry) entry.log = undefined
      return
    }
    const oldest = this.#ended[this.#endedNext]
    if (oldest !== undefined) {
      const entry = this.#entries.get(oldest)
      if (entry) entry.log = undefined
    }
    this.#ended[this.#endedNext] = taskId
    this.#endedNext = (this.#endedNext + 1) % this.endedLogs
  }

  /** Drops a task at once (a durable store whose write of it failed). */
  forget(taskId: string): void {
    this.#entries.delete(taskId)
  }

  close(): void {
    clearInterval(this.#sweeper)
  }

  #evictOverflow(): void {
    // Evict a little below the bound: each walk starts at the Map's front, where V8 leaves holes from
    // earlier deletes, so one walk per task would cost more and more under a flood.
    let excess = this.#entries.size - this.maxTasks + Math.floor(this.maxTasks / 64)
    for (const [id, entry] of this.#entries) {
      if (excess <= 0) return
      if (!entry.settledAt) continue
      this.#entries.delete(id)
      this.#removed?.(id)
      excess--
    }
  }
}

/** The in-memory store with a retention policy; see `MemoryStoreOptions` for the defaults. */
export function createMemoryStore(options?: MemoryStoreOptions): MemoryTaskStore {
  return new MemoryTaskStore(options)
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`Memory store: \`${name}\` must be a positive number (got ${value})`)
  return value
}
