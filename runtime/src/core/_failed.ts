import type { Task, TaskStatusEvent } from '../types.js'
import { isoNow } from './_clock.js'
import { newId } from './_ids.js'

/**
 * Ends `task` as failed with `reason`, when the runtime must end it rather than its agent (the process or the
 * instance that ran it stopped): its status becomes `failed`, with the reason as the agent's message, and the
 * final event that says so, numbered `seq`, is returned for the task's event log.
 */
export function failWithReason(task: Task, reason: string, seq: number): TaskStatusEvent {
  const status: Task['status'] = {
    state: 'failed',
    timestamp: isoNow(),
    message: {
      kind: 'message',
      messageId: newId(),
      role: 'agent',
      parts: [{ kind: 'text', text: reason }],
      contextId: task.contextId,
      taskId: task.id,
    },
  }
  task.status = status
  return { kind: 'status-update', seq, taskId: task.id, contextId: task.contextId, status, final: true }
}
