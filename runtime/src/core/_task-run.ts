import { appendedHeapBytes, appendParts, TextJoins } from '../_artifact-append.js'
import { artifactHeapBytes, messageHeapBytes, textArtifactHeapBytes } from '../_heap-bytes.js'
import type { AgentCoreRequest, ArtifactContent, ArtifactOptions, MessageContent, TaskHandle } from '../agent.js'
import { TaskTerminalError } from '../errors.js'
import type { Artifact, Message, Part, Principal, Task, TaskEvent, TaskState } from '../types.js'
import { isoNow } from './_clock.js'
import { newId } from './_ids.js'
import { isSettled, isTerminal } from './_lifecycle.js'
import { type RunningBytes, TaskBytes } from './_task-bytes.js'

// Marks the first event of a `reply()` with the reply, for the bindings that answer with a Message. A symbol:
// stores and wire shapes never see it (JSON leaves symbol keys out).
const REPLY = Symbol('a2a.reply')
// The moves that start a turn when they come first (a reply, a refusal, a failure or a cancel end it at once).
const STARTING_MOVES = new Set(['working', 'inputRequired', 'authRequired', 'artifact', 'complete'])
// An artifact id's length, for counting a reply's artifact before it has one.
const REPLY_ARTIFACT_ID_SIZED = '00000000-0000-0000-0000-000000000000'

/** The message an agent replied with, when `event` is the first event of its `reply()`. */
export function replyOf(event: TaskEvent): Message | undefined {
  return (event as { [REPLY]?: Message })[REPLY]
}

/** Sees each event after it is applied to `task` (the live task: serialise it now, do not keep it). */
export type TaskListener = (event: TaskEvent, task: Task) => void

/**
 * Receives each event after it is applied to the task (the store, typically). A promise (a durable write)
 * delays the settling of the task until it resolves; a rejected one fails the wait for the settling (the
 * client that waits is told the task was not saved).
 */
export type EventSink = (task: Task, event: TaskEvent) => Promise<void> | undefined

/** What an agent's output may add to its task. */
export interface TaskLimits {
  /** Most bytes of memory the task may hold; an artifact or status message past it fails the task instead. */
  readonly maxTaskBytes: number
  /** Hears that a task was failed for passing `maxTaskBytes` or its share of `maxRunningBytes` (the log says so). */
  readonly passed?: (run: TaskRun, reason: string) => void
}

const UNLIMITED: TaskLimits = { maxTaskBytes: Number.POSITIVE_INFINITY }

/**
 * One task while the runtime holds it: applies the agent's operations to the task, numbers the events and
 * hands them to the sink and the listeners. It mutates the task in place, so no operation copies a task.
 */
export class TaskRun implements TaskHandle {
  // Created on first subscribe: a task answered by message/send has no listener.
  #listeners: Set<TaskListener> | undefined
  // Created on first use: most agents never look at the signal.
  #abort: AbortController | undefined
  #seq: number
  #settleWaiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = []
  // Given for a new task; looked up on first use for one at rest (a task canceled at rest may never need it).
  #bytes: TaskBytes | undefined
  /** Holds this task's bytes from the start of its turn until it settles. */
  #running: RunningBytes | undefined
  // The turn starts (`working`) at the agent's first move, unless that move is a reply (see `startOnFirstMove`).
  #startPending = false
  // Created on the first text joined to an artifact.
  #joins: TextJoins | undefined
  #replying: Message | undefined
  /** What the agent replied with (`reply()`), once the reply is the task's answer. */
  replied: Message | undefined
  /** The `Principal.id` that owns the task (undefined when the agent checks no credentials). */
  owner: string | undefined
  /** Who sent the message (or the cancel) this turn answers: `ctx.principal`. */
  principal: Principal | undefined
  /** The AgentCore Runtime headers of the request this turn answers: `ctx.agentCore`. */
  agentCore: AgentCoreRequest | undefined
  /** In `auth-required` while the agent obtains the authorization out of band (`authorization()`). */
  awaitingAuthorization = false

