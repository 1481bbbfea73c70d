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
  /** Ctrl-C, and the deadline's own timer (the command's signal): either stops the wait at once. */
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
  let state: string | undefined
  try {
    for (;;) {
      const task = await client.getTask(
        { id: taskId, ...(options.historyLength !== undefined && { historyLength: options.historyLength }) },
        { signal: options.signal },
      )
      state = task.status?.state
      if (settled(state)) return task
      options.onUpdate?.(task)
      const left = options.deadline === undefined ? pause : options.deadline - Date.now()
      if (left <= 0) throw timedOut(taskId, state)
      await sleep(Math.min(pause, left), undefined, { signal: options.signal })
      pause = Math.min(pause * BACKOFF, options.intervalMs * MOST_INTERVALS)
    }
  } catch (error) {
    // The deadline's timer may abort a read or the pause before the check above: the same timeout.
    throw byDeadline(options.signal) ? timedOut(taskId, state) : error
  }
}

function timedOut(taskId: string, state: string | undefined): A2AClientFailure {
  return new A2AClientFailure(
    'timeout',
    `--timeout ran out before task ${taskId} ended${state ? ` (it was ${state.replace(/^TASK_STATE_/, '')})` : ''}; the task goes on`,
  )
}

/** The signal was aborted by `--timeout` (its reason the deadline timer's TimeoutError), not by Ctrl-C. */
const byDeadline = (signal: AbortSignal): boolean =>
  signal.aborted && (signal.reason as Error | undefined)?.name === 'TimeoutError'

/**
 * A failure met once the command's signal was aborted by `--timeout` (whatever the aborted step threw: the
 * signal's TimeoutError, or a sleep's AbortError carrying it as its cause) as the timeout failure it is; anything
 * else unchanged.
 */
export function timeoutOr(error: unknown, signal: AbortSignal): unknown {
  if (error instanceof A2AClientFailure && error.kind === 'timeout') return error
  return byDeadline(signal)
    ? new A2AClientFailure('timeout', '--timeout ran out before the agent answered', { cause: error })
    : error
}
