import { flattenArtifactTexts, isPlainText } from '../../_artifact-append.js'
import { artifactHeapBytes, messageHeapBytes, partsHeapBytes, stringHeapBytes } from '../../_heap-bytes.js'
import { isSettled, isTerminal } from '../../core/_lifecycle.js'
import type { Logger } from '../../logger.js'
import type { Artifact, Task, TaskEvent, TaskState, TaskStatus } from '../../types.js'
import { applyEvent } from '../_fold.js'
import type { LogRecord } from '../_log-records.js'
import { failStopped } from '../_stopped.js'
import { eventBytes, ownerBytes, taskBytes } from '../_stored-bytes.js'
import { type SegmentReader, scanSegment, segmentPath } from './_segments.js'
import type { TaskLogRead } from './_task-log.js'

/**
 * The file store's start, in two passes, so that what it holds grows with the tasks it keeps, not with the log:
 *
 * 1. `indexLog` reads every segment a line at a time, and keeps of each task only a small index (`IndexedTask`):
 *    where its records are, its place in the settled order, and what it will cost the memory store, priced record
 *    by record as the store prices tasks and events (`_stored-bytes.ts`). No task is built.
 * 2. `planRestore` runs the memory store's retention on those prices (`maxTasks`, `maxBytes`, the ended tasks that
 *    keep their event log, the time-to-live), oldest settled first, and says which tasks it would drop; then the
 *    store builds only the others (`readTaskBack`, from the records the index points at), one at a time, and hands
 *    each to the memory store, whose own retention has the last word.
 */

/** A task as the first pass leaves it: where it is in the log, and its price. */
export interface IndexedTask extends TaskLogRead {
  id: string
  contextId: string
  /** When it last settled; 0 when entries follow its last settling (it was running). */
  settledAt: number
  /** Where its last record read is in the log, counted in records: it orders tasks that settled in the same ms. */
  position: number
  /** Its status as the records read leave it. */
  state: TaskState
  timestamp: string
  /** Whether its event log was kept (a snapshot says null once it was dropped). */
  logged: boolean
  /**
   * Its bytes as the memory store counts them, priced from its records: the task, and its events before the event log's
   * window.
   */
  taskBytes: number
  /** Of `taskBytes`, a status message outside the history (the next status replaces it). */
  statusBytes: number
  eventsBytes: number
  lastEventBytes: number
  /** Of `taskBytes`, each artifact's (a later one of the same id replaces it); undefined while it has none. */
  artifacts: Map<string, PricedArtifact> | undefined
  /** Where to read it back: `[segment, offset, bytes]` of its snapshot, then of each entries record applied on top. */
  at: number[]
}

export interface LogIndex {
  tasks: Map<string, IndexedTask>
  /** Segments that could not be read: left as they are, for a look. */
  unreadable: Set<number>
}

interface PricedArtifact {
  bytes: number
  /** Its last part is plain text: appended text joins it. */
  joins: boolean
}

/** A task read back from the log: its newest snapshot with the entries records after it applied. */
export interface RestoredTask {
  task: Task
  /** Its event log; undefined when the log had been dropped. */
  events: TaskEvent[] | undefined
  keptAfter: number
  /** Whose task it is (`TaskSnapshot.owner`); undefined for a task created without an owner. */
  owner: string | undefined
}

/**
 * The first pass: indexes every task in the log's segments, oldest segment first, a line at a time. A snapshot
 * replaces what was read of its task; an entries record applies only on top of the record numbered just before it
 * (a record read out of order, after damage, leaves the task as it was before the gap, with a warning); a dropped
 * record forgets the task. Entries of a task whose snapshot is gone are passed over.
 */