  constructor(
    readonly task: Task,
    readonly sink: EventSink,
    lastSeq = 0,
    readonly limits: TaskLimits = UNLIMITED,
    bytes?: TaskBytes,
  ) {
    this.#seq = lastSeq
    this.#bytes = bytes
  }

  /** The running count of the bytes the task holds. */
  get bytes(): TaskBytes {
    this.#bytes ??= TaskBytes.of(this.task)
    return this.#bytes
  }

  /**
   * `running` holds this task's bytes (reserved by the caller) until the task settles, and counts what the agent
   * adds meanwhile.
   */
  holdIn(running: RunningBytes): void {
    this.#running = running
    running.taskStarted()
  }

  get id(): string {
    return this.task.id
  }
  get contextId(): string {
    return this.task.contextId
  }
  get state(): TaskState {
    return this.task.status.state
  }
  /** The number of the last event published (events are numbered from 1 per task, across turns). */
  get seq(): number {
    return this.#seq
  }
  get signal(): AbortSignal {
    this.#abort ??= new AbortController()
    return this.#abort.signal
  }

  /** Listeners run synchronously in event order; they must not keep the event object past the call. */
  subscribe(listener: TaskListener): () => void {
    this.#listeners ??= new Set()
    const listeners = this.#listeners
    listeners.add(listener)
    return () => listeners.delete(listener)
  }

