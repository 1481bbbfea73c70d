import type { Task, TaskEvent } from '../../types.js'
import { droppedLine, entriesLine, type LogEntry, snapshotLine, type TaskSnapshot } from '../_log-records.js'
import { eventBytes } from '../_stored-bytes.js'
import type { SegmentWriter } from './_segment-writer.js'

/**
 * Entries of a running task not written yet are appended to the log before it settles (without an fsync: the
 * settle's covers them) once they keep this many bytes alive that the task itself does not hold (see
 * `heldByEntry`): a long turn costs no more memory than that on top of the task.
 */
export const FLUSH_BYTES = 1024 * 1024
// An appended chunk's event, less its parts (the task's artifact holds the same part objects).
const CHUNK_EVENT_BYTES = 256
const noop = (): void => {}

/** The store's count of the bytes of live records (those a restart would read back) in each segment. */
export interface LiveBytes {
  add(segment: number, bytes: number): void
  remove(segment: number, bytes: number): void
}

/** A task's place in the log as it was read back at start. */
export interface TaskLogRead {
  /** The number of its newest record (read back or not). */
  lastRecord: number
  snapshotBytes: number
  /** Bytes of the entries records read after its snapshot. */
  entriesBytes: number
  /** Its records from its snapshot on, bytes by segment (already counted as live). */
  records: Map<number, number>
  /** A record of it could not be read: the log no longer continues what was read back. */
  broken: boolean
}

/**
 * One task's records in the file store's log. What the task gains between writes (its events, and the messages
 * that join its history outside any event: follow-ups) waits here until it settles, then goes to the log as one
 * entries record, fsynced. A snapshot (the whole task) is written instead when the entries since the last one
 * would outweigh it: so a task's bytes are rewritten only after as many were added, and the bytes written stay
 * a small multiple of the bytes added however long the conversation goes. The store also asks for a snapshot
 * to move a task out of a segment it compacts.
 *
 * Records are numbered in the task's order; a restart applies an entries record only on top of the one before
 * it. A write that fails refuses the task's entries after it (they would leave a gap) until a snapshot lands.
 */
export class TaskLog {
  readonly #taskId: string
  readonly #writer: SegmentWriter
  readonly #live: LiveBytes
  #lastRecord: number
  // Of the records asked for: the newest snapshot's size, and the entries' bytes since.
  #snapshotBytes: number
  #entriesBytes: number
  // Where its live records are: from its newest snapshot written on, each with its number (0: read at start).
  #records: Array<{ record: number; segment: number; bytes: number }>
  #historyWritten: number
  #pending: LogEntry[] = []
  #pendingBytes = 0
  // The task changed in a way no entry says, or a write failed: only a snapshot brings the log level.
  #snapshotNext: boolean
  #failed: { record: number; error: unknown } | undefined
  // The number of the newest snapshot asked for.
  #snapshotAsked = 0
  #removed = false

  /** `read`: where the task was in the log at start; without it, a new task (its first record is a snapshot). */
  constructor(taskId: string, writer: SegmentWriter, live: LiveBytes, read?: TaskLogRead & { historyLength: number }) {
    this.#taskId = taskId
    this.#writer = writer
    this.#live = live
    this.#lastRecord = read?.lastRecord ?? 0
    this.#snapshotBytes = read?.snapshotBytes ?? 0
    this.#entriesBytes = read?.entriesBytes ?? 0
    this.#records = read ? Array.from(read.records, ([segment, bytes]) => ({ record: 0, segment, bytes })) : []
    this.#historyWritten = read?.historyLength ?? 0
    this.#snapshotNext = read === undefined || read.broken
  }

  /** Bytes the recorded entries not written yet keep alive (see `heldByEntry`). */
  get pendingBytes(): number {
    return this.#pendingBytes
  }

  /** Whether a live record of the task is in `segment`. */
  isIn(segment: number): boolean {
    return this.#records.some((held) => held.segment === segment)
  }