export function indexLog(
  logDir: string,
  segments: Iterable<number>,
  logger: Pick<Logger, 'warn'> | undefined,
): LogIndex {
  const tasks = new Map<string, IndexedTask>()
  const unreadable = new Set<number>()
  let position = 0
  for (const segment of segments) {
    const path = segmentPath(logDir, segment)
    const record = (record: LogRecord, offset: number, bytes: number): void => {
      position++
      const known = tasks.get(record.t)
      if ('snapshot' in record) {
        tasks.set(record.t, indexSnapshot(record, known, segment, offset, bytes, position))
        return
      }
      if ('dropped' in record) {
        tasks.delete(record.t)
        return
      }
      if (!known) return
      const expected = known.lastRecord + 1
      known.lastRecord = Math.max(known.lastRecord, record.n)
      if (known.broken) return
      if (record.n !== expected) {
        known.broken = true
        logger?.warn(
          `Task store: task ${record.t} is read back as it was at its record ${expected - 1}: record ${expected} of it is missing or damaged`,
        )
        return
      }
      for (const entry of record.entries) {
        if ('settledAt' in entry) {
          known.settledAt = entry.settledAt
          continue
        }
        // Entries after the last settling: the task was running when the process stopped.
        known.settledAt = 0
        if ('event' in entry) priceEvent(known, entry.event)
        else known.taskBytes += messageHeapBytes(entry.message)
      }
      known.entriesBytes += bytes
      known.position = position
      known.records.set(segment, (known.records.get(segment) ?? 0) + bytes)
      known.at.push(segment, offset, bytes)
    }
    const damaged = (line: number, taskId: string | undefined): void => {
      logger?.warn(
        `Task store: ${path} is damaged at line ${line}${taskId ? ` (a record of task ${taskId})` : ''}; the records after it are read`,
      )
    }
    try {
      scanSegment(path, { record, damaged })
    } catch (error) {
      logger?.warn(
        `Task store: skipping ${path}: ${(error as Error).message}; it is left for a look, and no segment after it is deleted until it is moved away`,
      )
      unreadable.add(segment)
    }
  }
  for (const indexed of tasks.values()) {
    // Settled, but the record saying when was lost: its status says when, near enough.
    if (!indexed.settledAt && isSettled(indexed.state)) indexed.settledAt = Date.parse(indexed.timestamp) || Date.now()
  }
  return { tasks, unreadable }
}

function indexSnapshot(
  record: Extract<LogRecord, { snapshot: unknown }>,
  known: IndexedTask | undefined,
  segment: number,
  offset: number,
  bytes: number,
  position: number,
): IndexedTask {
  const { task, events, settledAt, owner } = record.snapshot
  const status = task.status as TaskStatus | undefined
  const message = status?.message
  let eventsBytes = 0
  for (const event of events ?? []) eventsBytes += eventBytes(event)
  const last = events?.at(-1)
  return {
    id: record.t,
    contextId: task.contextId,
    settledAt: settledAt || 0,
    position,
    state: status?.state ?? 'submitted',
    timestamp: status?.timestamp ?? '',
    logged: events !== null,
    taskBytes: taskBytes(task) + ownerBytes(owner),
    // As `taskBytes` counts it: a message of the status that is not the history's own object.
    statusBytes: message && !task.history.includes(message) ? messageHeapBytes(message) : 0,
    eventsBytes,
    lastEventBytes: last ? eventBytes(last) : 0,
    artifacts:
      task.artifacts.length === 0
        ? undefined
        : new Map(task.artifacts.map((artifact) => [artifact.artifactId, priced(artifact)])),
    at: [segment, offset, bytes],
    lastRecord: Math.max(record.n, known?.lastRecord ?? 0),
    snapshotBytes: bytes,
    entriesBytes: 0,
    records: new Map([[segment, bytes]]),
    broken: false,
  }
}

/** What an event read from an entries record adds to its task's price, as folding it will change the task. */
function priceEvent(indexed: IndexedTask, event: TaskEvent): void {
  if (indexed.logged) {
    const bytes = eventBytes(event)
    indexed.eventsBytes += bytes
    indexed.lastEventBytes = bytes
  }
  if (event.kind === 'artifact-update') {
    priceArtifact(indexed, event.artifact, event.append === true)
    return
  }
  const { status } = event
  if (!status) return
  indexed.state = status.state
  indexed.timestamp = status.timestamp
  indexed.taskBytes -= indexed.statusBytes
  indexed.statusBytes = 0
  if (!status.message) return
  const bytes = messageHeapBytes(status.message)
  indexed.taskBytes += bytes
  // A question to the user joins the history: the same object, counted there.
  if (status.state !== 'input-required' && status.state !== 'auth-required') indexed.statusBytes = bytes
}

