import { describeUpdate } from './exchange'
import type { Dialect } from './model'
import type { WireEvent } from './rpc'
import { type Timeline, timelines } from './state'

/** Raw text all timelines may hold together; the oldest task's timeline goes first past it. */
const MAX_TIMELINE_CHARS = 8 * 1024 * 1024
/** Events one timeline shows; past it the oldest go, counted (a stream of 100,000 chunks must not freeze the tab). */
const MAX_ENTRIES = 2000

/**
 * Puts a wire event on its task's timeline. The timeline object is appended to in place and the map replaced
 * (not copied entry by entry), so a long stream costs each event its own entry, not the whole history again.
 */
export function record(taskId: string, dialect: Dialect, started: number, event: WireEvent): void {
  const map = timelines.value
  let timeline = map.get(taskId)
  if (!timeline) {
    timeline = { taskId, dialect, t0: started, entries: [], chars: 0, dropped: 0 } satisfies Timeline
    map.set(taskId, timeline)
  }
  timeline.entries.push({ t: started + event.t - timeline.t0, direction: event.direction, raw: event.raw, summary: event.updates.map(describeUpdate) })
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
