import { writeSync } from 'node:fs'
import { type FileHandle, open, unlink } from 'node:fs/promises'
import { ServerUnavailableError } from '../../errors.js'
import { SEGMENT_HEADER } from '../_log-records.js'
import { segmentPath } from './_segments.js'

/** A line to append, and what to do once it is written (or not). */
export interface Appending {
  text: string
  bytes: number
  /**
   * Wait for the fsync before `done` (a settle a client is told of). Every batch is fsynced; a line that need not
   * wait is done once the kernel has it (a crash of the process no longer loses it), its fsync a moment later.
   */
  durable: boolean
  /** Asked just before the line is written: an error refuses it (the line it follows failed). */
  admit(): unknown
  /** Called once: the line is written to `segment` (and fsynced when durable), or `error` says why not. */
  done(error: unknown, segment: number): void
}

// Lines of one batch are handed to the kernel in writes of at most this many bytes (one string each).
const WRITE_BYTES = 1024 * 1024
// Batches up to this size are written on the main thread (see `#write`).
const SYNC_WRITE_BYTES = 64 * 1024
// fsyncs under way at once: each holds a thread of libuv's pool (four by default), which other I/O needs too.
const MAX_SYNCS = 2
const SYNC_SOON_MS = 50
const HEADER_BYTES = Buffer.byteLength(SEGMENT_HEADER)
const noop = (): void => {}

// The file system's ways of saying there is no room for what was written, as the client is told of them.
const NO_ROOM: Record<string, string> = {
  ENOSPC: 'is out of disk space (ENOSPC: no space left on device)',
  EDQUOT: 'is out of disk space (EDQUOT: disk quota exceeded)',
  EFBIG: 'has reached the largest file size allowed (EFBIG: file too large)',
}

/**
 * A write refused for want of room (a full disk, a quota, a file size limit) as the client hears of it: a
 * JSON-RPC error in an HTTP 503 with Retry-After, as room may be made while the server runs. Any other error
 * is left as it is (an unexpected one: `Internal error`, its detail in the log).
 */
function noRoomError(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (typeof code !== 'string' || !Object.hasOwn(NO_ROOM, code)) return error
  const refused = new ServerUnavailableError(`The task store ${NO_ROOM[code]}; retry later`, 503)
  refused.cause = error
  return refused
}

// The errors of batches of which nothing is in the log: not begun, or taken back.
const notWritten = new WeakSet<object>()

/** Whether the line `done` was told of this error is not in the log at all (nothing of it to cancel there). */
export function nothingWritten(error: unknown): boolean {
  return typeof error === 'object' && error !== null && notWritten.has(error)
}

/**
 * Appends the store's lines to the log, one batch at a time, with group commit: whatever was asked for while
 * a batch was being written goes in the next batch, in one write and one fsync for all of them, so a busy store
 * pays one fsync per batch rather than per task; the next batch is written while the last one's fsync runs.
 *
 * The log is a series of numbered segments; lines go to the newest, and a new one is begun once it passes
 * `segmentBytes` (and after a failed write, so a line cut short is the end of its segment and no later line is
 * glued to it). A segment is fsynced before the next one begins: a line is never durable while one before it
 * may still be lost. Each process begins a segment of its own.
 *
 * A batch whose write fails (a full disk) is taken back first: its segment is cut back to where the batch began.
 * A segment that then holds no line (begun for a write that failed) is deleted rather than sealed, so a full disk
 * leaves no file per failed write, and the next write, once there is room, begins a segment as usual.
 */
export class SegmentWriter {
  readonly #dir: string
  readonly #segmentBytes: number
  readonly #sizes: Map<number, number>
  readonly #afterBatch: () => void
  #current: number
  #file: FileHandle | undefined
  #queue: Appending[] = []
  #running: Promise<void> | undefined
  #rollNext = true
  // Settles once every batch written so far is confirmed; rejects while one that failed is in the open segment.
  #confirmed: Promise<unknown> = Promise.resolve()
  readonly #syncs = new Set<Promise<void>>()
  #soon: ReturnType<typeof setTimeout> | undefined
  #closing = false
  readonly #noRoom: (error: ServerUnavailableError | undefined) => void
  // A write failed for want of room, and none has been written since.
  #full = false