/** An artifact as `applyEvent` folds it in: a new one, one replacing the artifact of its id, or a chunk appended. */
function priceArtifact(indexed: IndexedTask, chunk: Artifact, append: boolean): void {
  indexed.artifacts ??= new Map()
  const artifacts = indexed.artifacts
  const existing = artifacts.get(chunk.artifactId)
  if (append && existing) {
    const parts = chunk.parts
    let bytes = 0
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!
      // Text after text is joined to it (`appendParts`): the characters, not a part more.
      bytes +=
        isPlainText(part) && (i === 0 ? existing.joins : isPlainText(parts[i - 1]))
          ? joinedBytes(part.text)
          : partsHeapBytes([part]) - EMPTY_PARTS
    }
    if (parts.length > 0) existing.joins = isPlainText(parts.at(-1))
    existing.bytes += bytes
    indexed.taskBytes += bytes
    return
  }
  const replacing = priced(chunk)
  indexed.taskBytes += replacing.bytes - (existing?.bytes ?? 0)
  artifacts.set(chunk.artifactId, replacing)
}

const EMPTY_PARTS = partsHeapBytes([])
// A string's heap less its characters.
const STRING_HEADER = stringHeapBytes('xx') - 2

/** What `text` adds to the text it is joined to once the two are one string. */
function joinedBytes(text: string): number {
  if (text.length > 1) return stringHeapBytes(text) - STRING_HEADER
  return text.length === 1 && text.charCodeAt(0) > 0xff ? 2 : text.length
}

function priced(artifact: Artifact): PricedArtifact {
  return { bytes: artifactHeapBytes(artifact), joins: isPlainText(artifact.parts.at(-1)) }
}

/** The memory store's settings that decide what it keeps. */
export interface Retention {
  maxTasks: number
  maxBytes: number
  eventLogBytes: number
  endedLogs: number
  ttlMs: number
}

export interface RestorePlan {
  /**
   * The tasks to put back, in the order the memory store is to be given them: the settled ones oldest settled
   * first, then those that were running (they are failed, settled now). Those settled longer ago than the
   * time-to-live are not in it.
   */
  order: IndexedTask[]
  /** Of `order`, those retention would drop: not to be built. */
  dropped: Set<IndexedTask>
}

/** The price of the task left running once it is failed (`failStopped`): its status replaced, an event more. */
function stoppedPrice(indexed: IndexedTask): { taskBytes: number; eventsBytes: number; lastEventBytes: number } {
  const task = {
    id: indexed.id,
    contextId: indexed.contextId,
    status: { state: indexed.state, timestamp: indexed.timestamp },
  } as Task
  const failed = failStopped(task, [], 0)![0]!
  const bytes = eventBytes(failed)
  return {
    taskBytes: indexed.taskBytes - indexed.statusBytes + messageHeapBytes(task.status.message!),
    eventsBytes: indexed.eventsBytes + bytes,
    lastEventBytes: bytes,
  }
}

interface Planned {
  indexed: IndexedTask
  taskBytes: number
  logBytes: number
  /** Whether it has an event log (one of 0 bytes too). */
  logged: boolean
  kept: boolean
  slot: number
}

/**
 * The tasks of `index` retention keeps, decided from their prices before any is built: the memory store's
 * `restore` and retention (`memory.ts`) run on numbers, in the same order. A task priced larger than the whole
 * budget is dropped without being built.
 */
