import { setTimeout as sleep } from 'node:timers/promises'
import type { A2AClient } from '../../client/client.js'
import { A2AClientFailure } from '../../client/errors.js'
import { INTERRUPTED_STATES, type Task, type TaskState, TERMINAL_STATES } from '../../client/types.js'

/** The task has ended, or waits for the caller (input or authorization): waiting stops. */
export const settled = (state: string | undefined): boolean =>
  TERMINAL_STATES.has(state as TaskState) || INTERRUPTED_STATES.has(state as TaskState)

export interface PollOptions {
  /** The first pause between reads. */
  intervalMs: number
  /** When waiting stops with a timeout failure (Date.now() scale); none waits until the task settles. */
  deadline: number | undefined
  signal: AbortSignal
  /** Each task read that has not settled yet. */
  onUpdate?: (task: Task) => void
  historyLength?: number
}

/** The pause grows by half each read, to four times the interval at most: a long task costs few reads. */
const BACKOFF = 1.5
const MOST_INTERVALS = 4

/**
 * Reads the task until it ends or waits for the caller (TASK_STATE_UNSPECIFIED and any state A2A does not define
 * count as neither: reading goes on until the deadline). Never reads faster than the interval.
 */
export async function pollTask(client: A2AClient, taskId: string, options: PollOptions): Promise<Task> {
  let pause = options.intervalMs
  for (;;) {
    const task = await client.getTask(
      { id: taskId, ...(options.historyLength !== undefined && { historyLength: options.historyLength }) },
      { signal: options.signal },
    )
    if (settled(task.status?.state)) return task
    options.onUpdate?.(task)
    const left = options.deadline === undefined ? pause : options.deadline - Date.now()
    if (left <= 0) throw timedOut(taskId, task.status?.state)
    await sleep(Math.min(pause, left), undefined, { signal: options.signal })
    pause = Math.min(pause * BACKOFF, options.intervalMs * MOST_INTERVALS)
  }
}

function timedOut(taskId: string, state: string | undefined): A2AClientFailure {
  return new A2AClientFailure(
    'timeout',
    `--timeout ran out before task ${taskId} ended${state ? ` (it was ${state.replace(/^TASK_STATE_/, '')})` : ''}; the task goes on`,
  )
}

/** An AbortSignal for the command's signal and its deadline together. */
export function untilDeadline(signal: AbortSignal, deadline: number | undefined): AbortSignal {
  if (deadline === undefined) return signal
  return AbortSignal.any([signal, AbortSignal.timeout(Math.max(1, deadline - Date.now()))])
}

/** An abort by the deadline's own timer, as the timeout failure it is; anything else unchanged. */
export function timeoutOr(error: unknown, deadline: number | undefined): unknown {
  const byDeadline = deadline !== undefined && Date.now() >= deadline && (error as Error)?.name === 'TimeoutError'
  return byDeadline
    ? new A2AClientFailure('timeout', '--timeout ran out before the task ended; the task goes on')
    : error
}