  /** Notes what `event` (already applied to `task`) and the messages that joined its history since add. */
  record(task: Task, event: TaskEvent): void {
    if (this.#snapshotNext) return
    const history = task.history
    const status = event.kind === 'status-update' ? event.status : undefined
    // A question to the user joins the history with its status event: folding the event puts it back.
    const asks = Boolean(status?.message) && (status!.state === 'input-required' || status!.state === 'auth-required')
    const joined = asks ? history.length - 1 : history.length
    if (joined < this.#historyWritten || (asks && history[joined] !== status!.message)) {
      // The history was cut, or holds the question elsewhere: not something entries can say.
      this.#rewriteNext()
      return
    }
    // A message that joined the history is held by the task: it costs the entry nothing.
    while (this.#historyWritten < joined) this.#pending.push({ message: history[this.#historyWritten++]! })
    this.#historyWritten = history.length
    this.#pending.push({ event })
    this.#pendingBytes += heldByEntry(event)
  }

  /** Appends what was recorded, without an fsync (a running task's turn has outgrown FLUSH_BYTES). */
  flush(): Promise<void> | undefined {
    if (this.#snapshotNext || this.#pending.length === 0) return undefined
    const entries = this.#take()
    return this.#writeEntries(entries, false)
  }

  /**
   * Writes the task as it settles at `settledAt`: the recorded entries, fsynced, or a snapshot (`snapshot`
   * gives it, as the task is now) when the entries since the last one would outweigh it.
   */
  settle(task: Task, settledAt: number, snapshot: () => TaskSnapshot): Promise<void> {
    if (!this.#snapshotNext) {
      const entries = this.#take()
      entries.push({ settledAt })
      return this.#writeEntries(entries, true, () => this.compact(task, snapshot))
    }
    return this.compact(task, snapshot)
  }

  /** Writes a snapshot of `task` (as `snapshot` gives it now); `durable`: confirmed once fsynced, not written. */
  compact(task: Task, snapshot: () => TaskSnapshot, durable = true): Promise<void> {
    const record = this.#lastRecord + 1
    let line: string
    try {
      line = snapshotLine(this.#taskId, record, snapshot())
    } catch (error) {
      this.#rewriteNext()
      return Promise.reject(error)
    }
    this.#lastRecord = record
    this.#snapshotAsked = record
    this.#take()
    this.#snapshotNext = false
    this.#historyWritten = task.history.length
    this.#snapshotBytes = Buffer.byteLength(line)
    this.#entriesBytes = 0
    return this.#write(line, this.#snapshotBytes, record, durable, true)
  }

  /**
   * The task is let go: its records are no longer live, a dropped record says so (a restart then reads none of
   * them back), and nothing more is written. The dropped record is not live itself: the store deletes segments
   * oldest first, so it goes only with the records it cancels.
   */
  remove(): void {
    if (this.#removed) return
    this.#removed = true
    this.#rewriteNext()
    for (const held of this.#records) this.#live.remove(held.segment, held.bytes)
    this.#records = []
    const line = droppedLine(this.#taskId, ++this.#lastRecord)
    this.#writer.append({
      text: line,
      bytes: Buffer.byteLength(line),
      durable: false,
      admit: () => undefined,
      done: noop,
    })
  }

  /** An entries record of `entries`; `tooLarge` writes instead when the entries would outweigh the snapshot. */
  #writeEntries(entries: LogEntry[], durable: boolean, tooLarge?: () => Promise<void>): Promise<void> {
    const record = this.#lastRecord + 1
    let line: string
    try {
      line = entriesLine(this.#taskId, record, entries)
    } catch (error) {
      // Entries that cannot be written leave the log behind the task, for a snapshot to catch up.
      this.#rewriteNext()
      return Promise.reject(error)
    }
    const bytes = Buffer.byteLength(line)
    if (tooLarge && this.#entriesBytes + bytes > this.#snapshotBytes) return tooLarge()
    this.#lastRecord = record
    this.#entriesBytes += bytes
    return this.#write(line, bytes, record, durable, false)
  }

  #write(text: string, bytes: number, record: number, durable: boolean, isSnapshot: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#writer.append({
        text,
        bytes,
        durable,
        admit: () => (isSnapshot ? undefined : this.#refusal(record)),
        done: (error, segment) => {
          if (error) {
            this.#failed ??= { record, error }
            this.#rewriteNext()
            reject(error)
            return
          }
          if (isSnapshot) {
            if (this.#failed && record > this.#failed.record) this.#failed = undefined
            // What it supersedes: the records before it (a later one may be done already, confirmed unsynced).
            for (const held of this.#records) if (held.record < record) this.#live.remove(held.segment, held.bytes)
            this.#records = this.#records.filter((held) => held.record > record)
          }
          if (!this.#removed) {
            this.#records.push({ record, segment, bytes })
            this.#live.add(segment, bytes)
          }
          resolve()
        },
      })
    })
  }

  /**
   * Why an entries record cannot be written now: a write of the task before it failed, and no snapshot asked
   * for since comes before it (one that does brings the log level, or fails it in turn).
   */
  #refusal(record: number): unknown {
    const failed = this.#failed
    if (!failed || record <= failed.record) return undefined
    return this.#snapshotAsked > failed.record && record > this.#snapshotAsked ? undefined : failed.error
  }

  #take(): LogEntry[] {
    const entries = this.#pending
    this.#pending = []
    this.#pendingBytes = 0
    return entries
  }

  #rewriteNext(): void {
    this.#snapshotNext = true
    this.#take()
  }
}

/**
 * The bytes an event keeps alive while it waits to be written that the task does not hold: all of a status (a
 * later one replaces it in the task) or of a whole artifact (a later one of the same id replaces it); only the
 * event itself for an appended chunk, whose parts are the task's artifact's too.
 */
function heldByEntry(event: TaskEvent): number {
  return event.kind === 'artifact-update' && event.append ? CHUNK_EVENT_BYTES : eventBytes(event)
}
