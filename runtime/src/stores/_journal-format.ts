import type { TaskEntry } from './_fold.js'

/**
 * A task's journal: newline-delimited JSON, one entry a line, in the order the task gained them. An entry is an
 * event of its log, a message that joined its history (a follow-up), or the time the task settled (after the
 * event that settled it).
 */
export type JournalEntry = TaskEntry | { settledAt: number }

/** The lines of `entries`, each ended by a newline. */
export function journalLines(entries: readonly JournalEntry[]): string {
  let text = ''
  for (const entry of entries) text += `${JSON.stringify(entry)}\n`
  return text
}

export interface JournalRead {
  entries: JournalEntry[]
  /** Bytes of the whole entries read: where the journal ends once a torn last line is cut off. */
  bytes: number
  /** Bytes after them: a line a crash cut short (or the zeros a power cut may leave instead). */
  tornBytes: number
}

const NEWLINE = 0x0a

/**
 * Parses a journal. An append that a crash interrupted leaves at most its end unreadable: an entry without its
 * newline, or lines that do not parse with nothing whole after them. Those are left out (`tornBytes`), as the
 * client was never told they were saved. A line that does not parse with whole entries after it is damage no
 * crash of this store makes: it throws.
 */
export function parseJournal(data: Buffer): JournalRead {
  const entries: JournalEntry[] = []
  let bytes = 0
  let damagedLine = 0
  let line = 0
  for (let start = 0; start < data.length; ) {
    const end = data.indexOf(NEWLINE, start)
    if (end === -1) break
    line++
    const entry = parseEntry(data.toString('utf8', start, end))
    if (!entry) damagedLine ||= line
    else if (damagedLine) throw new Error(`damaged at line ${damagedLine}, with whole entries after it`)
    else {
      entries.push(entry)
      bytes = end + 1
    }
    start = end + 1
  }
  return { entries, bytes, tornBytes: data.length - bytes }
}

function parseEntry(line: string): JournalEntry | undefined {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const entry = value as Record<string, unknown>
  if (isObject(entry.event)) {
    const event = entry.event
    return (event.kind === 'status-update' || event.kind === 'artifact-update') && typeof event.seq === 'number' ? (entry as JournalEntry) : undefined
  }
  if (isObject(entry.message)) return Array.isArray(entry.message.parts) ? (entry as JournalEntry) : undefined
  return typeof entry.settledAt === 'number' ? (entry as JournalEntry) : undefined
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
