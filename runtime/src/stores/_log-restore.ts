import { flattenArtifactTexts } from '../_artifact-append.js'
import { isSettled } from '../core/_lifecycle.js'
import type { Logger } from '../logger.js'
import type { Task, TaskEvent } from '../types.js'
import { applyEvent } from './_fold.js'
import { readSegment, type SegmentRead, segmentPath } from './_segments.js'
import type { TaskLogRead } from './_task-log.js'

/** A task read back from the log: its newest snapshot with the entries records after it applied. */
export interface RestoredTask extends TaskLogRead {
  task: Task
  /** Its event log; undefined when the log had been dropped. */
  events: TaskEvent[] | undefined
  keptAfter: number
  /** When it last settled; 0 when entries follow its last settling (it was running). */
  settledAt: number
  /** Where its last record read is in the log, counted in records: it orders tasks that settled in the same ms. */
  position: number
}

export interface LogRead {
  tasks: Map<string, RestoredTask>
  /** Segments that could not be read: left as they are, for a look. */
  unreadable: Set<number>
}

/**
 * Reads back every task in the log's segments, oldest segment first. A snapshot replaces what was read of its
 * task; an entries record applies only on top of the record numbered just before it (a record read out of
 * order, after damage, leaves the task as it was before the gap, with a warning); a dropped record forgets
 * the task. Entries of a task whose snapshot is gone are passed over.
 */
export function restoreLog(logDir: string, segments: Iterable<number>, logger: Pick<Logger, 'warn'> | undefined): LogRead {
  const tasks = new Map<string, RestoredTask>()
  const unreadable = new Set<number>()
  let position = 0
  for (const segment of segments) {
    const path = segmentPath(logDir, segment)
    let read: SegmentRead
    try {
      read = readSegment(path)
    } catch (error) {
      logger?.warn(
        `Task store: skipping ${path}: ${(error as Error).message}; it is left for a look, and no segment after it is deleted until it is moved away`,
      )
      unreadable.add(segment)
      continue
    }
    for (const { line, taskId } of read.damaged) {
      logger?.warn(`Task store: ${path} is damaged at line ${line}${taskId ? ` (a record of task ${taskId})` : ''}; the records after it are read`)
    }
    for (const { record, bytes } of read.records) {
      position++
      const known = tasks.get(record.t)
      if ('snapshot' in record) {
        const { task, events, keptAfter, settledAt } = record.snapshot
        tasks.set(record.t, {
          task,
          events: events ?? undefined,
          keptAfter: keptAfter || 0,
          settledAt: settledAt || 0,
          lastRecord: Math.max(record.n, known?.lastRecord ?? 0),
          snapshotBytes: bytes,
          entriesBytes: 0,
          records: new Map([[segment, bytes]]),
          broken: false,
          position,
        })
        continue
      }
      if ('dropped' in record) {
        tasks.delete(record.t)
        continue
      }
      if (!known) continue
      const expected = known.lastRecord + 1
      known.lastRecord = Math.max(known.lastRecord, record.n)
      if (known.broken) continue
      if (record.n !== expected) {
        known.broken = true
        logger?.warn(`Task store: task ${record.t} is read back as it was at its record ${expected - 1}: record ${expected} of it is missing or damaged`)
        continue
      }
      for (const entry of record.entries) {
        if ('settledAt' in entry) {
          known.settledAt = entry.settledAt
          continue
        }
        // Entries after the last settling: the task was running when the process stopped.
        known.settledAt = 0
        if ('event' in entry) {
          applyEvent(known.task, entry.event)
          known.events?.push(entry.event)
        } else known.task.history.push(entry.message)
      }
      known.entriesBytes += bytes
      known.position = position
      known.records.set(segment, (known.records.get(segment) ?? 0) + bytes)
    }
  }
  for (const restored of tasks.values()) {
    flattenArtifactTexts(restored.task)
    // Settled, but the record saying when was lost: its status says when, near enough.
    if (!restored.settledAt && isSettled(restored.task.status.state)) restored.settledAt = Date.parse(restored.task.status.timestamp) || Date.now()
  }
  return { tasks, unreadable }
}
