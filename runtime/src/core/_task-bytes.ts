import { jsonBytes, messageBytes } from '../_json-bytes.js'
import { ServerUnavailableError } from '../errors.js'
import { type Env, type Variable, wholeNumberSetting } from '../settings.js'
import type { Message, Task } from '../types.js'

/**
 * Tasks counted in bytes. One task must not grow past what the server can still serialise and send (a task of
 * hundreds of MiB made every tasks/get fail), and the tasks running at once must not together hold more than the
 * process can. Each task's size is a running count, updated by the size of what is added to it, so no event
 * re-serialises the whole task.
 */

const MiB = 1024 * 1024
export const DEFAULT_MAX_TASK_BYTES = 8 * MiB
export const DEFAULT_MAX_RUNNING_BYTES = 256 * MiB

export interface TaskByteLimits {
  /** Most bytes of JSON one task holds: its history, artifacts and status message. */
  maxTaskBytes: number
  /** Most bytes the running tasks hold together; past it a new message is refused (HTTP 429). */
  maxRunningBytes: number
}

/** The limits from the options, else the environment, else the defaults; a bad one names itself and its value. */
export function readTaskByteLimits(options: Partial<TaskByteLimits>, env: Env): TaskByteLimits {
  const read = (option: keyof TaskByteLimits, variable: Variable, fallback: number, min = 1): number =>
    wholeNumberSetting({ option, variable, given: options[option], env, fallback, min, unit: 'bytes', atLeast: String(min) })
  const maxTaskBytes = read('maxTaskBytes', 'A2A_MAX_TASK_BYTES', DEFAULT_MAX_TASK_BYTES)
  // Below maxTaskBytes, the largest task could never run.
  const maxRunningBytes = read('maxRunningBytes', 'A2A_MAX_RUNNING_BYTES', Math.max(DEFAULT_MAX_RUNNING_BYTES, maxTaskBytes), maxTaskBytes)
  return { maxTaskBytes, maxRunningBytes }
}

/** `,"taskId":"<36>"` and `,"contextId":"<36>"`: what the server adds to a user message that lacks its ids. */
const TASK_ID_FIELD_BYTES = 48
const CONTEXT_ID_FIELD_BYTES = 51

/** A user message's size once it belongs to a task (with the ids the server fills in), as the bindings build it. */
export function userMessageBytes(message: Message): number {
  return messageBytes(message) + (message.taskId === undefined ? TASK_ID_FIELD_BYTES : 0) + (message.contextId === undefined ? CONTEXT_ID_FIELD_BYTES : 0)
}

// The counts of the tasks waiting for the client, for their next turn. A running task's count lives in its run;
// a task that has ended takes no more messages, so the many retained ended tasks carry nothing extra (and a task
// answered in one turn never enters the map: a WeakMap entry costs the collector on every cycle).
const waiting = new WeakMap<Task, TaskBytes>()

/** The running count of one task's bytes, held by its run and, while it waits for the client, with the task. */
export class TaskBytes {
  /** History, artifacts and the status message (when it is not also in the history). */
  total: number
  /** The status message's share of `total`: replaced, not added to, when the status moves on. */
  status: number
  /** Whether the count is in `waiting`, so an ending looks there only then. */
  #kept = false

  private constructor(total: number, status: number) {
    this.total = total
    this.status = status
  }

  /** A new task holding only its first message, of `bytes` (as measured by `userMessageBytes`). */
  static created(bytes: number): TaskBytes {
    return new TaskBytes(bytes, 0)
  }

  /**
   * The count of a task at rest: the one kept while it waited for the client, or measured once when the task
   * was read back from a store that copies (a file or Redis store, which has just parsed the whole task anyway).
   */
  static of(task: Task): TaskBytes {
    return waiting.get(task) ?? TaskBytes.#measure(task)
  }

  /** A turn has settled: a task waiting for the client keeps its count for the next; an ended one lets it go. */
  static settled(task: Task, counted: TaskBytes, ended: boolean): void {
    if (!ended) {
      waiting.set(task, counted)
      counted.#kept = true
    } else if (counted.#kept) {
      waiting.delete(task)
      counted.#kept = false
    }
  }

  static #measure(task: Task): TaskBytes {
    let total = 0
    for (const message of task.history) total += jsonBytes(message)
    for (const artifact of task.artifacts) total += jsonBytes(artifact)
    const message = task.status.message
    // A question to the user is also in the history: counted once.
    const status = message && !task.history.some((m) => m.messageId === message.messageId) ? jsonBytes(message) : 0
    return new TaskBytes(total + status, status)
  }
}

/**
 * The bytes held by the running tasks together. A send reserves its message's bytes before any store I/O, so
 * concurrent sends cannot all pass the check; a running task adds what its agent produces and gives it all back
 * when it settles.
 */
export class RunningBytes {
  #held = 0

  constructor(readonly max: number) {}

  get held(): number {
    return this.#held
  }

  /** Reserves `bytes`, or throws the 429 maxRunningTasks also answers when they do not fit. */
  reserve(bytes: number): void {
    if (this.#held + bytes > this.max) {
      throw new ServerUnavailableError(
        `The server is busy: running tasks hold ${this.#held} bytes and ${bytes} more would pass maxRunningBytes (${this.max}); retry later`,
        429,
      )
    }
    this.#held += bytes
  }

  /** Counts bytes a running task has taken on (an agent's output is never refused here; maxTaskBytes bounds it). */
  add(bytes: number): void {
    this.#held += bytes
  }

  release(bytes: number): void {
    this.#held -= bytes
  }
}
