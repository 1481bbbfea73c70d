import { ServerUnavailableError } from '../errors.js'

// What the shared stores (Redis, PostgreSQL) have in common when they write a task's events: the answers of their
// append (a Redis script, a plpgsql function) and what each refusal tells the run.

/** The status message of a task failed because the instance that ran it stopped (its lease ran out). */
export const LOST_REASON = 'The instance running the task stopped before it finished'
/** Follow-up counts kept per task, so an event is written alone; past it the oldest go (their next write is whole). */
export const MAX_WRITTEN = 10_000
/** The pauses before each retry of an event's write, in ms. */
export const APPEND_RETRIES = [50, 250, 1000]

/** What an append answers for one event. */
export const WRITTEN = 1
export const ALREADY_WRITTEN = 2
/** Another instance ended the task. */
const ENDED = 0
/** The task is no longer in the store. */
const GONE = -1
/** The log does not end with the event before this one: the task is written whole instead. */
export const NOT_NEXT = -2
/** Later events were written before this one could be. */
const OVERTAKEN = -3

/** The error a refused append gives the run, or `undefined` when the event was written. */
export function appendRefusal(answer: unknown, taskId: string, seq: number): ServerUnavailableError | undefined {
  // Another instance ended the task (it took this one for dead when its lease ran out): nothing is overwritten.
  if (answer === ENDED)
    return new ServerUnavailableError(
      `Task ${taskId} was ended by another instance while this one ran it (its lease ran out)`,
      503,
    )
  if (answer === GONE)
    return new ServerUnavailableError(`Task ${taskId} is no longer in the store (it expired or was trimmed)`, 503)
  if (answer === OVERTAKEN)
    return new ServerUnavailableError(`Event ${seq} of task ${taskId} could not be written before later ones were`, 503)
  return undefined
}
