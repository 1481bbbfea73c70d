import { ConfigurationError, ServerUnavailableError } from '../errors.js'
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
export function readTaskByteLimits(options: Partial<TaskByteLimits>): TaskByteLimits {
  const read = (name: keyof TaskByteLimits, env: string, fallback: number, min = 1): number => {
    const raw = process.env[env]
    const value = options[name] ?? (raw === undefined || raw.trim() === '' ? fallback : Number(raw))
    if (!Number.isSafeInteger(value) || value < min) {
      throw new ConfigurationError(`${name} (${env}) must be a whole number of bytes, at least ${min} (got ${options[name] ?? JSON.stringify(raw)})`)
    }
    return value
  }
  const maxTaskBytes = read('maxTaskBytes', 'A2A_MAX_TASK_BYTES', DEFAULT_MAX_TASK_BYTES)
  // Below maxTaskBytes, the largest task could never run.
  const maxRunningBytes = read('maxRunningBytes', 'A2A_MAX_RUNNING_BYTES', Math.max(DEFAULT_MAX_RUNNING_BYTES, maxTaskBytes), maxTaskBytes)
  return { maxTaskBytes, maxRunningBytes }
}

/**
 * The UTF-8 length of `value` as JSON, as `JSON.stringify` would write it, counted without writing it: sizing each
 * message and artifact must cost the hot path next to nothing. A value JSON cannot hold (a cycle, a BigInt), or
 * nested deeper than a wire message may be, counts as endless: no task can take it.
 */
export function jsonBytes(value: unknown): number {
  return valueBytes(value, 0) ?? 0
}

/** Deeper than the 64 levels a wire message may have (and than any cycle can hide). */
const MAX_DEPTH = 100
/** Longer strings are measured by the engine's own JSON writer, faster per character than a loop here. */
const SHORT_STRING = 128

/** `undefined` for what JSON leaves out (undefined, a function, a symbol). */
function valueBytes(value: unknown, depth: number): number | undefined {
  switch (typeof value) {
    case 'string':
      return stringBytes(value)
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4
    case 'boolean':
      return value ? 4 : 5
    case 'object':
      if (value === null) return 4
      if (depth > MAX_DEPTH) return Number.POSITIVE_INFINITY
      if (Array.isArray(value)) {
        let bytes = value.length === 0 ? 2 : value.length + 1
        for (let i = 0; i < value.length; i++) bytes += valueBytes(value[i], depth + 1) ?? 4
        return bytes
      }
      // Parsed JSON and object literals are plain; anything else may write itself differently (a Date, toJSON).
      if (!isPlain(value)) return written(value)
      return objectBytes(value as Record<string, unknown>, depth)
    case 'bigint':
      return Number.POSITIVE_INFINITY
    default:
      return undefined
  }
}

function isPlain(value: object): boolean {
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

function objectBytes(value: Record<string, unknown>, depth: number): number {
  let bytes = 2
  let fields = 0
  // A plain object enumerates only its own keys.
  for (const key in value) {
    const item = valueBytes(value[key], depth + 1)
    if (item === undefined) {
      // An object that writes itself another way.
      if (key === 'toJSON' && typeof value[key] === 'function') return written(value)
      continue
    }
    bytes += stringBytes(key) + 1 + item
    fields++
  }
  return fields === 0 ? bytes : bytes + fields - 1
}

function stringBytes(text: string): number {
  const length = text.length
  if (length > SHORT_STRING) return written(text)
  let bytes = 2
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i)
    if (code >= 0x20 && code < 0x7f) bytes += code === 0x22 || code === 0x5c ? 2 : 1
    else if (code < 0x20) bytes += code === 8 || code === 9 || code === 10 || code === 12 || code === 13 ? 2 : 6
    else if (code < 0x800) bytes += code === 0x7f ? 1 : 2
    else if (code < 0xd800 || code > 0xdfff) bytes += 3
    // A surrogate pair is one 4-byte character; a lone surrogate is written as \uXXXX.
    else if (code <= 0xdbff && i + 1 < length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4
      i++
    } else bytes += 6
  }
  return bytes
}

/** The bytes of `value` as the engine writes it (a large string, or a value with its own toJSON). */
function written(value: unknown): number {
  let json: string | undefined
  try {
    json = JSON.stringify(value)
  } catch {
    // Too large to be one string.
    return Number.POSITIVE_INFINITY
  }
  return json === undefined ? 0 : Buffer.byteLength(json)
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
