import { describeUpdate } from './exchange'
import type { Dialect, Update } from './model'
import type { WireEvent } from './rpc'
import { type Timeline, type TimelineEntry, timelines, tracing } from './state'
import { latestTraceOf } from './traces'

/** Raw text all timelines may hold together; the oldest task's timeline goes first past it. */
const MAX_TIMELINE_CHARS = 8 * 1024 * 1024
/** Events one timeline shows; past it the oldest go, counted (a stream of 100,000 chunks must not freeze the tab). */
const MAX_ENTRIES = 2000

const isTaskUpdate = (update: Update) =>
  update.kind === 'task' || update.kind === 'status' || update.kind === 'artifact'

/**
 * Puts a wire event on its task's timeline, as happening `at` (ms since the epoch; undefined: not known). A new
 * timeline counts its offsets from its first event, the page's request, unless `replayOf` gives the task's
 * creation (or no time at all: the earliest known event's then). The timeline object is appended to in place and
 * the map replaced (not copied entry by entry), so a long stream costs each event its own entry, not the whole
 * history again.
 */
export function record(
  taskId: string,
  dialect: Dialect,
  event: WireEvent,
  at: number | undefined,
  replayOf?: { createdAt?: number },
): void {
  const map = timelines.value
  let timeline = map.get(taskId)
  if (!timeline) {
    timeline = { taskId, dialect, replayed: !!replayOf, entries: [], chars: 0, dropped: 0 } satisfies Timeline
    const t0 = replayOf ? replayOf.createdAt : at
    if (t0 !== undefined) timeline.t0 = t0
    map.set(taskId, timeline)
  }
  const entry: TimelineEntry = {
    direction: event.direction,
    raw: event.raw,
    summary: event.updates.map(describeUpdate),
  }
  if (at !== undefined) entry.at = at
  if (event.seq !== undefined) entry.seq = event.seq
  else if (tracing.value && event.direction !== 'request' && event.updates.some(isTaskUpdate))
    // An answer without an event number (a task read, a send's answer) shows the task as its latest event left it:
    // asked of the dev server now, after the answer (the live channel may not have told of that event yet).
    void latestTraceOf(taskId).then((traceId) => {
      if (!traceId) return
      entry.traceId = traceId
      if (timelines.value.get(taskId)?.entries.includes(entry)) timelines.set(new Map(timelines.value))
    })
  timeline.entries.push(entry)
  timeline.chars += event.raw.length
  while (timeline.entries.length > MAX_ENTRIES) {
    timeline.chars -= timeline.entries.shift()!.raw.length
    timeline.dropped++
  }
  let total = 0
  for (const kept of map.values()) total += kept.chars
  for (const [id, kept] of map) {
    if (total <= MAX_TIMELINE_CHARS || id === taskId) break
    total -= kept.chars
    map.delete(id)
  }
  timelines.set(new Map(map))
}