export function planRestore(index: LogIndex, retention: Retention, now: number): RestorePlan {
  const settled: IndexedTask[] = []
  const stopped: IndexedTask[] = []
  for (const indexed of [...index.tasks.values()].sort(
    (a, b) => a.settledAt - b.settledAt || a.position - b.position,
  )) {
    if (indexed.settledAt && now - indexed.settledAt > retention.ttlMs) continue
    if (isSettled(indexed.state)) settled.push(indexed)
    else stopped.push(indexed)
  }
  const order = settled.concat(stopped)
  const queue: Planned[] = []
  let head = 0
  const ended: Array<Planned | undefined> = new Array(retention.endedLogs)
  let endedNext = 0
  let count = 0
  let bytes = 0
  const remove = (planned: Planned): void => {
    planned.kept = false
    count--
    bytes -= planned.taskBytes + planned.logBytes
    if (planned.slot >= 0) ended[planned.slot] = undefined
  }
  for (const indexed of order) {
    const wasRunning = !isSettled(indexed.state)
    const logged = indexed.logged
    const price = wasRunning ? stoppedPrice(indexed) : indexed
    const planned: Planned = {
      indexed,
      taskBytes: price.taskBytes,
      logBytes: logged ? windowBytes(price.eventsBytes, price.lastEventBytes, retention.eventLogBytes) : 0,
      logged,
      kept: true,
      slot: -1,
    }
    // An ended task keeps its event log while it is among the last `endedLogs` to end (none: at once without it).
    const ends = logged && (wasRunning || isTerminal(indexed.state))
    if (ends && retention.endedLogs === 0) planned.logBytes = 0
    // Larger than the whole budget: never built, so never in the store (nor in its ring of ended tasks).
    if (planned.taskBytes + planned.logBytes > retention.maxBytes) {
      planned.kept = false
      queue.push(planned)
      continue
    }
    count++
    bytes += planned.taskBytes + planned.logBytes
    queue.push(planned)
    if (ends && retention.endedLogs > 0) {
      const oldest = ended[endedNext]
      if (oldest) {
        oldest.slot = -1
        bytes -= oldest.logBytes
        oldest.logBytes = 0
      }
      ended[endedNext] = planned
      planned.slot = endedNext
      endedNext = (endedNext + 1) % retention.endedLogs
    }
    const overCount = count > retention.maxTasks
    const overBytes = bytes > retention.maxBytes
    if (!overCount && !overBytes) continue
    const countTarget = overCount ? retention.maxTasks - Math.floor(retention.maxTasks / 64) : retention.maxTasks
    const byteTarget = overBytes ? retention.maxBytes - Math.floor(retention.maxBytes / 16) : retention.maxBytes
    for (; head < queue.length && (count > countTarget || bytes > byteTarget); head++) {
      if (queue[head]!.kept) remove(queue[head]!)
    }
  }
  const dropped = new Set<IndexedTask>()
  for (const planned of queue) if (!planned.kept) dropped.add(planned.indexed)
  return { order, dropped }
}

/** The bytes an event log keeps of events of `bytes`, the newest of `last`: at most its window, or the newest alone. */
function windowBytes(bytes: number, last: number, window: number): number {
  if (bytes <= window) return bytes
  return Math.max(window, last)
}

/** What a task will cost the memory store, as priced from its records (for the warning that it is dropped). */
export function plannedBytes(indexed: IndexedTask, retention: Retention): number {
  return (
    indexed.taskBytes +
    (indexed.logged ? windowBytes(indexed.eventsBytes, indexed.lastEventBytes, retention.eventLogBytes) : 0)
  )
}

/**
 * The second pass, for one task: its snapshot and the entries records the index applied on top of it, read again
 * where the first pass found them and folded. Throws when a record is no longer what the first pass read.
 */
export function readTaskBack(indexed: IndexedTask, reader: SegmentReader): RestoredTask {
  const { at, id } = indexed
  const first = reader.read(at[0]!, at[1]!, at[2]!)
  if (!first || first.t !== id || !('snapshot' in first))
    throw new Error(`its snapshot is no longer where it was read (segment ${at[0]}, byte ${at[1]})`)
  const { task, events, keptAfter, owner } = first.snapshot
  const restored: RestoredTask = { task, events: events ?? undefined, keptAfter: keptAfter || 0, owner }
  for (let i = 3; i < at.length; i += 3) {
    const record = reader.read(at[i]!, at[i + 1]!, at[i + 2]!)
    if (!record || record.t !== id || !('entries' in record))
      throw new Error(`its record is no longer where it was read (segment ${at[i]}, byte ${at[i + 1]})`)
    for (const entry of record.entries) {
      if ('settledAt' in entry) continue
      if ('event' in entry) {
        applyEvent(task, entry.event)
        restored.events?.push(entry.event)
      } else task.history.push(entry.message)
    }
  }
  flattenArtifactTexts(task)
  return restored
}
