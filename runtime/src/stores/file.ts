import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { isSettled, isTerminal } from '../core/_lifecycle.js'
import { isoNow } from '../core/_clock.js'
import { newId } from '../core/_ids.js'
import type { Logger } from '../_logger.js'
import type { Task, TaskEvent } from '../types.js'
import type { TaskPage, TaskQuery, TaskStore } from './_store.js'
import { DirectoryLock } from './_dir-lock.js'
import { FLUSH_BYTES, TaskJournal } from './_journal.js'
import { journalName, snapshotJson, snapshotName } from './_task-files.js'
import { type RestoredTask, restoreTasks } from './_task-restore.js'
import { MemoryTaskStore, type MemoryStoreOptions } from './memory.js'

export interface FileStoreOptions extends MemoryStoreOptions {
  /**
   * The directory that holds the tasks (created when missing). One server process per directory: a second one
   * refuses to start (a `ConfigurationError` naming the process that holds it).
   */
  dir: string
  /** Where start-up repairs are reported. Default: silent. */
  logger?: Pick<Logger, 'warn'>
}

export const STOPPED_REASON = 'The server stopped before the task finished'
const REPAIR_GAP = 2 ** 20
const noop = (): void => {}

/**
 * The embedded durable store: every task in files under `dir/tasks/`, with no server to run. Tasks are served
 * from memory (the same retention as the memory store, by count, bytes and age: a task it lets go has its files
 * deleted, so the directory holds what memory holds).
 *
 * A task is written when it is created and each time it settles (terminal, or waiting for input): a settle
 * appends what the task gained since its last write (the turn's events, a follow-up message) to the task's
 * journal and fsyncs it; the whole task is written again as a snapshot (atomically: temporary file, fsync,
 * rename) only once the journal outweighs the last snapshot, and when the task ends, so an ended task is one
 * file and the bytes written stay proportional to the bytes added (see `TaskJournal`). A crash mid-write leaves
 * what was confirmed before it and never touches another task's files. A `message/send` that answers
 * "completed" has its task on disk first.
 *
 * At start it reads every task back (snapshot, then journal); a task the previous process left running is
 * failed with a reason (the agent code that ran it is gone), so no task stays `working` forever.
 */
export class FileTaskStore implements TaskStore {
  readonly dir: string
  readonly #memory: MemoryTaskStore
  readonly #tasksDir: string
  readonly #lock: DirectoryLock
  // Every task the store holds has one: what its files hold, and its writes in order.
  readonly #journals = new Map<string, TaskJournal>()
  readonly #pending = new Set<Promise<void>>()
  readonly #logger: FileStoreOptions['logger']

