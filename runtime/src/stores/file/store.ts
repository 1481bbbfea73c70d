import { existsSync, mkdirSync, readdirSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { isSettled } from '../../core/_lifecycle.js'
import type { Logger } from '../../logger.js'
import { processEnv } from '../../settings.js'
import { storeCall } from '../../telemetry/_store-calls.js'
import type { Task, TaskEvent } from '../../types.js'
import { readByteBudget } from '../_byte-budget.js'
import type { TaskSnapshot } from '../_log-records.js'
import { failStopped } from '../_stopped.js'
import { type MemoryStoreOptions, MemoryTaskStore } from '../memory.js'
import type { TaskPage, TaskQuery, TaskStore } from '../task-store.js'
import { DirectoryLock } from './_dir-lock.js'
import { type IndexedTask, indexLog, type LogIndex, plannedBytes, planRestore, readTaskBack } from './_log-restore.js'
import { nothingWritten, SegmentWriter } from './_segment-writer.js'
import { holdsNothing, listSegments, SegmentReader, segmentPath } from './_segments.js'
import { FLUSH_BYTES, type LiveBytes, TaskLog } from './_task-log.js'

/** Where the file store keeps its log, and the memory store's options for what it keeps of it. */
export interface FileStoreOptions extends MemoryStoreOptions {
  /**
   * The directory that holds the tasks (created when missing). One server process per directory: a second one
   * refuses to start (a `ConfigurationError` naming the process that holds it).
   */
  dir: string
  /**
   * The size past which the log begins a new segment file, in bytes.
   * @default A2A_STORE_SEGMENT_BYTES, else 8_388_608 (8 MiB)
   */
  segmentBytes?: number
  /**
   * Where start-up repairs and a full disk are reported.
   * @default undefined (silent)
   */
  logger?: Pick<Logger, 'warn'>
}

const DEFAULT_SEGMENT_BYTES = 8 * 1024 * 1024
// The tasks dropped at start that the warning names (the newest of them); the others are counted.
const DROPPED_NAMED = 10
const noop = (): void => {}

/**
 * The embedded durable store: every task in a log under `dir/log/`, with no server to run. Tasks are served
 * from memory (the same retention as the memory store, by count, bytes and age).
 *
 * The log is a series of segment files of JSON lines, appended to by one writer with group commit: a task is
 * written when it is created (a snapshot: the whole task) and each time it settles (terminal, or waiting for
 * input: what it gained since, its events and follow-up messages, or a new snapshot once those would outweigh
 * the last one), and whatever tasks ask for while one write is under way goes in the next, with one fsync for
 * all of them. A `message/send` that answers "completed" has its task on disk first. A crash mid-write leaves
 * what was confirmed before it (a line it cut short is read as not written).
 *
 * Segments are deleted oldest first, once their records are all superseded (by a newer snapshot of their
 * task) or of tasks retention let go (a dropped record says so); once the log holds more than twice the bytes a
 * restart would read back, the oldest segment's tasks are written again as snapshots and it is deleted, so the
 * log stays within about twice the live bytes and the bytes written a small multiple of the bytes added.
 *
 * At start it reads the log back in two passes (`_log-restore.ts`), so a restart holds about the store's budget
 * whatever the log holds: the first reads the segments a line at a time and keeps a small index of each task (where
 * its records are, when it settled, what it costs, priced record by record); retention runs on those prices, and
 * only the tasks it keeps are built, one at a time, from their records. The others (a log written with a larger
 * budget, or tasks a crash did not let go in time) are dropped without being built, with one warning naming them,
 * and a dropped record each, so the log is compacted. A task the previous process left running is failed with a
 * reason (the agent code that ran it is gone), so no task stays `working`. Segments that hold nothing (begun for a
 * write that failed, or by a process that stopped before it wrote) are deleted.
 *
 * A write the disk has no room for (ENOSPC, EDQUOT, EFBIG) is taken back (the segment is cut back to where it
 * began) and fails the request that asked for it with a `ServerUnavailableError`: HTTP 503 with Retry-After, a
 * message that says the store is full. No file is left behind per failed write, and writes succeed again as soon
 * as there is room, without a restart. The logger hears when the disk fills and when there is room again.
 */
export class FileTaskStore implements TaskStore {
  readonly keepsOwners = true
  readonly dir: string
  readonly #memory: MemoryTaskStore
  readonly #logDir: string
  readonly #lock: DirectoryLock
  readonly #segmentBytes: number
  // Every segment in the log, with its size; and the bytes of live records in each.
  readonly #segments: Map<number, number>
  readonly #live = new Map<number, number>()
  #liveBytes = 0
  readonly #unreadable: Set<number>
  #compacting: number | undefined
  // A compaction that could not write all its tasks again (a failed write, a task that cannot be serialised):
  // tried again only once the log has grown by a segment more.
  #stuck: { segment: number; logBytes: number } | undefined
  #closed = false
  readonly #writer: SegmentWriter
  // Every task the store holds has one.
  readonly #logs = new Map<string, TaskLog>()
  readonly #pending = new Set<Promise<void>>()
  readonly #logger: FileStoreOptions['logger']
  // While the log is read back at start: hears of each task retention lets go.
  #dropping: ((taskId: string) => void) | undefined
  readonly #liveBytesCounter: LiveBytes = {
    add: (segment, bytes) => {
      this.#live.set(segment, (this.#live.get(segment) ?? 0) + bytes)
      this.#liveBytes += bytes
    },
    remove: (segment, bytes) => {
      this.#live.set(segment, (this.#live.get(segment) ?? 0) - bytes)
      this.#liveBytes -= bytes
    },
  }

  constructor(options: FileStoreOptions) {
    this.dir = options.dir
    this.#logDir = join(options.dir, 'log')
    this.#logger = options.logger
    this.#segmentBytes = readByteBudget(
      options.segmentBytes,
      'segmentBytes',
      'A2A_STORE_SEGMENT_BYTES',
      DEFAULT_SEGMENT_BYTES,
      options.env ?? processEnv(),
    )
    this.#memory = new MemoryTaskStore(options, (taskId) => this.#remove(taskId))
    let lock: DirectoryLock | undefined
    try {
      mkdirSync(this.#logDir, { recursive: true })
      this.#lock = lock = DirectoryLock.take(options.dir)
      this.#warnOfEarlierLayout()
      this.#segments = listSegments(this.#logDir)
      this.#removeEmpty()
      this.#writer = new SegmentWriter(
        this.#logDir,
        this.#segments,
        this.#segmentBytes,
        () => this.#collect(),
        (refused) => this.#noRoom(refused),
      )
      const index = indexLog(this.#logDir, [...this.#segments.keys()], this.#logger)
      this.#unreadable = index.unreadable
      this.#load(index)
      this.#collect()
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

  get(taskId: string, owner?: string): Task | undefined {
    return this.#memory.get(taskId, owner)
  }

  async create(task: Task, owner?: string): Promise<void> {
    // The owner goes into the task's first snapshot (`#snapshotOf` asks the memory store), in the same write.
    this.#memory.create(task, owner)
    const log = new TaskLog(task.id, this.#writer, this.#liveBytesCounter)
    this.#logs.set(task.id, log)
    try {
      // Written before the task is answered, fsynced with its batch without waiting: a client is told of a task
      // only once a crash of the process would not lose it, and a send is not held up by two fsyncs.
      const written = () => log.compact(task, () => this.#snapshotOf(task), false)
      await this.#track(storeCall(this, 'file', 'create', task.id, written))
    } catch (error) {
      // Not on disk, so not created: the client gets an error and no task stays behind, forever "submitted".
      this.#memory.forget(task.id)
      // A dropped record cancels what of its snapshot may be in the log; none when nothing of it is (a write
      // taken back on a full disk, where that record would take a segment of its own each time).
      if (!nothingWritten(error)) log.remove()
      this.#logs.delete(task.id)
      throw error
    }
  }

  append(task: Task, event: TaskEvent): Promise<void> | undefined {
    this.#memory.append(task, event)
    // Larger than the whole byte budget, it was let go as it settled: not saved.
    if (!this.#memory.has(task.id)) return undefined
    const log = this.#logOf(task.id)
    log.record(task, event)
    if (event.kind === 'status-update' && event.final) {
      const settled = () => log.settle(task, this.#memory.settledAt(task.id), () => this.#snapshotOf(task))
      return this.#track(storeCall(this, 'file', 'append', task.id, settled))
    }
    if (log.pendingBytes >= FLUSH_BYTES) {
      const flushed = log.flush()
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

  /** Removes settled tasks older than the time-to-live. */
  sweep(now?: number): void {
    this.#memory.sweep(now)
  }

  /** Waits for the writes in flight (a failed one was reported to its caller), then lets the directory go. */
  async close(): Promise<void> {
    this.#memory.close()
    while (this.#pending.size) await Promise.allSettled(this.#pending)
    // No compaction or deletion starts from here on; the writer refuses what is asked of it after this.
    this.#closed = true
    try {
      await this.#writer.close()
      while (this.#pending.size) await Promise.allSettled(this.#pending)
    } finally {
      this.#lock.release()
    }
  }

  #snapshotOf(task: Task): TaskSnapshot {
    const taskId = task.id
    return {
      task,
      events: this.#memory.events(taskId) ?? null,
      keptAfter: this.#memory.keptAfter(taskId),
      settledAt: this.#memory.settledAt(taskId),
      // Left out of the line when undefined (JSON.stringify skips it): an unowned task's record is as before.
      owner: this.#memory.ownerOf(taskId),
    }
  }

  #logOf(taskId: string): TaskLog {
    let log = this.#logs.get(taskId)
    if (!log) {
      // Unreachable while every held task has one; should it happen, a first snapshot brings the log level.
      log = new TaskLog(taskId, this.#writer, this.#liveBytesCounter)
      this.#logs.set(taskId, log)
    }
    return log
  }

  #remove(taskId: string): void {
    this.#dropping?.(taskId)
    this.#logs.get(taskId)?.remove()
    this.#logs.delete(taskId)
  }

  #track(work: Promise<void>): Promise<void> {
    this.#pending.add(work)
    const done = () => this.#pending.delete(work)
    work.then(done, done)
    return work
  }

  /**
   * After each write: deletes the oldest sealed segments while no live record is in them, and once the log
   * outweighs twice its live bytes (and a segment more), moves the tasks of the oldest segment out of it with
   * new snapshots, so it is deleted in turn.
   */
  #collect(): void {
    if (this.#closed) return
    const current = this.#writer.current
    let oldest: number | undefined
    let logBytes = 0
    for (const [segment, size] of this.#segments) {
      logBytes += size
      // Oldest first, so a dropped record outlives the records it cancels; an unreadable segment stops it.
      if (oldest !== undefined || segment === current) continue
      if (this.#unreadable.has(segment) || (this.#live.get(segment) ?? 0) > 0) {
        oldest = segment
        continue
      }
      logBytes -= size
      this.#live.delete(segment)
      this.#track(this.#writer.drop(segment)).catch(noop)
    }
    if (oldest === undefined || this.#unreadable.has(oldest) || this.#compacting !== undefined) return
    if (logBytes <= 2 * this.#liveBytes + this.#segmentBytes) return
    if (this.#stuck?.segment === oldest && logBytes < this.#stuck.logBytes + this.#segmentBytes) return
    const compacting = oldest
    this.#compacting = compacting
    const moves: Promise<void>[] = []
    for (const [taskId, log] of this.#logs) {
      const task = log.isIn(compacting) ? this.#memory.get(taskId) : undefined
      if (task) moves.push(this.#track(log.compact(task, () => this.#snapshotOf(task))))
    }
    void Promise.allSettled(moves).then((results) => {
      this.#compacting = undefined
      const failed = results.some((result) => result.status === 'rejected') && (this.#live.get(compacting) ?? 0) > 0
      this.#stuck = failed ? { segment: compacting, logBytes } : undefined
    })
  }

  /**
   * Puts the tasks of the log back into memory, oldest settled first, and fails what was left running. Only those
   * retention keeps are built (`planRestore` decides from their prices), one at a time, each handed to the memory
   * store before the next is read: what the restart holds is the store's budget and one task. The others get a
   * dropped record, as if retention had let them go while the previous process ran, and one warning names them.
   */
  #load(index: LogIndex): void {
    const memory = this.#memory
    const now = Date.now()
    const plan = planRestore(index, memory, now)
    const dropped: IndexedTask[] = []
    this.#dropping = (taskId) => {
      const indexed = index.tasks.get(taskId)
      if (indexed) dropped.push(indexed)
    }
    const stopped: IndexedTask[] = []
    const reader = new SegmentReader(this.#logDir)
    try {
      for (const indexed of plan.order) {
        for (const [segment, bytes] of indexed.records) this.#liveBytesCounter.add(segment, bytes)
        if (plan.dropped.has(indexed)) {
          // Not built: a dropped record says it is gone, and its records are no longer live.
          this.#logs.set(
            indexed.id,
            new TaskLog(indexed.id, this.#writer, this.#liveBytesCounter, { ...indexed, historyLength: 0 }),
          )
          this.#remove(indexed.id)
        }
        // Built last, after every settled task is in: they are settled now, so retention walks them last.
        else if (!isSettled(indexed.state)) stopped.push(indexed)
        else
          this.#restoreTask(indexed, reader, (file) =>
            memory.restore(file.task, file.events, indexed.settledAt, file.keptAfter, file.owner),
          )
      }
      for (const indexed of stopped) {
        this.#restoreTask(indexed, reader, (file) => {
          const { task, keptAfter } = file
          const was = task.status.state
          const failed = failStopped(task, file.events, keptAfter)
          memory.restore(task, failed, now, keptAfter, file.owner)
          this.#logger?.warn(`Task store: task ${task.id} was ${was} when the server stopped; it is failed`)
          const log = this.#logs.get(task.id)
          if (!log) return
          this.#track(log.compact(task, () => this.#snapshotOf(task))).catch((error: unknown) => {
            this.#logger?.warn(`Task store: could not save the failure of task ${task.id}: ${(error as Error).message}`)
          })
        })
      }
    } finally {
      reader.close()
      this.#dropping = undefined
    }
    this.#warnDropped(dropped)
  }

  /**
   * Builds a task from its records and hands it to `restore`; a task that cannot be read again is left in the log,
   * unread.
   */
  #restoreTask(
    indexed: IndexedTask,
    reader: SegmentReader,
    restore: (file: ReturnType<typeof readTaskBack>) => void,
  ): void {
    let file: ReturnType<typeof readTaskBack>
    try {
      file = readTaskBack(indexed, reader)
    } catch (error) {
      // As an unreadable segment is: left for a look, and no segment from its snapshot's on is deleted.
      for (const [segment, bytes] of indexed.records) this.#liveBytesCounter.remove(segment, bytes)
      this.#unreadable.add(indexed.at[0]!)
      this.#logger?.warn(
        `Task store: task ${indexed.id} could not be read back: ${(error as Error).message}; it is left in the log, unread`,
      )
      return
    }
    // Before the restore: retention may let the task go at once, and its records with it. Its history as read
    // back: the next entries record carries the messages after it.
    this.#logs.set(
      indexed.id,
      new TaskLog(indexed.id, this.#writer, this.#liveBytesCounter, {
        ...indexed,
        historyLength: file.task.history.length,
      }),
    )
    restore(file)
  }

  /** One warning for the tasks of the log retention let go at start: how many, their bytes, and the newest by id. */
  #warnDropped(dropped: IndexedTask[]): void {
    if (dropped.length === 0) return
    const memory = this.#memory
    let total = 0
    for (const indexed of dropped) total += plannedBytes(indexed, memory)
    const named = dropped
      .slice(-DROPPED_NAMED)
      .reverse()
      .map((indexed) => `${indexed.id} (${plannedBytes(indexed, memory)} bytes)`)
    const more = dropped.length - named.length
    this.#logger?.warn(
      `Task store: ${dropped.length} task${dropped.length === 1 ? '' : 's'} of the log (${total} bytes) did not fit the store's budget (maxBytes ${memory.maxBytes}, maxTasks ${memory.maxTasks}) with the newer ones and ${dropped.length === 1 ? 'was' : 'were'} dropped at start, the longest settled first: ${named.join(', ')}${more > 0 ? ` and ${more} more` : ''}`,
    )
  }

  /**
   * Deletes the segments that hold nothing: begun for a write that failed (a full disk, in an earlier release
   * that left them), or by a process that stopped before it wrote. They would otherwise stay for good, one per
   * failed write, as the oldest segment with live records keeps every later one.
   */
  #removeEmpty(): void {
    for (const segment of this.#segments.keys()) {
      const path = segmentPath(this.#logDir, segment)
      try {
        if (!holdsNothing(path)) continue
        unlinkSync(path)
        this.#segments.delete(segment)
      } catch {
        // Left as it is: the restore reads it (as nothing, or says why it cannot).
      }
    }
  }

  /** A run of writes refused for want of room begins (`refused`: what the clients are told), or ends. */
  #noRoom(refused: Error | undefined): void {
    if (!refused) this.#logger?.warn(`Task store: writing to ${this.#logDir} again: there is room`)
    else {
      const detail = refused.cause instanceof Error ? refused.cause.message : refused.message
      this.#logger?.warn(
        `Task store: cannot write to ${this.#logDir} (${detail}); requests that save a task answer HTTP 503 until there is room again`,
      )
    }
  }

  /** The files of the store's first releases (`<dir>/tasks/`) are not read: say so rather than lose them quietly. */
  #warnOfEarlierLayout(): void {
    const earlier = join(this.dir, 'tasks')
    if (existsSync(earlier) && readdirSync(earlier).length > 0) {
      this.#logger?.warn(
        `Task store: ${earlier} holds task files of an earlier release of the store, which this one does not read`,
      )
    }
  }
}

/**
 * The durable embedded store: tasks as files under `dir` that survive restarts and crashes; see
 * `FileTaskStore`. Same retention as the memory store.
 */
export function createFileStore(options: FileStoreOptions): FileTaskStore {
  return new FileTaskStore(options)
}
