import { readFileSync, readdirSync, rmSync, truncateSync } from 'node:fs'
import { join } from 'node:path'
import { isSettled } from '../core/_lifecycle.js'
import type { Logger } from '../_logger.js'
import type { Task, TaskEvent } from '../types.js'
import { type TaskEntry, foldEntries } from './_fold.js'
import { type JournalRead, parseJournal } from './_journal-format.js'
import { type TaskSnapshot, journalName, parseTaskFileName, readSnapshot, snapshotName } from './_task-files.js'

/** A task read back from its files: its snapshot with its journal folded in. */
export interface RestoredTask {
  task: Task
  /** Its event log, the journal's events after the snapshot's; undefined when the log had been dropped. */
  events: TaskEvent[] | undefined
  keptAfter: number
  /** When it last settled; 0 when entries follow its last settling (it was running). */
  settledAt: number
  /** The journal generation its snapshot names. */
  generation: number
  snapshotBytes: number
  /** The journal's bytes, a torn last line cut off. */
  journalBytes: number
}

/**
 * Reads back every task under `tasksDir`. Deletes what crashes leave behind: temporary files of interrupted
 * snapshot writes, journals a newer snapshot replaced (a crash came between its rename and their deletion) and
 * journals of deleted tasks (the snapshot goes first). Cuts a torn last line off a journal, so the next append
 * starts a line of its own. Skips, with a warning, a task whose files are damaged, and leaves them for a look.
 */
export function restoreTasks(tasksDir: string, logger: Pick<Logger, 'warn'> | undefined): RestoredTask[] {
  const snapshots: string[] = []
  const journals = new Map<string, number[]>()
  for (const entry of readdirSync(tasksDir, { withFileTypes: true })) {
    if (!entry.isFile()) continue
    const file = parseTaskFileName(entry.name)
    if (file?.kind === 'temporary') rmSync(join(tasksDir, entry.name), { force: true })
    else if (file?.kind === 'snapshot') snapshots.push(file.taskId)
    else if (file?.kind === 'journal') journals.set(file.taskId, [...(journals.get(file.taskId) ?? []), file.generation])
  }
  const restored: RestoredTask[] = []
  for (const taskId of snapshots) {
    const generations = journals.get(taskId) ?? []
    journals.delete(taskId)
    const path = join(tasksDir, snapshotName(taskId))
    let task: RestoredTask
    try {
      task = restoreTask(tasksDir, taskId, generations)
    } catch (error) {
      logger?.warn(`Task store: skipping ${path}: ${(error as Error).message}`)
      continue
    }
    restored.push(task)
    for (const generation of generations) {
      if (generation !== task.generation) rmSync(join(tasksDir, journalName(taskId, generation)), { force: true })
    }
  }
  for (const [taskId, generations] of journals) {
    for (const generation of generations) rmSync(join(tasksDir, journalName(taskId, generation)), { force: true })
  }
  return restored
}

function restoreTask(tasksDir: string, taskId: string, journalGenerations: number[]): RestoredTask {
  const snapshotPath = join(tasksDir, snapshotName(taskId))
  const data = readFileSync(snapshotPath)
  const snapshot: TaskSnapshot = readSnapshot(data, taskId)
  const generation = snapshot.journal ?? 0
  const restored: RestoredTask = {
    task: snapshot.task,
    events: snapshot.events,
    keptAfter: snapshot.keptAfter ?? 0,
    settledAt: snapshot.settledAt,
    generation,
    snapshotBytes: data.length,
    journalBytes: 0,
  }
  if (!journalGenerations.includes(generation)) return restored

  const journalPath = join(tasksDir, journalName(taskId, generation))
  let journal: JournalRead
  try {
    journal = parseJournal(readFileSync(journalPath))
  } catch (error) {
    throw new Error(`its journal ${journalName(taskId, generation)} is ${(error as Error).message}`)
  }
  const added: TaskEntry[] = []
  for (const entry of journal.entries) {
    if ('settledAt' in entry) {
      restored.settledAt = entry.settledAt
      continue
    }
    // Entries after the last settling: the task was running when the process stopped.
    restored.settledAt = 0
    added.push(entry)
    if ('event' in entry) restored.events?.push(entry.event)
  }
  foldEntries(restored.task, added)
  // Settled, but the time it settled was on the line a crash cut short: its status says when, near enough.
  if (!restored.settledAt && isSettled(restored.task.status.state)) restored.settledAt = Date.parse(restored.task.status.timestamp) || Date.now()
  if (journal.tornBytes > 0) truncateSync(journalPath, journal.bytes)
  restored.journalBytes = journal.bytes
  return restored
}