  /**
   * `sizes`: the segments already in `dir` and their sizes, kept up to date here. `noRoom` hears of the first
   * write refused for want of room (the error the lines get), and of the first batch written after (`undefined`).
   */
  constructor(
    dir: string,
    sizes: Map<number, number>,
    segmentBytes: number,
    afterBatch: () => void,
    noRoom: (error: ServerUnavailableError | undefined) => void = noop,
  ) {
    this.#dir = dir
    this.#sizes = sizes
    this.#segmentBytes = segmentBytes
    this.#afterBatch = afterBatch
    this.#noRoom = noRoom
    this.#current = Math.max(0, ...sizes.keys())
  }

  /** The segment lines go to now; the others are sealed (never written again). */
  get current(): number {
    return this.#current
  }

  append(line: Appending): void {
    if (this.#closing) {
      line.done(new Error('The task store is closed'), -1)
      return
    }
    this.#queue.push(line)
    this.#running ??= this.#run()
  }

  /** Deletes a sealed segment. */
  async drop(segment: number): Promise<void> {
    if (segment === this.#current && this.#file) throw new Error(`segment ${segment} is being written`)
    this.#sizes.delete(segment)
    await unlink(segmentPath(this.#dir, segment)).catch(noop)
  }

  /** Waits for the lines asked for, then closes the segment (fsynced; deleted when it holds no line). */
  async close(): Promise<void> {
    this.#closing = true
    clearTimeout(this.#soon)
    while (this.#running) await this.#running
    await this.#confirmed.catch(noop)
    const file = this.#file
    this.#file = undefined
    if (!file) return
    if (this.#sizes.get(this.#current) === HEADER_BYTES) {
      await this.#discard(file, this.#current)
      return
    }
    try {
      await file.datasync()
    } finally {
      await file.close()
    }
  }

  async #run(): Promise<void> {
    try {
      while (this.#queue.length) await this.#writeBatch()
    } finally {
      this.#running = undefined
    }
  }

  async #writeBatch(): Promise<void> {
    const queued = this.#queue
    this.#queue = []
    const batch: Appending[] = []
    for (const line of queued) {
      const refused = line.admit()
      if (refused) line.done(refused, -1)
      else batch.push(line)
    }
    if (batch.length === 0) return
    let segment = -1
    let synced: Promise<unknown>
    let written = false
    let file: FileHandle | undefined
    let start = 0
    try {
      file = await this.#fileToWrite()
      segment = this.#current
      start = this.#sizes.get(segment) ?? 0
      let chunk = ''
      for (const line of batch) {
        if (chunk.length > 0 && chunk.length + line.text.length > WRITE_BYTES) {
          await this.#write(file, segment, chunk)
          chunk = ''
        }
        chunk += line.text
      }
      await this.#write(file, segment, chunk)
      written = true
      this.#roomAgain()
      const durable = batch.some((line) => line.durable)
      synced = durable ? this.#sync(file) : Promise.resolve()
      if (!durable) this.#syncSoon()
    } catch (error) {
      // At once: the batches queued behind this one must not follow a line it may have cut short.
      this.#rollNext = true
      // Nothing of it is left in the segment, when the file system lets it be cut back (a full disk does).
      const clean = file === undefined || (await this.#takeBack(file, segment, start))
      if (clean && typeof error === 'object' && error !== null) notWritten.add(error)
      this.#noRoomFor(error)
      synced = Promise.reject(error)
    }
    // Confirmed once its own fsync and every earlier batch's are: one that failed fails the batches after it
    // in its segment too (their records may follow on its own).
    const confirmed = Promise.all([this.#confirmed, synced])
    this.#confirmed = confirmed
    // A line that need not wait is done now, unless a write before it in its segment is known to have failed.
    const early = written && !this.#rollNext
    const waiting = early ? batch.filter((line) => line.durable) : batch
    if (early) for (const line of batch) if (!line.durable) line.done(undefined, segment)
    confirmed.then(
      () => {
        for (const line of waiting) line.done(undefined, segment)
        this.#afterBatch()
      },
      (error: unknown) => {
        this.#rollNext = true
        // An fsync may be the first to hear of a full disk (a file system that allocates late).
        this.#noRoomFor(error)
        const failure = noRoomError(error)
        if (failure !== error && nothingWritten(error)) notWritten.add(failure as object)
        for (const line of waiting) line.done(failure, segment)
      },
    )
    // The next batch is written while this one's fsync runs; no more than MAX_SYNCS of those at once.
    if (this.#syncs.size >= MAX_SYNCS) await Promise.race(this.#syncs)
  }

  /** Reports the first of a run of writes refused for want of room. */
  #noRoomFor(error: unknown): void {
    if (this.#full) return
    const failure = noRoomError(error)
    if (!(failure instanceof ServerUnavailableError)) return
    this.#full = true
    this.#noRoom(failure)
  }

  /** A batch was written: reports the end of a run of writes refused for want of room. */
  #roomAgain(): void {
    if (!this.#full) return
    this.#full = false
    this.#noRoom(undefined)
  }

  // A batch no line waits for is fsynced with the next one that one does, or after SYNC_SOON_MS at the latest.
  #syncSoon(): void {
    if (this.#soon) return
    this.#soon = setTimeout(() => {
      this.#soon = undefined
      // The open segment, whichever it is now: a segment sealed since was fsynced as it was sealed.
      if (this.#file) void this.#sync(this.#file).catch(noop)
    }, SYNC_SOON_MS)
    this.#soon.unref()
  }

  #sync(file: FileHandle): Promise<void> {
    const sync = file.datasync()
    const settled = sync.then(noop, noop)
    this.#syncs.add(settled)
    void settled.then(() => this.#syncs.delete(settled))
    return sync
  }

  async #write(file: FileHandle, segment: number, text: string): Promise<void> {
    const bytes = Buffer.byteLength(text)
    // Counted before the write: one that fails part way leaves some of it on disk (unless it is taken back).
    this.#sizes.set(segment, (this.#sizes.get(segment) ?? 0) + bytes)
    if (bytes > SYNC_WRITE_BYTES) return file.writeFile(text)
    // A small batch is copied into the page cache here: a trip through libuv's pool costs more than the copy.
    const data = Buffer.from(text)
    for (let written = 0; written < data.length; ) written += writeSync(file.fd, data, written)
  }

  /**
   * After a failed write: cuts `segment` back to `size`, where the batch began, so nothing of it is left, not a
   * line cut short nor a whole line of a write that was refused (a full disk has room for that). When that fails
   * too, the segment ends with what the write left: a restart reads whole lines, and passes over a cut one.
   */
  async #takeBack(file: FileHandle, segment: number, size: number): Promise<boolean> {
    try {
      await file.truncate(size)
    } catch {
      return false
    }
    this.#sizes.set(segment, size)
    return true
  }

  /** Closes and deletes a segment that holds no line (its header at most). */
  async #discard(file: FileHandle, segment: number): Promise<void> {
    if (this.#file === file) this.#file = undefined
    await file.close().catch(noop)
    this.#sizes.delete(segment)
    await unlink(segmentPath(this.#dir, segment)).catch(noop)
  }

  /** The open segment, or a new one once it is full (or a write to it failed, or none is open yet). */
  async #fileToWrite(): Promise<FileHandle> {
    if (this.#file && !this.#rollNext && (this.#sizes.get(this.#current) ?? 0) < this.#segmentBytes) return this.#file
    const sealed = this.#file
    this.#file = undefined
    // No fsync of the sealed segment may be under way as it closes, and the new one starts with a clean slate.
    await this.#confirmed.catch(noop)
    this.#confirmed = Promise.resolve()
    // One that holds no line (begun for a write that failed, and was taken back) is deleted, not sealed.
    if (sealed && this.#sizes.get(this.#current) === HEADER_BYTES) await this.#discard(sealed, this.#current)
    else if (sealed) {
      try {
        await sealed.datasync()
      } finally {
        await sealed.close().catch(noop)
      }
    }
    const { file, segment } = await this.#createSegment()
    try {
      this.#current = segment
      this.#sizes.set(segment, 0)
      await this.#write(file, segment, SEGMENT_HEADER)
      // The new file's name is durable once its directory is: a line fsynced in it is then found at start.
      await syncDirectory(this.#dir)
    } catch (error) {
      // Not even its header was written (a full disk): no file is left behind for it.
      await this.#discard(file, segment)
      throw error
    }
    this.#file = file
    this.#rollNext = false
    return file
  }

  /** A segment numbered past every one this store knows (past one that another process made, if need be). */
  async #createSegment(): Promise<{ file: FileHandle; segment: number }> {
    for (let segment = this.#current + 1; ; segment++) {
      try {
        return { file: await open(segmentPath(this.#dir, segment), 'wx'), segment }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || segment > this.#current + 1000) throw error
      }
    }
  }
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
