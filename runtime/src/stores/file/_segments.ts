import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { type LogRecord, parseRecord, SEGMENT_HEADER, taskIdOfLine } from '../_log-records.js'

/**
 * The file store's log: the segments `<dir>/log/<number>.jsonl`, numbered in the order they were begun. Each
 * starts with `SEGMENT_HEADER`, then one record a line (see `_log-records.ts`).
 */
const SEGMENT = /^(\d{1,15})\.jsonl$/

export const segmentPath = (logDir: string, segment: number): string =>
  join(logDir, `${String(segment).padStart(12, '0')}.jsonl`)

/** The segments in `logDir` and their sizes, by number. */
export function listSegments(logDir: string): Map<number, number> {
  const sizes = new Map<number, number>()
  for (const name of readdirSync(logDir)) {
    const match = SEGMENT.exec(name)
    if (match) sizes.set(Number(match[1]), statSync(join(logDir, name)).size)
  }
  return new Map([...sizes].sort((a, b) => a[0] - b[0]))
}

const NEWLINE = 0x0a
// A segment is read this many bytes at a time; a line longer than that is gathered from its pieces.
const READ_BYTES = 1024 * 1024

/** What a scan of a segment hands on: each record with where its line is, and the lines that are damage. */
export interface SegmentVisitor {
  /** A record, in the order of the file; `offset` and `bytes`: its line's place in the file, newline included. */
  record(record: LogRecord, offset: number, bytes: number): void
  /**
   * A line that does not parse with whole records after it (damage no crash of this store makes): told before the
   * record after it.
   */
  damaged(line: number, taskId: string | undefined): void
}

/**
 * Reads a segment's records one line at a time: what is held is a piece of the file (1 MiB) and the line being
 * read, never the whole segment. A write that a crash interrupted leaves at most the segment's end unreadable (a
 * line without its newline, or lines that do not parse with nothing whole after them, such as the zeros a power
 * cut may leave): those are left out silently, as no client was told they were saved. Throws for a file that is
 * not a segment (before any record is handed on), or when the file cannot be read.
 */
export function scanSegment(path: string, visitor: SegmentVisitor): void {
  const fd = openSync(path, 'r')
  try {
    const header = Buffer.from(SEGMENT_HEADER)
    const chunk = Buffer.allocUnsafe(Math.max(READ_BYTES, header.length))
    const start = readSync(fd, chunk, 0, header.length, 0)
    if (start === 0) return
    if (!chunk.subarray(0, start).equals(header.subarray(0, start)))
      throw new Error('it is not a segment of this version of the task log')
    // Cut short while its header was written: a segment begun by a crash's last moment.
    if (start < header.length) return
    const unreadable: Array<{ line: number; taskId: string | undefined }> = []
    // The start of the line being read (in the file), and its pieces read so far when it began in an earlier read.
    let lineStart = header.length
    let pieces: Buffer[] = []
    let line = 1
    for (let position = header.length; ; ) {
      const read = readSync(fd, chunk, 0, chunk.length, position)
      if (read === 0) break
      const data = chunk.subarray(0, read)
      for (let from = 0; from < read; ) {
        const end = data.indexOf(NEWLINE, from)
        if (end === -1) {
          // Copied: the chunk is read into again.
          pieces.push(Buffer.from(data.subarray(from)))
          break
        }
        let text: string
        if (pieces.length === 0) text = data.toString('utf8', from, end)
        else {
          pieces.push(data.subarray(from, end))
          text = Buffer.concat(pieces).toString('utf8')
          pieces = []
        }
        const offset = lineStart
        const bytes = position + end + 1 - lineStart
        lineStart += bytes
        from = end + 1
        line++
        const record = parseRecord(text)
        if (!record) unreadable.push({ line, taskId: taskIdOfLine(text) })
        else {
          // Whole records follow the lines that did not parse: those were damage, not a torn end.
          for (const { line: at, taskId } of unreadable.splice(0)) visitor.damaged(at, taskId)
          visitor.record(record, offset, bytes)
        }
      }
      position += read
    }
  } finally {
    closeSync(fd)
  }
}

/** The records of the log read again where a scan found them: each segment opened once, until `close`. */
export class SegmentReader {
  readonly #logDir: string
  readonly #files = new Map<number, number>()

  constructor(logDir: string) {
    this.#logDir = logDir
  }

  /**
   * The record of the line at `offset` (`bytes` long, newline included) in `segment`; `undefined` when it is not one.
   */
  read(segment: number, offset: number, bytes: number): LogRecord | undefined {
    let fd = this.#files.get(segment)
    if (fd === undefined) {
      fd = openSync(segmentPath(this.#logDir, segment), 'r')
      this.#files.set(segment, fd)
    }
    const data = Buffer.allocUnsafe(bytes)
    for (let read = 0; read < bytes; ) {
      const got = readSync(fd, data, read, bytes - read, offset + read)
      if (got === 0) return undefined
      read += got
    }
    if (data[bytes - 1] !== NEWLINE) return undefined
    return parseRecord(data.toString('utf8', 0, bytes - 1))
  }

  close(): void {
    for (const fd of this.#files.values()) closeSync(fd)
    this.#files.clear()
  }
}

/**
 * Whether a segment holds nothing: no whole line follows its header (the file is empty, holds its header or part
 * of it, or a line cut short). So are those begun for a write that failed (a full disk), or by a process that
 * stopped before it wrote: there is nothing in them to read back. Reads up to the end of its first record.
 */
export function holdsNothing(path: string): boolean {
  const fd = openSync(path, 'r')
  try {
    const header = Buffer.from(SEGMENT_HEADER)
    const chunk = Buffer.alloc(64 * 1024)
    let read = readSync(fd, chunk, 0, chunk.length, 0)
    const start = Math.min(read, header.length)
    // Not a segment (the restore says so, and leaves it): not this function's to delete.
    if (!chunk.subarray(0, start).equals(header.subarray(0, start))) return false
    if (read < header.length) return true
    for (let position = 0, from = header.length; read > 0; ) {
      if (chunk.subarray(from, read).includes(NEWLINE)) return false
      position += read
      from = 0
      read = readSync(fd, chunk, 0, chunk.length, position)
    }
    return true
  } finally {
    closeSync(fd)
  }
}
