import { open, unlink } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { Task, TaskEvent } from '../types.js'
import { type JournalEntry, journalLines } from './_journal-format.js'
import { eventBytes } from './_json-bytes.js'
import { journalName, snapshotName } from './_task-files.js'

// Required when a file store writes its first snapshot: importing it would cost every `a2a start` ~20 ms, store or not.
const require = createRequire(import.meta.url)
type WriteFileAtomic = (path: string, data: string) => Promise<void>
let writeFileAtomic: WriteFileAtomic | undefined
const noop = (): void => {}

/**
 * Entries of a running task not written yet are appended to its journal before it settles (without an fsync:
 * the settle's covers them) once they keep this many bytes alive that the task itself does not hold (see
 * `heldByEntry`): a long turn costs no more memory than that on top of the task.
 */
export const FLUSH_BYTES = 1024 * 1024
// An appended chunk's event, less its parts (the task's artifact holds the same part objects).
const CHUNK_EVENT_BYTES = 256

/** A task's files as they were read back at start. */
export interface FilesOnDisk {
  generation: number
  snapshotBytes: number
  journalBytes: number
  historyLength: number
}

/**
 * One task's files, as the file store writes them: what the task gains between writes (its events, and the
 * messages that join its history outside any event: follow-ups) waits here until the task settles, then goes to
 * the journal in one append and one fsync. A new snapshot (the whole task) is written instead when the journal
 * would outweigh the current one, and when the task ends; so a task's bytes are rewritten only after as many were
 * added, and the bytes written stay a small multiple of the bytes added however long the conversation goes.
 *
 * Writes happen one at a time, in call order. What each writes is serialised when it is asked for (the task
 * goes on changing), and sizes and generations are counted as the queued writes will leave the files.
 *
 * The order that keeps a crash harmless: a snapshot is written to a temporary file, fsynced and renamed over the
 * old one (write-file-atomic), naming a new journal generation, one no file has yet; only then is the old journal
 * deleted. A crash before the rename leaves the old snapshot and its journal; after it, the new snapshot, which
 * reads no entry of the old journal (left over, it is deleted at the next start): no entry is ever applied twice,
 * or lost. An append that a crash cuts short leaves a torn last line, read as not written (its settle was not
 * confirmed).
 */
export class TaskJournal {
  readonly #dir: string
  readonly #taskId: string
  // Of the newest snapshot asked for: its generation and size, and its journal's size once the queued appends land.
  #generation: number
  #snapshotBytes: number
  #journalBytes: number
  // The generation of the snapshot on disk, whose journal the next snapshot replaces. Undefined before the first.
  #onDisk: number | undefined
  // The journal whose creation was made durable (its directory entry fsynced).
  #journalSynced: number | undefined
  #historyWritten: number
  #pending: JournalEntry[] = []
  #pendingBytes = 0
  // The task changed in a way no entry says, or a write failed: only a whole snapshot brings the files level.
  #snapshotNext = false
  // A failed write of this generation: its later appends would leave a gap, so they fail too.
  #failed: { generation: number; error: unknown } | undefined
  #tail: Promise<void> = Promise.resolve()

  /** `onDisk`: the files read back at start; without it, a new task (its first write is its first snapshot). */
  constructor(dir: string, taskId: string, onDisk?: FilesOnDisk) {
    this.#dir = dir
    this.#taskId = taskId
    this.#generation = onDisk?.generation ?? -1
    this.#onDisk = onDisk?.generation
    this.#snapshotBytes = onDisk?.snapshotBytes ?? 0
    this.#journalBytes = onDisk?.journalBytes ?? 0
    this.#historyWritten = onDisk?.historyLength ?? 0
    // Nothing on disk yet: the first write must be a snapshot.
    this.#snapshotNext = onDisk === undefined
  }

  /** Bytes the recorded entries not written yet keep alive (see `heldByEntry`). */
  get pendingBytes(): number {
    return this.#pendingBytes
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
    const lines = this.#serialise(this.#take())
    return this.#append(lines, Buffer.byteLength(lines), false)
  }

