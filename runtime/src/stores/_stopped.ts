import { failWithReason } from '../core/_failed.js'
import type { Task, TaskEvent } from '../types.js'

const STOPPED_REASON = 'The server stopped before the task finished'
/**
 * The stored events end at the task's last write; the process that stopped may have sent more. The repair is
 * numbered this far past the last stored one, so a client resuming from one of those still receives it.
 */
const REPAIR_GAP = 2 ** 20

/**
 * Ends a task a durable store read back unsettled (the process or object that ran its agent code is gone):
 * failed with a reason, its event log closed by the final event.
 */
export function failStopped(task: Task, events: TaskEvent[] | undefined, keptAfter: number): TaskEvent[] | undefined {
  const failed = failWithReason(task, STOPPED_REASON, (events?.at(-1)?.seq ?? keptAfter) + REPAIR_GAP)
  if (!events) return undefined
  events.push(failed)
  return events
}
