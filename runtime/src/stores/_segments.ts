import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { type LogRecord, parseRecord, SEGMENT_HEADER, taskIdOfLine } from './_log-records.js'

/**
 * The file store's log: the segments `<dir>/log/<number>.jsonl`, numbered in the order they were begun. Each
 * starts with `SEGMENT_HEADER`, then one record a line (see `_log-records.ts`).
 */
const SEGMENT = /^(\d{1,15})\.jsonl$/

export const segmentPath = (logDir: string, segment: number): string => join(logDir, `${String(segment).padStart(12, '0')}.jsonl`)

/** The segments in `logDir` and their sizes, by number. */
export function listSegments(logDir: string): Map<number, number> {
  const sizes = new Map<number, number>()
  for (const name of readdirSync(logDir)) {
    const match = SEGMENT.exec(name)
    if (match) sizes.set(Number(match[1]), statSync(join(logDir, name)).size)
  }
  return new Map([...sizes].sort((a, b) => a[0] - b[0]))
}

interface ReadRecord {
  record: LogRecord
  /** The bytes of its line, newline included. */
  bytes: number
}

export interface SegmentRead {
  records: ReadRecord[]
  /** Lines that do not parse with whole records after them: damage no crash of this store makes. */
  damaged: Array<{ line: number; taskId: string | undefined }>
}

const NEWLINE = 0x0a

/**
 * Reads a segment's records. A write that a crash interrupted leaves at most the segment's end unreadable (a
 * line without its newline, or lines that do not parse with nothing whole after them, such as the zeros a
 * power cut may leave): those are left out silently, as no client was told they were saved. A line that does
 * not parse with whole records after it is reported in `damaged`. Throws for a file that is not a segment.
 */
export function readSegment(path: string): SegmentRead {
  const data = readFileSync(path)
  if (data.length === 0) return { records: [], damaged: [] }
  if (!data.subarray(0, SEGMENT_HEADER.length).equals(Buffer.from(SEGMENT_HEADER))) {
    // Cut short while its header was written: a segment begun by a crash's last moment.
    if (Buffer.from(SEGMENT_HEADER).subarray(0, data.length).equals(data)) return { records: [], damaged: [] }
    throw new Error('it is not a segment of this version of the task log')
  }
  const records: ReadRecord[] = []
  const unreadable: Array<{ line: number; taskId: string | undefined }> = []
  const damaged: Array<{ line: number; taskId: string | undefined }> = []
  let line = 1
  for (let start = SEGMENT_HEADER.length; start < data.length; ) {
    const end = data.indexOf(NEWLINE, start)
    if (end === -1) break
    line++
    const text = data.toString('utf8', start, end)
    const record = parseRecord(text)
    if (!record) unreadable.push({ line, taskId: taskIdOfLine(text) })
    else {
      // Whole records follow the lines that did not parse: those were damage, not a torn end.
      damaged.push(...unreadable.splice(0))
      records.push({ record, bytes: end + 1 - start })
    }
    start = end + 1
  }
  return { records, damaged }
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
