import { authHeaders } from './auth-headers'
import { AGENT_BASE } from './base'
import type { Update } from './model'
import type { WireEvent } from './rpc'
import type { EventTimes } from './state'

/** When the dev server saw each event of the task; undefined when it cannot say (it no longer holds the task's). */
export async function fetchEventTimes(taskId: string): Promise<EventTimes | undefined> {
  try {
    const response = await fetch(`${AGENT_BASE}__a2a/api/tasks/${encodeURIComponent(taskId)}/times`, {
      headers: authHeaders(),
      cache: 'no-store',
    })
    return response.ok ? ((await response.json()) as EventTimes) : undefined
  } catch {
    return undefined // the dev server is gone: the replay itself will say so
  }
}

/** The time a task's event carries, in ms since the epoch: a status change's timestamp (artifacts carry none). */
function carriedTime(updates: Update[]): number | undefined {
  for (const update of updates) {
    const stamp =
      update.kind === 'status' ? update.timestamp : update.kind === 'task' ? update.task.timestamp : undefined
    const at = stamp === undefined ? Number.NaN : Date.parse(stamp)
    if (!Number.isNaN(at)) return at
  }
  return undefined
}

/**
 * When a replayed event happened. A replay reads every kept event back at once, so the moment the page received
 * one says nothing of it: the time the dev server recorded for its number, else the time it carries, else, for an
 * event newer than the dev server's answer (it happened during the replay, live), when it arrived. Otherwise
 * undefined, shown as "time not known", never an invented time. The request and the answers that are no task
 * event (an error, a broken stream) are the replay's own, at their own time.
 */
export function replayedAt(event: WireEvent, known: EventTimes | undefined): number | undefined {
  if (event.direction !== 'frame' || event.seq === undefined) return event.at
  const recorded = known?.at[event.seq - known.firstSeq]
  if (typeof recorded === 'number') return recorded
  const carried = carriedTime(event.updates)
  if (carried !== undefined) return carried
  return known && event.seq > known.lastSeq ? event.at : undefined
}
