import type { Task, TaskEvent } from '../types.js'

/**
 * The file store's files under `<dir>/tasks/`. Per task: a snapshot, `<id>.json`, always written whole and
 * atomically; and the journal that continues it, `<id>.<generation>.jsonl`, appended to between snapshots.
 * Each snapshot names the generation of its journal, and a new snapshot takes a new generation: once it is
 * renamed into place, the journal it replaces is no longer read, whether or not it was deleted yet.
 */

export const SNAPSHOT_VERSION = 2

/** What a task's snapshot holds. */
export interface TaskSnapshot {
  /** 1: the format before journals (read still, so an upgrade keeps every task). */
  v: 1 | typeof SNAPSHOT_VERSION
  task: Task
  events: TaskEvent[] | undefined
  /** The events numbered up to this one were dropped from `events` (the log keeps the newest). Absent: 0. */
  keptAfter?: number
  /** When the task last settled (ms since the epoch); 0 while it ran. */
  settledAt: number
  /** The generation of the journal that continues it. Absent (version 1): 0. */
  journal?: number
}

export type TaskFileName = { kind: 'snapshot'; taskId: string } | { kind: 'journal'; taskId: string; generation: number } | { kind: 'temporary' }

const SNAPSHOT = /^([\w-]{1,200})\.json$/
const JOURNAL = /^([\w-]{1,200})\.(\d{1,15})\.jsonl$/
// write-file-atomic's temporary files (`<id>.json.<n>`): writes a crash interrupted.
const TEMPORARY = /^[\w-]{1,200}\.json\.\d+$/

export const snapshotName = (taskId: string): string => `${taskId}.json`
export const journalName = (taskId: string, generation: number): string => `${taskId}.${generation}.jsonl`

/** What a file of the directory is, by its name; `undefined` for a file the store did not write. */
export function parseTaskFileName(name: string): TaskFileName | undefined {
  const snapshot = SNAPSHOT.exec(name)
  if (snapshot) return { kind: 'snapshot', taskId: snapshot[1]! }
  const journal = JOURNAL.exec(name)
  if (journal) return { kind: 'journal', taskId: journal[1]!, generation: Number(journal[2]) }
  return TEMPORARY.test(name) ? { kind: 'temporary' } : undefined
}

/** Parses a snapshot read back; throws, saying why, when it is not one of the task it is named after. */
export function readSnapshot(data: Buffer, taskId: string): TaskSnapshot {
  const file = JSON.parse(data.toString('utf8')) as TaskSnapshot
  if ((file?.v !== 1 && file?.v !== SNAPSHOT_VERSION) || typeof file.task?.id !== 'string') throw new Error(`not a task file of version 1 or ${SNAPSHOT_VERSION}`)
  if (file.task.id !== taskId) throw new Error('the task inside has another id')
  if (file.v === SNAPSHOT_VERSION && !(Number.isSafeInteger(file.journal) && (file.journal as number) >= 0)) throw new Error('it names no journal generation')
  return file
}

/** The snapshot's JSON, continued by the journal of `generation`. */
export function snapshotJson(task: Task, events: TaskEvent[] | undefined, keptAfter: number, settledAt: number, generation: number): string {
  const file: TaskSnapshot = { v: SNAPSHOT_VERSION, task, events, ...(keptAfter && { keptAfter }), settledAt, journal: generation }
  return JSON.stringify(file)
}