  /**
   * Resolves the next time the task settles (terminal or waiting for the client), not on its current state,
   * once a durable store has saved it; rejects with the store's error when that save fails.
   */
  nextSettled(): Promise<void> {
    return new Promise((resolve, reject) => this.#settleWaiters.push({ resolve, reject }))
  }

  /** Marks the task `working` at the agent's first move instead of now; a `reply()` as that move skips it. */
  startOnFirstMove(): void {
    this.#startPending = true
  }

  abort(reason: string): void {
    this.#abort ??= new AbortController()
    this.#abort.abort(new Error(reason))
  }

  // --- TaskHandle ------------------------------------------------------------------------------------

  submit(): void {
    this.#guard('submit')
  }

  working(message?: MessageContent): void {
    if (!this.#guard('working')) return
    if (message === undefined && this.state === 'working') return
    this.#move('working', message)
  }

  inputRequired(message: MessageContent): void {
    if (this.#guard('inputRequired')) this.#move('input-required', message)
  }

  authRequired(message: MessageContent): void {
    if (this.#guard('authRequired')) this.#move('auth-required', message)
  }

  async authorization<T>(message: MessageContent, until: (signal: AbortSignal) => Promise<T>): Promise<T> {
    this.authRequired(message)
    this.awaitingAuthorization = true
    try {
      const granted = await until(this.signal)
      // Canceled or ended meanwhile: `working` refuses (or, canceled, does nothing), as any move would.
      this.working()
      return granted
    } finally {
      this.awaitingAuthorization = false
    }
  }

  artifact(content: ArtifactContent, options: ArtifactOptions = {}): string {
    const artifactId = options.artifactId ?? newId()
    if (!this.#guard('artifact')) return artifactId
    const parts = toArtifactParts(content)
    const lastChunk = options.lastChunk ?? true
    const append = options.append === true
    const chunk: Artifact = { artifactId, parts, lastChunk }
    if (options.name !== undefined) chunk.name = options.name
    if (options.description !== undefined) chunk.description = options.description
    if (options.metadata !== undefined) chunk.metadata = options.metadata

    const artifacts = this.task.artifacts
    const index = artifacts.findIndex((a) => a.artifactId === artifactId)
    const existing = index === -1 ? undefined : artifacts[index]
    // What the task grows by: the chunk's parts (text joined to the text before it), or the chunk less the
    // artifact it replaces. A plain text chunk (the common case, streamed word by word too) is counted without a walk.
    const text =
      typeof content === 'string' &&
      options.name === undefined &&
      options.description === undefined &&
      options.metadata === undefined
        ? content
        : undefined
    const growth =
      append && existing
        ? appendedHeapBytes(existing, parts)
        : (text !== undefined && artifactId.length === 36 ? textArtifactHeapBytes(text) : artifactHeapBytes(chunk)) -
          (existing ? artifactHeapBytes(existing) : 0)
    if (!this.#fits(growth, 'an artifact')) return artifactId
    this.#grow(growth)
    if (append && existing) {
      const joined = appendParts(existing, parts)
      if (joined) {
        this.#joins ??= new TextJoins()
        this.#joins.joined(joined)
      }
      existing.lastChunk = lastChunk
    } else {
      // The stored artifact grows with later chunks; the event keeps only this chunk.
      const stored = { ...chunk, parts: parts.slice() }
      if (existing) artifacts[index] = stored
      // A first push would give the empty array room for 17; most tasks keep one artifact for their lifetime.
      else if (artifacts.length === 0) this.task.artifacts = [stored]
      else artifacts.push(stored)
    }
    this.#emit({
      kind: 'artifact-update',
      seq: 0,
      taskId: this.id,
      contextId: this.contextId,
      artifact: chunk,
      append,
      lastChunk,
    })
    return artifactId
  }

  complete(message?: MessageContent): void {
    if (this.#guard('complete')) this.#move('completed', message)
  }

  fail(reason?: MessageContent): void {
    if (this.#guard('fail')) this.#move('failed', reason)
  }

  cancel(message?: MessageContent): void {
    if (this.#guard('cancel')) this.#move('canceled', message)
  }

  reject(reason?: MessageContent): void {
    if (this.#guard('reject')) this.#move('rejected', reason)
  }

  reply(content: MessageContent): void {
    if (!this.#startPending) {
      if (isTerminal(this.state)) return void this.#guard('reply')
      throw new Error(
        "task.reply() answers with a message: it needs `messageReplies: true` in defineAgent() and must be the first move of a task's first turn (after another move, answer with task.artifact() and task.complete())",
      )
    }
    if (!this.#guard('reply')) return
    const parts = toMessageParts(content)
    // Too large for the task: failed with the reason before a client is told anything.
    if (!this.#fits(artifactHeapBytes({ artifactId: REPLY_ARTIFACT_ID_SIZED, parts, lastChunk: true }), 'a reply'))
      return
    this.#startPending = false
    // The client is never handed the task: the reply names its context only.
    const reply: Message = { kind: 'message', messageId: newId(), role: 'agent', parts, contextId: this.contextId }
    // The task itself goes the usual way (working, the reply as its artifact, completed); its first event carries
    // the reply, for the bindings that answer with it.
    this.#replying = reply
    this.setStatus('working')
    this.artifact(parts)
    if (isTerminal(this.state)) return
    this.replied = reply
    this.complete()
  }

  // --- internals -------------------------------------------------------------------------------------

  /** Moves the task and publishes the status event. Callers have checked the move is allowed. */
  setStatus(state: TaskState, content?: MessageContent): void {
    const message = content === undefined ? undefined : this.agentMessage(content)
    this.#setStatus(state, message, message ? messageHeapBytes(message) : 0)
  }

  /** An agent's move: as `setStatus`, unless its message would take the task past maxTaskBytes. */
  #move(state: TaskState, content: MessageContent | undefined): void {
    const message = content === undefined ? undefined : this.agentMessage(content)
    const bytes = message ? messageHeapBytes(message) : 0
    // The new message replaces the status message (a question joins the history, and the status keeps no share).
    if (this.#fits(bytes - this.bytes.status, 'a status message')) this.#setStatus(state, message, bytes)
  }

  #setStatus(state: TaskState, message: Message | undefined, messageBytes: number): void {
    const status: Task['status'] = { state, timestamp: isoNow() }
    const counted = this.bytes
    this.#grow(messageBytes - counted.status)
    counted.status = messageBytes
    if (message) {
      status.message = message
      // A question to the user belongs to the conversation the agent sees on the next turn.
      if (state === 'input-required' || state === 'auth-required') {
        this.task.history.push(message)
        counted.status = 0
      }
    }
    this.task.status = status
    const final = isSettled(state)
    if (final) {
      this.#running?.taskSettled(counted.total)
      this.#running = undefined
      TaskBytes.settled(this.task, counted, isTerminal(state))
    }
    const saved = this.#emit({
      kind: 'status-update',
      seq: 0,
      taskId: this.id,
      contextId: this.contextId,
      status,
      final,
    })
    if (final && this.#settleWaiters.length) {
      const waiters = this.#settleWaiters
      this.#settleWaiters = []
      const wake = () => {
        for (const waiter of waiters) waiter.resolve()
      }
      if (saved)
        void saved.then(wake, (error: unknown) => {
          for (const waiter of waiters) waiter.reject(error)
        })
      else wake()
    }
  }

  agentMessage(content: MessageContent): Message {
    return {
      kind: 'message',
      messageId: newId(),
      role: 'agent',
      parts: toMessageParts(content),
      contextId: this.contextId,
      taskId: this.id,
    }
  }

  /**
   * Whether the task can grow by `bytes` within maxTaskBytes, and within its share of maxRunningBytes once the
   * running tasks together hold more. When it cannot, the task is failed with the reason (as a deadline fails it:
   * the signal fires, the agent's later moves are refused) and the move is dropped.
   */
  #fits(bytes: number, what: string): boolean {
    if (bytes <= 0) return true
    const { maxTaskBytes } = this.limits
    const total = this.bytes.total + bytes
    let reason: string | undefined
    if (!Number.isFinite(bytes)) reason = `The agent sent ${what} that cannot be written as JSON (a cycle or a BigInt)`
    else if (total > maxTaskBytes)
      reason = `The task passed maxTaskBytes (${maxTaskBytes}): ${what} would add ${bytes} bytes and make it hold ${total}`
    else reason = this.#running?.refusal(this.bytes.total, bytes, what)
    if (reason === undefined) return true
    this.abort(reason)
    this.limits.passed?.(this, reason)
    this.setStatus('failed', reason)
    return false
  }

  #grow(bytes: number): void {
    this.bytes.total += bytes
    this.#running?.add(bytes)
  }

  #emit(event: TaskEvent): Promise<void> | undefined {
    if (this.#replying) {
      ;(event as { [REPLY]?: Message })[REPLY] = this.#replying
      this.#replying = undefined
    }
    event.seq = ++this.#seq
    const saved = this.sink(this.task, event)
    if (this.#listeners) for (const listener of this.#listeners) listener(event, this.task)
    return saved
  }

  /** False when the move should be ignored (the task was canceled under a running agent). */
  #guard(operation: string): boolean {
    const state = this.state
    if (isTerminal(state)) {
      if (state === 'canceled') return false
      throw new TaskTerminalError(this.id, state, operation)
    }
    // The first move starts the turn, unless it answers at once (a reply) or ends the task before any work.
    if (this.#startPending && STARTING_MOVES.has(operation)) {
      this.#startPending = false
      this.setStatus('working')
    }
    return true
  }
}

function toMessageParts(content: MessageContent): Part[] {
  if (typeof content === 'string') return [{ kind: 'text', text: content }]
  if (Array.isArray(content)) return content
  throw new TypeError('A status message must be a string or an array of parts')
}

function toArtifactParts(content: ArtifactContent): Part[] {
  if (typeof content === 'string') return [{ kind: 'text', text: content }]
  if (Array.isArray(content)) return content
  if (content !== null && typeof content === 'object') return [{ kind: 'data', data: content }]
  throw new TypeError('An artifact must be a string, an array of parts or a data object')
}
