import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

// The file store's log as the tests look at it from outside: the segments under `<dir>/log/`, one JSON record
// a line after a header line.

export const logDir = (dir: string): string => join(dir, 'log')

/** The segment files, oldest first. */
export function segmentsOf(dir: string): string[] {
  return readdirSync(logDir(dir))
    .filter((name) => /^\d+\.jsonl$/.test(name))
    .sort()
    .map((name) => join(logDir(dir), name))
}

/** Bytes of all the segments. */
export function logBytes(dir: string): number {
  return segmentsOf(dir).reduce((sum, path) => sum + sizeOf(path), 0)
}

/** A segment's size; 0 once the store has deleted it (between the listing and the look, while it runs). */
function sizeOf(path: string): number {
  try {
    return statSync(path).size
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0
    throw error
  }
}

/**
 * A segment's records, as lines; none once the store has deleted it between the listing and the look (it deletes a
 * segment whose records are all superseded, while it runs).
 */
function linesOf(segment: string): string[] {
  try {
    return readFileSync(segment, 'utf8').split('\n').slice(1)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

/**
 * The records of every segment in order (of one task, when `taskId` is given), with the segment each is in.
 * A line that is not JSON throws, unless `skipDamaged` (a test that damaged a record itself: the store deletes
 * that segment only once it compacts, which may come before or after the look), or unless it is the log's very
 * last line and `cutTail` (a process killed mid-write leaves that line short; the store ignores it).
 */
export function recordsOf(
  dir: string,
  taskId?: string,
  { skipDamaged = false, cutTail = false } = {},
): Array<{ segment: string; kind: 'snapshot' | 'entries'; n: number; text: string }> {
  const records = []
  const segments = segmentsOf(dir)
  for (const segment of segments) {
    const lines = linesOf(segment)
    const last = segment === segments.at(-1) ? lines.findLastIndex((line) => line !== '') : -1
    for (const [index, text] of lines.entries()) {
      if (!text) continue
      let record: { t: string; n: number }
      try {
        record = JSON.parse(text)
      } catch (error) {
        if (skipDamaged || (cutTail && index === last)) continue
        throw error
      }
      if (taskId && record.t !== taskId) continue
      records.push({
        segment,
        kind: 'snapshot' in record ? ('snapshot' as const) : ('entries' as const),
        n: record.n,
        text,
      })
    }
  }
  return records
}

/**
 * The disk fails under the store: its log directory is now a file, so beginning a segment fails (for root too,
 * which file modes would not stop). The function returned puts the directory back.
 */
export function breakTheLog(dir: string): () => void {
  const away = `${logDir(dir)}.away`
  renameSync(logDir(dir), away)
  writeFileSync(logDir(dir), 'in the way')
  return () => {
    rmSync(logDir(dir))
    renameSync(away, logDir(dir))
  }
}

/** Writes the log's first segment with `records` (one JSON line each) after the header, as a store would have. */
export function writeSegment(dir: string, records: unknown[]): void {
  mkdirSync(logDir(dir), { recursive: true })
  const lines = records.map((record) => `${JSON.stringify(record)}\n`).join('')
  writeFileSync(join(logDir(dir), `${'1'.padStart(12, '0')}.jsonl`), `{"log":"a2a-tasks","version":1}\n${lines}`)
}
