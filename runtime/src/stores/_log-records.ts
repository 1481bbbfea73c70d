import { isObject } from '../_is-object.js'
import type { Task, TaskEvent } from '../types.js'
import type { TaskEntry } from './_fold.js'

/**
 * The file store's records: one line of JSON each in the log's segments, every one about one task (`t`) and
 * numbered in that task's order (`n`, one more than its previous record's). A snapshot is the whole task; an
 * entries record is what the task gained since its previous record (its events, the messages that joined its
 * history outside any event, and when it settled), to be applied in order on top of it. A dropped record says
 * that retention let the task go: the records before it are not read back.
 */
export type LogEntry = TaskEntry | { settledAt: number }

export interface TaskSnapshot {
  task: Task
  /** Its event log (the newest events); null once the log was dropped. */
  events: TaskEvent[] | null
  /** The events numbered up to this one were dropped from `events` (0: none). */
  keptAfter: number
  /** When the task last settled (ms since the epoch); 0 while it ran. */
  settledAt: number
  /**
   * The `Principal.id` of the caller that created the task, in every snapshot of it (compaction writes new ones);
   * absent when it was created without one, as in the records written before owners were kept: read back unowned.
   */
  owner?: string
}

export type LogRecord =
  | { t: string; n: number; snapshot: TaskSnapshot }
  | { t: string; n: number; entries: LogEntry[] }
  | { t: string; n: number; dropped: true }

/** A segment's first line: what the file is, and the version of its records. */
export const SEGMENT_HEADER = '{"log":"a2a-tasks","version":1}\n'

export const snapshotLine = (taskId: string, n: number, snapshot: TaskSnapshot): string =>
  `{"t":${JSON.stringify(taskId)},"n":${n},"snapshot":${JSON.stringify(snapshot)}}\n`

export const entriesLine = (taskId: string, n: number, entries: readonly LogEntry[]): string =>
  `{"t":${JSON.stringify(taskId)},"n":${n},"entries":${JSON.stringify(entries)}}\n`

export const droppedLine = (taskId: string, n: number): string =>
  `{"t":${JSON.stringify(taskId)},"n":${n},"dropped":true}\n`

/** The record a line holds; `undefined` when it is not one (damaged, or cut short). */
export function parseRecord(line: string): LogRecord | undefined {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return undefined
  }
  if (!isObject(value) || typeof value.t !== 'string' || !Number.isSafeInteger(value.n)) return undefined
  if (isObject(value.snapshot)) {
    const { task, events, owner } = value.snapshot
    return isObject(task) &&
      typeof task.id === 'string' &&
      (events === null || Array.isArray(events)) &&
      (owner === undefined || typeof owner === 'string')
      ? (value as LogRecord)
      : undefined
  }
  if (value.dropped === true) return value as LogRecord
  return Array.isArray(value.entries) && value.entries.every(isEntry) ? (value as LogRecord) : undefined
}

/** The task a line names at its start, for a warning about a line that does not parse. */
export function taskIdOfLine(line: string): string | undefined {
  const match = /^\{"t":("(?:[^"\\]|\\.){1,400}")/.exec(line)
  if (!match) return undefined
  try {
    return JSON.parse(match[1]!) as string
  } catch {
    return undefined
  }
}

function isEntry(entry: unknown): entry is LogEntry {
  if (!isObject(entry)) return false
  if (isObject(entry.event)) {
    const event = entry.event
    return (event.kind === 'status-update' || event.kind === 'artifact-update') && typeof event.seq === 'number'
  }
  if (isObject(entry.message)) return Array.isArray(entry.message.parts)
  return typeof entry.settledAt === 'number'
}
