import { artifactHeapBytes, ID_HEAP_BYTES, messageHeapBytes } from '../_heap-bytes.js'
import { heapShare } from '../_heap-limit.js'
import { ServerUnavailableError } from '../errors.js'
import { type Env, type Variable, wholeNumberSetting } from '../settings.js'
import type { Message, Task } from '../types.js'

/**
 * Tasks counted in bytes of memory (`_heap-bytes.ts`: what the heap pays, structure included, not the length of
 * the JSON). One task must not grow past what the server can still serialise and send (a task of hundreds of MiB
 * made every tasks/get fail), and the tasks running at once must not together hold more than the process can.
 * Each task's size is a running count, updated by the size of what is added to it, so no event measures the
 * whole task again.
 */

const MiB = 1024 * 1024
const DEFAULT_MAX_TASK_BYTES = 8 * MiB
/** The running tasks' default: this, or a quarter of the heap limit when that is less (`_heap-limit.ts`). */
const MAX_RUNNING_BYTES_CEILING = 256 * MiB

export interface TaskByteLimits {
  /** Most bytes of memory one task holds: its history, artifacts and status message. */
  maxTaskBytes: number
  /** Most bytes of memory the running tasks hold together; past it a new message is refused (HTTP 429). */
  maxRunningBytes: number
}

/** The limits from the options, else the environment, else the defaults; a bad one names itself and its value. */
export function readTaskByteLimits(options: Partial<TaskByteLimits>, env: Env): TaskByteLimits {
  const read = (option: keyof TaskByteLimits, variable: Variable, fallback: number, min = 1): number =>
    wholeNumberSetting({
      option,
      variable,
      given: options[option],
      env,
      fallback,
      min,
      unit: 'bytes',
      atLeast: String(min),
    })
  const maxTaskBytes = read('maxTaskBytes', 'A2A_MAX_TASK_BYTES', DEFAULT_MAX_TASK_BYTES)
  // Below maxTaskBytes, the largest task could never run.
  const maxRunningBytes = read(
    'maxRunningBytes',
    'A2A_MAX_RUNNING_BYTES',
    Math.max(heapShare(MAX_RUNNING_BYTES_CEILING), maxTaskBytes),
    maxTaskBytes,
  )
  return { maxTaskBytes, maxRunningBytes }
}

/** A user message's size once it belongs to a task (with the ids the server fills in), as the bindings build it. */
export function userMessageBytes(message: Message): number {
  return (
    messageHeapBytes(message) +
    (message.taskId === undefined ? ID_HEAP_BYTES : 0) +
    (message.contextId === undefined ? ID_HEAP_BYTES : 0)
  )
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
    for (const message of task.history) total += messageHeapBytes(message)
    for (const artifact of task.artifacts) total += artifactHeapBytes(artifact)
    const message = task.status.message
    // A question to the user is also in the history: counted once.
    const status =
      message && !task.history.some((m) => m.messageId === message.messageId) ? messageHeapBytes(message) : 0
    return new TaskBytes(total + status, status)
  }
}

/**
 * The bytes held by the running tasks together. A send reserves its message's bytes before any store I/O, so
 * concurrent sends cannot all pass the check; a running task adds what its agent produces as it comes and gives it
 * all back when it settles. Past the budget a task may still grow within its share (the budget over the tasks
 * running), so one task's flood fails that task, not the others; as the tasks within their shares hold no more
 * than the budget, the total stays within it but for what sends have reserved.
 */
export class RunningBytes {
  #held = 0
  #tasks = 0
  /** Sends refused and task growth refused so far (read by telemetry). */
  refused = 0

  constructor(readonly max: number) {}

  get held(): number {
    return this.#held
  }

  /** Reserves `bytes`, or throws the 429 maxRunningTasks also answers when they do not fit. */
  reserve(bytes: number): void {
    if (this.#held + bytes > this.max) {
      this.refused++
      throw new ServerUnavailableError(
        `The server is busy: running tasks hold ${this.#held} bytes and ${bytes} more would pass maxRunningBytes (${this.max}); retry later`,
        429,
      )
    }
    this.#held += bytes
  }

  release(bytes: number): void {
    this.#held -= bytes
  }

  /** A run holds its reserved bytes from now until `taskSettled`. */
  taskStarted(): void {
    this.#tasks++
  }

  taskSettled(bytes: number): void {
    this.#tasks--
    this.#held -= bytes
  }

  /**
   * Why a running task that holds `holds` bytes may not grow by `bytes` (its agent's output), or undefined when
   * it may: the total fits, or the task stays within its share.
   */
  refusal(holds: number, bytes: number, what: string): string | undefined {
    if (this.#held + bytes <= this.max) return undefined
    const share = Math.floor(this.max / Math.max(1, this.#tasks))
    if (holds + bytes <= share) return undefined
    this.refused++
    return `The running tasks hold ${this.#held} bytes, past maxRunningBytes (${this.max}), and ${what} would make this task hold ${holds + bytes}, more than its share (${share} of ${this.#tasks} running)`
  }

  /** Counts bytes a running task has taken on (`refusal` said it may). */
  add(bytes: number): void {
    this.#held += bytes
  }
}