  /**
   * Writes the task as it settles at `settledAt`: the recorded entries appended and fsynced, or a new snapshot
   * (`snapshot` serialises it, naming the journal generation it is given) when the task `ended` or the journal
   * would outweigh the snapshot.
   */
  settle(task: Task, settledAt: number, ended: boolean, snapshot: (generation: number) => string): Promise<void> {
    if (!ended && !this.#snapshotNext) {
      const entries = this.#take()
      entries.push({ settledAt })
      const lines = this.#serialise(entries)
      const bytes = Buffer.byteLength(lines)
      if (this.#journalBytes + bytes <= this.#snapshotBytes) return this.#append(lines, bytes, true)
    }
    return this.compact(task, snapshot)
  }

  /** Writes a new snapshot of `task` (serialised now by `snapshot`), then deletes the journal it replaces. */
  compact(task: Task, snapshot: (generation: number) => string): Promise<void> {
    const generation = this.#generation + 1
    let json: string
    try {
      json = snapshot(generation)
    } catch (error) {
      this.#rewriteNext()
      throw error
    }
    this.#generation = generation
    this.#take()
    this.#snapshotNext = false
    this.#historyWritten = task.history.length
    this.#snapshotBytes = Buffer.byteLength(json)
    this.#journalBytes = 0
    return this.#enqueue(async () => {
      writeFileAtomic ??= require('write-file-atomic') as WriteFileAtomic
      try {
        await writeFileAtomic(this.#path(snapshotName(this.#taskId)), json)
      } catch (error) {
        this.#fail(generation, error)
        throw error
      }
      const replaced = this.#onDisk
      this.#onDisk = generation
      if (replaced !== undefined) await unlink(this.#path(journalName(this.#taskId, replaced))).catch(noop)
    })
  }

  /** Deletes the task's files once the writes asked for before have landed (or failed). */
  remove(): Promise<void> {
    this.#snapshotNext = true
    this.#take()
    return this.#enqueue(async () => {
      // The snapshot first: a journal without one is a leftover the next start deletes; the reverse would be a task.
      await unlink(this.#path(snapshotName(this.#taskId))).catch(noop)
      for (const generation of new Set([this.#onDisk, this.#generation])) {
        if (generation !== undefined && generation >= 0) await unlink(this.#path(journalName(this.#taskId, generation))).catch(noop)
      }
    })
  }

  #append(lines: string, bytes: number, durable: boolean): Promise<void> {
    const generation = this.#generation
    this.#journalBytes += bytes
    return this.#enqueue(async () => {
      if (this.#failed?.generation === generation) throw this.#failed.error
      try {
        const file = await open(this.#path(journalName(this.#taskId, generation)), 'a')
        try {
          await file.writeFile(lines)
          if (durable) await file.sync()
        } finally {
          await file.close()
        }
        if (durable && this.#journalSynced !== generation) {
          await syncDirectory(this.#dir)
          this.#journalSynced = generation
        }
      } catch (error) {
        this.#fail(generation, error)
        throw error
      }
    })
  }

  /** The entries' lines; entries that cannot be written leave the files behind the task, for a snapshot to catch up. */
  #serialise(entries: JournalEntry[]): string {
    try {
      return journalLines(entries)
    } catch (error) {
      this.#rewriteNext()
      throw error
    }
  }

  #take(): JournalEntry[] {
    const entries = this.#pending
    this.#pending = []
    this.#pendingBytes = 0
    return entries
  }

  #rewriteNext(): void {
    this.#snapshotNext = true
    this.#take()
  }

  #fail(generation: number, error: unknown): void {
    this.#failed = { generation, error }
    this.#rewriteNext()
  }

  #enqueue(write: () => Promise<void>): Promise<void> {
    const done = this.#tail.then(write)
    this.#tail = done.then(noop, noop)
    return done
  }

  #path(name: string): string {
    return join(this.#dir, name)
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

/**
 * Makes a new file's name durable: its data is fsynced, but the directory entry lives in the directory. Best
 * effort (some systems cannot open a directory); a crash of the process alone never needs it.
 */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  } catch {
    // Not supported here.
  }
}
