import { randomUUID } from 'node:crypto'
import { appendParts } from '../../_artifact-append.js'
import { isSettled } from '../../core/_lifecycle.js'
import type { Artifact, Message, Part, Task, TaskEvent, TaskState } from '../../types.js'
import type { TaskStore } from '../task-store.js'

/**
 * Status times for the tasks of one check, each later than the one before. Checks that need an order of
 * status times get it from here rather than from how fast they ran. They start at the present, not at a fixed
 * date, so a store that expires tasks by their status time keeps them while the check runs.
 */
export class StatusClock {
  #ms: number

  constructor(start = Date.now()) {
    this.#ms = start
  }

  /** An ISO time one millisecond after the last one given. */
  next(): string {
    return new Date(++this.#ms).toISOString()
  }
}

export interface StartOptions {
  contextId?: string
  /** The text of the user's first message. */
  text?: string
  /** The status time of the new (submitted) task; default the clock's next. */
  at?: string
  /** The `Principal.id` that creates it; default none (an agent that checks no credentials). */
  owner?: string
}

export interface StatusOptions {
  /** An agent message with this text goes with the status (a question joins the history). */
  message?: string
  /** The status time; default the clock's next. */
  at?: string
}

export interface ChunkOptions {
  artifactId?: string
  parts: Part[]
  name?: string
  description?: string
  metadata?: Record<string, unknown>
  /** Default `true`. */
  lastChunk?: boolean
  /** The parts extend the artifact with this id (a new one when there is none yet). */
  append?: boolean
}

/**
 * One task driven as the runtime drives it (`core/_engine.ts`, `core/_task-run.ts`): `create` once, then each
 * event applied to the task in place, numbered from 1 across turns, and handed to `append` with the live task
 * at once, without waiting for the previous write; only a settling event waits for the writes, as a settling
 * task waits for a durable store. A follow-up joins the history outside any event. On a store that several
 * instances share, the task's lease is held while it runs, as the engine holds it.
 */
export class ScriptedTask {
  /** Every event appended, in order. */
  readonly events: TaskEvent[] = []
  #store: TaskStore
  readonly #clock: StatusClock
  #task: Task
  #seq: number
  #writes: Array<Promise<{ error: unknown } | undefined>> = []

  private constructor(store: TaskStore, clock: StatusClock, task: Task, seq = 0) {
    this.#store = store
    this.#clock = clock
    this.#task = task
    this.#seq = seq
  }

  /** A new task, submitted with one user message, created in the store. */
  static async start(store: TaskStore, clock: StatusClock, options: StartOptions = {}): Promise<ScriptedTask> {
    const id = randomUUID()
    const contextId = options.contextId ?? randomUUID()
    const task: Task = {
      kind: 'task',
      id,
      contextId,
      status: { state: 'submitted', timestamp: options.at ?? clock.next() },
      artifacts: [],
      history: [userMessage(options.text ?? 'Hello', id, contextId)],
    }
    await store.cluster?.claim(id)
    await store.create(task, options.owner)
    return new ScriptedTask(store, clock, task)
  }

  /** The task as the runtime holds it now. */
  get task(): Task {
    return this.#task
  }

  get id(): string {
    return this.#task.id
  }

  /** The number of the last event appended. */
  get seq(): number {
    return this.#seq
  }

  /** The status every turn starts with. */
  working(options: StatusOptions = {}): void {
    void this.status('working', options)
  }

  /**
   * Moves the task. Resolves once the store has every write so far when the move settles it (terminal, or
   * waiting for the client), at once otherwise; rejects with the store's error.
   */
  status(state: TaskState, options: StatusOptions = {}): Promise<void> {
    const task = this.#task
    const status: Task['status'] = { state, timestamp: options.at ?? this.#clock.next() }
    if (options.message !== undefined) {
      const message = agentMessage(options.message, task)
      status.message = message
      if (state === 'input-required' || state === 'auth-required') task.history.push(message)
    }
    task.status = status
    const final = isSettled(state)
    this.#emit({ kind: 'status-update', seq: 0, taskId: task.id, contextId: task.contextId, status, final })
    return final ? this.#settled() : Promise.resolve()
  }

  inputRequired(question: string): Promise<void> {
    return this.status('input-required', { message: question })
  }

  authRequired(question: string): Promise<void> {
    return this.status('auth-required', { message: question })
  }

  complete(message?: string): Promise<void> {
    return this.status('completed', message === undefined ? {} : { message })
  }

  /** A chunk of an artifact; returns the artifact's id. */
  artifact(options: ChunkOptions): string {
    const artifactId = options.artifactId ?? randomUUID()
    const lastChunk = options.lastChunk ?? true
    const append = options.append === true
    const chunk: Artifact = { artifactId, parts: options.parts, lastChunk }
    if (options.name !== undefined) chunk.name = options.name
    if (options.description !== undefined) chunk.description = options.description
    if (options.metadata !== undefined) chunk.metadata = options.metadata
    const artifacts = this.#task.artifacts
    const index = artifacts.findIndex((artifact) => artifact.artifactId === artifactId)
    const existing = index === -1 ? undefined : artifacts[index]
    if (append && existing) {
      appendParts(existing, chunk.parts)
      existing.lastChunk = lastChunk
    } else {
      // The task's artifact grows with later chunks; the event keeps only this one.
      const stored = { ...chunk, parts: chunk.parts.slice() }
      if (existing) artifacts[index] = stored
      else artifacts.push(stored)
    }
    this.#emit({
      kind: 'artifact-update',
      seq: 0,
      taskId: this.id,
      contextId: this.#task.contextId,
      artifact: chunk,
      append,
      lastChunk,
    })
    return artifactId
  }

  /** The user answers a task that waits for input: the message joins the history, and the turn starts working. */
  async followUp(answer: string): Promise<void> {
    await this.#store.cluster?.claim(this.id)
    this.#task.history.push(userMessage(answer, this.id, this.#task.contextId))
    this.working()
  }

  /**
   * Goes on with the task on `store` (the same data opened again), from the copy it reads back, as the runtime
   * resumes a task at rest: `task` is what `store.get` gave.
   */
  continueOn(store: TaskStore, task: Task): void {
    this.#store = store
    this.#task = task
  }

  /** Waits for every write so far; throws the first that failed. */
  async flush(): Promise<void> {
    const outcomes = await Promise.all(this.#writes.splice(0))
    const failed = outcomes.find((outcome) => outcome !== undefined)
    if (failed) throw failed.error
  }

  async #settled(): Promise<void> {
    await this.flush()
    // The engine gives the lease back once the turn has ended.
    await this.#store.cluster?.release(this.id)
  }

  #emit(event: TaskEvent): void {
    event.seq = ++this.#seq
    this.events.push(event)
    const saved = this.#store.append(this.#task, event)
    // Kept as an outcome, so a write that fails before anyone waits for it is not an unhandled rejection.
    if (saved instanceof Promise)
      this.#writes.push(
        saved.then(
          () => undefined,
          (error: unknown) => ({ error }),
        ),
      )
  }
}

export function text(value: string): Part {
  return { kind: 'text', text: value }
}

function userMessage(value: string, taskId: string, contextId: string): Message {
  return { kind: 'message', messageId: randomUUID(), role: 'user', parts: [text(value)], taskId, contextId }
}

function agentMessage(value: string, task: Task): Message {
  return {
    kind: 'message',
    messageId: randomUUID(),
    role: 'agent',
    parts: [text(value)],
    contextId: task.contextId,
    taskId: task.id,
  }
}