  constructor(options: FileStoreOptions) {
    this.dir = options.dir
    this.#tasksDir = join(options.dir, 'tasks')
    this.#logger = options.logger
    this.#memory = new MemoryTaskStore(options, (taskId) => void this.#remove(taskId))
    let lock: DirectoryLock | undefined
    try {
      mkdirSync(this.#tasksDir, { recursive: true })
      this.#lock = lock = DirectoryLock.take(options.dir)
      this.#load()
    } catch (error) {
      this.#memory.close()
      lock?.release()
      throw error
    }
  }

  get size(): number {
    return this.#memory.size
  }

  /** Bytes its memory copy holds now (tasks and event logs, as counted against `maxBytes`). */
  get bytes(): number {
    return this.#memory.bytes
  }

  get(taskId: string): Task | undefined {
    return this.#memory.get(taskId)
  }

  async create(task: Task): Promise<void> {
    this.#memory.create(task)
    const journal = new TaskJournal(this.#tasksDir, task.id)
    this.#journals.set(task.id, journal)
    try {
      await this.#track(journal.compact(task, (generation) => snapshotJson(task, this.#memory.events(task.id), 0, 0, generation)))
    } catch (error) {
      // Not on disk, so not created: the client gets an error and no task stays behind, forever "submitted".
      this.#memory.forget(task.id)
      this.#journals.delete(task.id)
      throw error
    }
  }

  append(task: Task, event: TaskEvent): Promise<void> | undefined {
    this.#memory.append(task, event)
    // Larger than the whole byte budget, it was let go as it settled (its files are being deleted): not saved.
    if (!this.#memory.has(task.id)) return undefined
    const journal = this.#journalOf(task.id)
    journal.record(task, event)
    if (event.kind === 'status-update' && event.final) {
      const settledAt = Date.now()
      const snapshot = (generation: number) => snapshotJson(task, this.#memory.events(task.id), this.#memory.keptAfter(task.id), settledAt, generation)
      return this.#track(journal.settle(task, settledAt, isTerminal(event.status.state), snapshot))
    }
    if (journal.pendingBytes >= FLUSH_BYTES) {
      const flushed = journal.flush()
      // A failed flush is not reported: the task's next write is then a whole snapshot, and that one is.
      if (flushed) this.#track(flushed).catch(noop)
    }
    return undefined
  }

  events(taskId: string, afterSeq?: number): TaskEvent[] | undefined {
    return this.#memory.events(taskId, afterSeq)
  }

  lastSeq(taskId: string): number | undefined {
    return this.#memory.lastSeq(taskId)
  }

  list(query: TaskQuery): TaskPage {
    return this.#memory.list(query)
  }

  /** Removes settled tasks older than the time-to-live, from memory and disk. */
  sweep(now?: number): void {
    this.#memory.sweep(now)
  }

  /** Waits for the writes in flight (a failed one was reported to its caller), then lets the directory go. */
  async close(): Promise<void> {
    this.#memory.close()
    while (this.#pending.size) await Promise.allSettled(this.#pending)
    this.#lock.release()
  }

  #journalOf(taskId: string): TaskJournal {
    let journal = this.#journals.get(taskId)
    if (!journal) {
      // Unreachable while every held task has one; should it happen, a first snapshot brings the files level.
      journal = new TaskJournal(this.#tasksDir, taskId)
      this.#journals.set(taskId, journal)
    }
    return journal
  }

  /** Deletes a task's files once its writes in flight have landed (a write after would bring them back). */
  #remove(taskId: string): Promise<void> {
    const journal = this.#journals.get(taskId)
    this.#journals.delete(taskId)
    return journal ? this.#track(journal.remove()) : Promise.resolve()
  }

  #track(work: Promise<void>): Promise<void> {
    this.#pending.add(work)
    const done = () => this.#pending.delete(work)
    work.then(done, done)
    return work
  }

  /** Reads the tasks back, oldest settled first; fails what was left running. */
  #load(): void {
    const restored = restoreTasks(this.#tasksDir, this.#logger)
    restored.sort((a, b) => a.settledAt - b.settledAt)
    const now = Date.now()
    const stopped: RestoredTask[] = []
    for (const file of restored) {
      const { task } = file
      if (file.settledAt && now - file.settledAt > this.#memory.ttlMs) {
        rmSync(join(this.#tasksDir, snapshotName(task.id)), { force: true })
        rmSync(join(this.#tasksDir, journalName(task.id, file.generation)), { force: true })
        continue
      }
      // Before the restore: retention may let the task go at once, and its files with it.
      this.#journals.set(task.id, new TaskJournal(this.#tasksDir, task.id, { ...file, historyLength: task.history.length }))
      if (isSettled(task.status.state)) this.#memory.restore(task, file.events, file.settledAt, file.keptAfter)
      else stopped.push(file)
    }
    // Settled now, so they go last: retention walks the oldest settled first.
    for (const file of stopped) {
      const { task, keptAfter } = file
      const was = task.status.state
      const failed = failStopped(task, file.events, keptAfter)
      this.#memory.restore(task, failed, now, keptAfter)
      this.#logger?.warn(`Task store: task ${task.id} was ${was} when the server stopped; it is failed`)
      const journal = this.#journals.get(task.id)
      if (!journal) continue
      this.#track(journal.compact(task, (generation) => snapshotJson(task, failed, keptAfter, now, generation))).catch((error: unknown) => {
        this.#logger?.warn(`Task store: could not save the failure of task ${task.id}: ${(error as Error).message}`)
      })
    }
  }
}

/** Ends a task whose process died: failed with a reason, its log closed by the final event. */
function failStopped(task: Task, events: TaskEvent[] | undefined, keptAfter: number): TaskEvent[] | undefined {
  const status: Task['status'] = {
    state: 'failed',
    timestamp: isoNow(),
    message: { kind: 'message', messageId: newId(), role: 'agent', parts: [{ kind: 'text', text: STOPPED_REASON }], contextId: task.contextId, taskId: task.id },
  }
  task.status = status
  if (!events) return undefined
  // The files hold the events up to the task's last write; the stopped process may have sent more. The repair
  // is numbered past any of those, so a client resuming from one still receives it.
  const seq = (events.at(-1)?.seq ?? keptAfter) + REPAIR_GAP
  events.push({ kind: 'status-update', seq, taskId: task.id, contextId: task.contextId, status, final: true })
  return events
}

/**
 * The durable embedded store: tasks as files under `dir` that survive restarts and crashes; see
 * `FileTaskStore`. Same retention as the memory store.
 */
export function createFileStore(options: FileStoreOptions): FileTaskStore {
  return new FileTaskStore(options)
}
