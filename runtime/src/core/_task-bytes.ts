import { ConfigurationError, ServerUnavailableError } from '../errors.js'
import { givenSetting, numberSetting } from '../_number-setting.js'
import type { Message, Task } from '../types.js'
import { jsonBytes } from '../_json-bytes.js'

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
export function readTaskByteLimits(options: Partial<TaskByteLimits>): TaskByteLimits {
  const read = (name: keyof TaskByteLimits, env: string, fallback: number, min = 1): number => {
    const value = numberSetting(options[name], env) ?? fallback
    if (!Number.isSafeInteger(value) || value < min) {
      throw new ConfigurationError(`${name} (${env}) must be a whole number of bytes, at least ${min} (got ${givenSetting(options[name], env)})`)
    }
    return value
  }
  const maxTaskBytes = read('maxTaskBytes', 'A2A_MAX_TASK_BYTES', DEFAULT_MAX_TASK_BYTES)
  // Below maxTaskBytes, the largest task could never run.
  const maxRunningBytes = read('maxRunningBytes', 'A2A_MAX_RUNNING_BYTES', Math.max(DEFAULT_MAX_RUNNING_BYTES, maxTaskBytes), maxTaskBytes)
  return { maxTaskBytes, maxRunningBytes }
}

/** `,"taskId":"<36>"` and `,"contextId":"<36>"`: what the server adds to a user message that lacks its ids. */
const TASK_ID_FIELD_BYTES = 48
const CONTEXT_ID_FIELD_BYTES = 51

/** A user message's size once it belongs to a task (with the ids the server fills in). */
export function userMessageBytes(message: Message): number {
  return jsonBytes(message) + (message.taskId === undefined ? TASK_ID_FIELD_BYTES : 0) + (message.contextId === undefined ? CONTEXT_ID_FIELD_BYTES : 0)
}

// Only tasks that are running or waiting for the client keep their count: a task that has ended takes no more
// messages, so the many retained ended tasks carry nothing extra.
const known = new WeakMap<Task, TaskBytes>()

/** The running count of one task's bytes, kept with the task object while the task can still grow. */
export class TaskBytes {
  /** History, artifacts and the status message (when it is not also in the history). */
  total: number
  /** The status message's share of `total`: replaced, not added to, when the status moves on. */
  status: number

  private constructor(total: number, status: number) {
    this.total = total
    this.status = status
  }

  /** A new task holding only its first message, of `bytes` (as measured by `userMessageBytes`). */
  static created(task: Task, bytes: number): TaskBytes {
    const counted = new TaskBytes(bytes, 0)
    known.set(task, counted)
    return counted
  }

  /**
   * The count of `task`: the one kept with it, or measured once when the task was read back from a store that
   * copies (a file or Redis store, which has just parsed the whole task anyway).
   */
  static of(task: Task): TaskBytes {
    let counted = known.get(task)
    if (!counted) {
      counted = TaskBytes.#measure(task)
      known.set(task, counted)
    }
    return counted
  }

  /** A task has ended: it takes no more messages, so its count goes (one waiting for the client keeps it). */
  static ended(task: Task): void {
    known.delete(task)
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
      throw new ServerUnavailableError(`The server is busy: running tasks hold ${this.#held} bytes and ${bytes} more would pass maxRunningBytes (${this.max}); retry later`, 429)
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
