import type { Agent, AgentCoreRequest, ExecutionContext } from '../agent.js'
import {
  InvalidParamsError,
  ServerUnavailableError,
  TaskEndedError,
  TaskNotCancelableError,
  TaskNotFoundError,
} from '../errors.js'
import type { Logger } from '../logger.js'
import type { TaskStore } from '../stores/task-store.js'
import type { Instrumentation } from '../telemetry/_hooks.js'
import type { Message, Principal, Task, TaskEvent } from '../types.js'
import { runAgentTurn } from './_agent-turn.js'
import { isoNow } from './_clock.js'
import { claimForFollowUp } from './_cluster-claims.js'
import { Followers } from './_followers.js'
import { newId } from './_ids.js'
import { isInterrupted, isSettled, isTerminal } from './_lifecycle.js'
import { hasText, lastUserMessage, RunContext } from './_run-context.js'
import { lastSeqOf, type Subscribable, type Subscription, subscribeToTask } from './_subscriptions.js'
import { RunningBytes, readTaskByteLimits, type TaskByteLimits, TaskBytes, userMessageBytes } from './_task-bytes.js'
import { TaskLocks } from './_task-locks.js'
import { type EventSink, type TaskLimits, type TaskListener, TaskRun } from './_task-run.js'

/** A user message for the agent, already validated by a binding. */
export interface SendRequest {
  message: Message
  /** Resume this task (it must be waiting for input). */
  taskId?: string
  /** Conversation to join; generated when absent. */
  contextId?: string
  /**
   * Runs once the task exists, before the agent starts (a webhook given with the message is saved here, so
   * it hears the task's first event). When it fails, the task fails with the reason.
   */
  prepare?: (taskId: string) => Promise<void>
  /**
   * Who sends it (undefined when the agent checks no credentials): a new task is theirs, and a task named by
   * `taskId` must be theirs (another's answers as one that does not exist).
   */
  principal?: Principal | undefined
  /** The AgentCore Runtime headers of the request that sends it: `ctx.agentCore` of the turn it starts. */
  agentCore?: AgentCoreRequest | undefined
  /**
   * The client is answered with the task as soon as it exists (a non-blocking send): its agent starts once the
   * create landed, whatever the store, so the answer shows the task as it starts.
   */
  answeredAtOnce?: boolean
}

export interface StartedTask {
  run: TaskRun
  /** Resolves when the task settles: terminal, or waiting for the client. */
  settled: Promise<void>
  /** Detaches the listener given to `send` (a client went away); the task goes on. */
  unsubscribe: () => void
}

export const DEFAULT_MAX_RUNNING_TASKS = 1000

interface Execution {
  run: TaskRun
  done: Promise<void>
}

/** What one send holds of the running bytes until its run takes it over (then 0). */
interface Reservation {
  bytes: number
}

/**
 * The core: creates and resumes tasks, runs the agent, holds the guarantees (every task ends terminal, a
 * terminal task never moves, cancel follows the agent's will) and knows nothing of HTTP or wire dialects.
 */
export class TaskEngine {
  readonly #executions = new Map<string, Execution>()
  /**
   * Sends past the maxRunningTasks check that are still creating or resuming their task (store I/O): counted
   * with the running ones, so concurrent sends cannot all pass the check before any of them runs.
   */
  #reserved = 0
  readonly #locks = new TaskLocks()
  readonly #cancellations = new Map<string, Promise<Task>>()
  readonly #sink: EventSink
  readonly #runningBytes: RunningBytes
  readonly #taskLimits: TaskLimits
  readonly #followers = new Followers()
  /** What `subscribeToTask` reads of this engine. */
  readonly #subscribable: Subscribable

  #closing = false
  /** Sends refused past maxRunningTasks so far (read by telemetry). */
  tasksRefused = 0

  /** Hears every event of the tasks this instance runs, after the store has it (push notifications). */
  onEvent: ((task: Task, event: TaskEvent) => void) | undefined

  /** The app's telemetry (`telemetry`, `A2A_TELEMETRY`): told of each turn and event; the bindings' handlers read it. */
  instrumentation: Instrumentation | undefined

  constructor(
    /** Replaced by `A2AApp.replaceAgent`; an execution keeps the agent it started with. */
    public agent: Agent,
    readonly store: TaskStore,
    readonly logger: Logger,
    /** New tasks past this many running ones are refused, so a flood cannot grow the process without bound. */
    readonly maxRunningTasks = DEFAULT_MAX_RUNNING_TASKS,
    /** Bytes one task may hold, and the running tasks together (see `_task-bytes.ts`). */
    readonly byteLimits: TaskByteLimits = readTaskByteLimits({}, {}),
  ) {
    this.#runningBytes = new RunningBytes(byteLimits.maxRunningBytes)
    this.#subscribable = {
      store,
      followers: this.#followers,
      runOf: (taskId) => this.#executions.get(taskId)?.run,
      closing: () => this.#closing,
      get: (taskId) => this.get(taskId),
    }
    this.#taskLimits = {
      maxTaskBytes: byteLimits.maxTaskBytes,
      passed: (run, reason) => logger.warn(`Agent "${this.agent.card.name}": task ${run.id} is failed: ${reason}`),
    }
    this.#sink = (task, event) => {
      if (
        event.kind === 'status-update' &&
        event.status.state === 'completed' &&
        task.artifacts.length === 0 &&
        hasText(event.status.message)
      ) {
        logger.warn(
          `Agent "${this.agent.card.name}" completed task ${task.id} with its answer only in the status message; clients such as the platform show only artifacts. Use task.artifact(answer) before task.complete().`,
        )
      }
      // A failing store must not take the task (or the process) down with it: the live task and its
      // listeners still get the event; the log says what was not stored.
      let saved: ReturnType<TaskStore['append']> | undefined
      // A task whose create failed is not in the store: its run ends here (see #createLanded), nothing is written.
      const unlanded = this.#unlanded.get(task.id)
      try {
        if (unlanded !== 'failed') saved = store.append(task, event)
      } catch (error) {
        this.#storeFailed(task, event, error)
      }
      this.onEvent?.(task, event)
      this.instrumentation?.taskEvent(task, event)
      this.#followers.publish(task, event)
      // A durable store's write: the task's settling waits for it (a client told "completed" can count on
      // the task surviving a restart); a failure is logged and the task goes on.
      if (saved instanceof Promise) {
        saved.catch((error: unknown) => {
          // Failed while the task's create had not landed: it failed with the create, which answers for it (a write
          // queued after a create that landed is this instance's to answer, as any other).
          if (this.#unlanded.has(task.id)) return
          this.#storeFailed(task, event, error)
        })
        return saved
      }
      return undefined
    }
  }

  /** The store could not save an event (a method, not a closure per event: the memory store never fails). */
  #storeFailed(task: Task, event: TaskEvent, error: unknown): void {
    this.logger.error(`The task store could not save an event of task ${task.id}`, error)
    // An event missing from the store's log is a gap a client resuming the stream would never see: the task
    // ends here, with the reason (a failed final event is the settling's own error, answered to the client).
    if (event.kind === 'artifact-update' || !event.final) this.#failUnsaved(task.id)
  }

  #clusterJoined = false
  /** New tasks whose agent started while their create was on its way ('pending'), or whose create failed. */
  readonly #unlanded = new Map<string, 'pending' | 'failed'>()

  /** Ends a running task whose event the store could not save (see the sink). */
  #failUnsaved(taskId: string): void {
    const run = this.#executions.get(taskId)?.run
    if (!run || isSettled(run.state)) return
    run.abort(UNSAVED_REASON)
    run.setStatus('failed', UNSAVED_REASON)
  }

  /** Shutting down (`drain` was called): new tasks are refused, `/readyz` answers 503. */
  get closing(): boolean {
    return this.#closing
  }

  /** Tasks whose agent code is running now. */
  get runningCount(): number {
    return this.#executions.size
  }

  /** Bytes held by the running tasks (and the sends reserving room for theirs). */
  get runningBytes(): number {
    return this.#runningBytes.held
  }

  /** Sends and task growth refused past maxRunningBytes so far. */
  get runningBytesRefused(): number {
    return this.#runningBytes.refused
  }

  /**
   * Creates a task (or resumes one waiting for input) and starts the agent. `listener` sees every event of
   * this turn, starting with the `working` status (for an agent with `messageReplies`, at its first move).
   */
  async send(request: SendRequest, listener?: TaskListener): Promise<StartedTask> {
    this.#joinCluster()
    if (this.#closing)
      throw new ServerUnavailableError('The server is shutting down; send the message again shortly', 503)
    const { maxTaskBytes } = this.byteLimits
    const bytes = userMessageBytes(request.message)
    if (bytes > maxTaskBytes)
      throw new InvalidParamsError(
        `message: a message of ${bytes} bytes is more than maxTaskBytes (${maxTaskBytes}), the most one task may hold`,
      )
    if (this.#executions.size + this.#reserved >= this.maxRunningTasks) {
      this.tasksRefused++
      throw new ServerUnavailableError(
        `The server is busy: ${this.maxRunningTasks} tasks are running; retry later`,
        429,
      )
    }
    // Reserved before any store I/O and released once the run is registered (or the send failed).
    this.#runningBytes.reserve(bytes)
    const reservation: Reservation = { bytes }
    this.#reserved++
    try {
      if (request.taskId === undefined) {
        const { run, created } = await this.#create(request, bytes)
        if (!created) return this.#start(run, reservation, request.message, listener, request.prepare)
        // The agent runs while its task's create is on its way; the listener (a client's stream) hears its events
        // only once the task exists: a binding that writes them as they come (gRPC) must not tell of a task that
        // may never be stored.
        const held = listener && new HeldListener(listener)
        const started = this.#start(run, reservation, request.message, held?.listener, request.prepare)
        await this.#createLanded(started, created)
        held?.release()
        return started
      }
      const taskId = request.taskId
      // Another caller's task is one that does not exist: asked before anything of it is touched (its lock included).
      if (request.principal) await this.#authorize(taskId, request.principal.id)
      return await this.#locks.hold(taskId, async () =>
        this.#start(
          await this.#resume(taskId, request, reservation),
          reservation,
          request.message,
          listener,
          request.prepare,
        ),
      )
    } finally {
      this.#reserved--
      this.#runningBytes.release(reservation.bytes)
    }
  }

  /** With a shared store, this instance answers the cancels other instances forward for its running tasks. */
  #joinCluster(): void {
    if (this.#clusterJoined) return
    this.#clusterJoined = true
    const cluster = this.store.cluster
    if (!cluster) return
    cluster.onCancel((taskId) => (this.#executions.has(taskId) ? this.#cancelOnce(taskId, undefined) : undefined))
    cluster.onLost((taskId) => {
      const run = this.#executions.get(taskId)?.run
      // Ended here already: the store gave the lease back with the ending event; nothing was lost.
      if (!run || isTerminal(run.state)) return
      this.logger.warn(`Task ${taskId} lost its lease (this instance stalled past it); its run here is stopped`)
      run.abort(LEASE_LOST_REASON)
      // Like a shutdown past its grace: ended here and now, so the agent's late moves change nothing.
      if (!isSettled(run.state)) run.setStatus('failed', LEASE_LOST_REASON)
    })
  }

  /**
   * The task, when `owner` (a `Principal.id`; undefined: any) owns it; otherwise TaskNotFoundError. Another owner's
   * running task is asked of the store all the same (which answers nothing for that owner), so it takes as long to
   * refuse as an id nobody has.
   */
  async get(taskId: string, owner?: string): Promise<Task> {
    const run = this.#executions.get(taskId)?.run
    if (run && (owner === undefined || run.owner === owner)) return run.task
    const task = await this.store.get(taskId, owner)
    if (!task) throw new TaskNotFoundError(taskId)
    return task
  }

  /**
   * Refuses a task `owner` does not own exactly as one that does not exist, before anything else reads it or waits
   * on it.
   */
  async #authorize(taskId: string, owner: string): Promise<void> {
    await this.get(taskId, owner)
  }

  /**
   * Follows a task until it ends: its events from now on, of this turn and of the turns that follow-ups start,
   * each once, in order (see `subscribeToTask`). `onEnd` hears that the server ended the subscription (a shutdown).
   */
  async subscribe(
    taskId: string,
    listener: TaskListener,
    onEnd: () => void = noop,
    owner: string | undefined = undefined,
  ): Promise<Subscription> {
    if (owner !== undefined) await this.#authorize(taskId, owner)
    return subscribeToTask(this.#subscribable, taskId, listener, onEnd)
  }

  /** The events of a task after `afterSeq`, oldest first, while its store keeps them (`undefined` after). */
  async eventsAfter(taskId: string, afterSeq: number): Promise<TaskEvent[] | undefined> {
    return this.store.events(taskId, afterSeq)
  }

  /**
   * Cancels a task that has not ended, if the agent allows it. Concurrent cancels of a task share one answer. With
   * `principal`, only a task it owns (another's is not found); the agent's cancel hook sees it as `ctx.principal`.
   */
  async cancel(taskId: string, principal?: Principal): Promise<Task> {
    // Checked before a pending cancel is joined: its answer would tell of the task.
    if (principal) await this.#authorize(taskId, principal.id)
    return this.#cancelOnce(taskId, principal)
  }

  #cancelOnce(taskId: string, principal: Principal | undefined): Promise<Task> {
    let pending = this.#cancellations.get(taskId)
    if (!pending) {
      const running = this.#executions.get(taskId)?.run
      pending = running
        ? this.#cancelRun(running, principal)
        : // A task at rest is held while it is canceled, so a follow-up cannot start it meanwhile.
          this.#locks.hold(taskId, () => this.#cancelAtRest(taskId, principal))
      const settled = pending.finally(() => this.#cancellations.delete(taskId))
      settled.catch(noop)
      this.#cancellations.set(taskId, pending)
    }
    return pending
  }

  /** A task not running here: at rest, or (with a shared store) running on another instance. */
  async #cancelAtRest(taskId: string, principal: Principal | undefined): Promise<Task> {
    const local = this.#executions.get(taskId)?.run
    if (local) return this.#cancelRun(local, principal)
    const cluster = this.store.cluster
    if (!cluster) return this.#cancelRun(await this.#idleRun(taskId, principal), principal)
    // Held elsewhere: the instance that runs it cancels it. Otherwise hold it here while it is canceled.
    for (let attempt = 0; !(await cluster.claim(taskId)); attempt++) {
      const answer = await cluster.cancel(taskId)
      if (answer) return answer
      if (attempt === 2)
        throw new ServerUnavailableError(`Task ${taskId} is changing hands between instances; retry the cancel`, 503)
    }
    try {
      return await this.#cancelRun(await this.#idleRun(taskId, principal), principal)
    } finally {
      await cluster.release(taskId)
    }
  }

  async #cancelRun(run: TaskRun, principal: Principal | undefined): Promise<Task> {
    if (isTerminal(run.state)) throw new TaskNotCancelableError(`Task cannot be canceled: it is already ${run.state}`)
    if (!this.agent.cancel)
      throw new TaskNotCancelableError('Task cannot be canceled: this agent does not support cancellation')
    try {
      // The hook sees who asks to cancel; a cancel forwarded from another instance has no caller here: the turn's.
      await this.agent.cancel(this.#context(run, lastUserMessage(run.task), principal ?? run.principal), run)
    } catch (error) {
      if (error instanceof TaskNotCancelableError) throw error
      // The client asked to stop; a failing hook must not keep the task alive.
      this.logger.error(
        `Agent "${this.agent.card.name}" threw in cancel() for task ${run.id}; canceling it anyway`,
        error,
      )
    }
    // The task may have ended on its own while the hook ran: then it was not canceled.
    if (isTerminal(run.state) && run.state !== 'canceled')
      throw new TaskNotCancelableError(`Task cannot be canceled: it is already ${run.state}`)
    run.abort('Task canceled')
    if (!isTerminal(run.state)) run.setStatus('canceled')
    return run.task
  }

  /**
   * Refuses new tasks from now on, waits up to `graceMs` for running tasks to finish, then aborts the rest and
   * fails them, so no task is left `working` by a shutdown.
   */
  async drain(graceMs: number): Promise<void> {
    this.#closing = true
    // Subscriptions that only a follow-up (refused here from now on) or another instance could move end now;
    // those of a task running here hear it end, or end after the wait.
    this.#followers.end((follower) => {
      const run = this.#executions.get(follower.taskId)?.run
      return !run || isSettled(run.state)
    })
    if (this.#executions.size === 0) return
    let timer: ReturnType<typeof setTimeout> | undefined
    const graceOver = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))
    await Promise.race([Promise.all([...this.#executions.values()].map((e) => e.done)), graceOver])
    clearTimeout(timer)
    for (const { run } of this.#executions.values()) {
      run.abort('Server shutting down')
      if (!isSettled(run.state)) run.setStatus('failed', 'The server shut down before the task finished')
    }
    this.#followers.end()
  }

  #start(
    run: TaskRun,
    reservation: Reservation,
    message: Message,
    listener: TaskListener | undefined,
    prepare?: SendRequest['prepare'],
  ): StartedTask {
    // The run holds what the send reserved (its task's bytes) until it settles.
    run.holdIn(this.#runningBytes)
    reservation.bytes = 0
    const unsubscribe = listener ? run.subscribe(listener) : noop
    // In the context of the operation that sent the message: the turn below runs in it.
    this.instrumentation?.turnStarted(run.task, message)
    const settled = run.nextSettled()
    // Only a blocking send waits for it; a failed save must not become an unhandled rejection elsewhere.
    settled.catch(noop)
    // #execute ends every task itself; this catch only keeps a bug there from becoming an unhandled rejection.
    const done = this.#execute(run, message, prepare).catch((error) =>
      this.logger.error(`Task ${run.id} could not be finished`, error),
    )
    this.#executions.set(run.id, { run, done })
    return { run, settled, unsubscribe }
  }

  /**
   * The create of a task whose agent already started (see `ClusterLink.createJoinsFirstEvents`) landed; if it failed,
   * the run stops unseen (no client was told of the task) and the send fails with the create's error.
   */
  async #createLanded(started: StartedTask, created: Promise<void>): Promise<void> {
    try {
      await created
      this.#unlanded.delete(started.run.id)
    } catch (error) {
      started.unsubscribe()
      const { run } = started
      run.abort(UNCREATED_REASON)
      if (!isSettled(run.state)) run.setStatus('failed', UNCREATED_REASON)
      // Forgotten once the writes that failed with the create have been answered (in this turn of the event loop:
      // the store fails them as it fails the create).
      setTimeout(() => this.#unlanded.delete(run.id), 0)
      throw error
    }
  }

  /**
   * A new task in the store, and its run. With a store whose create joins the first events, the create is on its
   * way (`created`) rather than landed.
   */
  async #create(request: SendRequest, bytes: number): Promise<{ run: TaskRun; created?: Promise<void> }> {
    const { message } = request
    const id = newId()
    const contextId = request.contextId ?? message.contextId ?? newId()
    message.taskId = id
    message.contextId = contextId
    const task: Task = {
      kind: 'task',
      id,
      contextId,
      status: { state: 'submitted', timestamp: isoNow() },
      artifacts: [],
      history: [message],
    }
    const { principal } = request
    const owner = principal?.id
    // Held before it exists (or as it comes to exist), so no instance takes the new task for one whose instance died.
    const cluster = this.store.cluster
    if (cluster && !cluster.claimsOnCreate) await cluster.claim(id)
    const creating = this.store.create(task, owner)
    let created: Promise<void> | undefined
    if (cluster?.createJoinsFirstEvents && !request.answeredAtOnce && creating instanceof Promise) {
      this.#unlanded.set(id, 'pending')
      // Marked before the events the create carried fail with it: their failure is the create's, answered once.
      created = creating.catch((error: unknown) => {
        this.#unlanded.set(id, 'failed')
        throw error
      })
    } else {
      try {
        await creating
      } catch (error) {
        if (cluster) await cluster.release(id)
        throw error
      }
    }
    const run = new TaskRun(task, this.#sink, 0, this.#taskLimits, TaskBytes.created(bytes))
    run.owner = owner
    run.principal = principal
    run.agentCore = request.agentCore
    return { run, created }
  }

  async #resume(taskId: string, request: SendRequest, reservation: Reservation): Promise<TaskRun> {
    const running = this.#executions.get(taskId)
    if (running?.run.awaitingAuthorization)
      throw new InvalidParamsError(
        `task ${taskId} waits for an authorization the agent obtains out of band, then goes on by itself; follow it with SubscribeToTask or GetTask`,
      )
    // The agent may still be returning after asking for input; the follow-up waits for it.
    if (running && isInterrupted(running.run.state)) await running.done
    if (this.#executions.has(taskId))
      throw new InvalidParamsError(`task ${taskId} is still working; send a follow-up when it asks for input`)
    const cluster = this.store.cluster
    if (cluster && !(await claimForFollowUp(cluster, this.store, taskId, () => this.#closing)))
      throw new InvalidParamsError(
        `task ${taskId} is still working on another instance; send a follow-up when it asks for input`,
      )
    try {
      return await this.#resumeHeld(taskId, request, reservation)
    } catch (error) {
      await cluster?.release(taskId)
      throw error
    }
  }

  async #resumeHeld(taskId: string, request: SendRequest, reservation: Reservation): Promise<TaskRun> {
    const run = await this.#idleRun(taskId, request.principal)
    run.agentCore = request.agentCore
    const { task } = run
    if (isTerminal(task.status.state))
      throw new TaskEndedError(`task ${taskId} is ${task.status.state} and takes no more messages; start a new task`)
    if (request.contextId !== undefined && request.contextId !== task.contextId) {
      throw new InvalidParamsError(
        `contextId ${JSON.stringify(request.contextId)} does not match the context of task ${taskId}`,
      )
    }
    // Refused before anything changes: the task stays as it was, readable and open to a smaller message.
    const held = run.bytes.total
    const bytes = reservation.bytes
    const { maxTaskBytes } = this.byteLimits
    if (held + bytes > maxTaskBytes) {
      throw new InvalidParamsError(
        `message: the task would hold ${held + bytes} bytes, more than maxTaskBytes (${maxTaskBytes}); start a new task`,
      )
    }
    // The rest of the task is held while it runs, too.
    this.#runningBytes.reserve(held)
    reservation.bytes += held
    request.message.taskId = taskId
    request.message.contextId = task.contextId
    task.history.push(request.message)
    run.bytes.total += bytes
    return run
  }

  /** A task at rest, loaded to move it; `principal` (checked by the caller already) owns it and makes this move. */
  async #idleRun(taskId: string, principal: Principal | undefined): Promise<TaskRun> {
    const owner = principal?.id
    const task = await this.store.get(taskId, owner)
    if (!task) throw new TaskNotFoundError(taskId)
    const run = new TaskRun(task, this.#sink, (await lastSeqOf(this.store, taskId)) ?? 0, this.#taskLimits)
    run.owner = owner
    run.principal = principal
    return run
  }

  async #execute(run: TaskRun, message: Message, prepare: SendRequest['prepare']): Promise<void> {
    try {
      await runAgentTurn(this.agent, run, this.#context(run, message), prepare, this.logger)
    } finally {
      if (this.#executions.get(run.id)?.run === run) this.#executions.delete(run.id)
      const cluster = this.store.cluster
      if (cluster) await cluster.release(run.id)
    }
  }

  #context(run: TaskRun, message: Message, principal = run.principal): ExecutionContext {
    return new RunContext(run, message, this.store, this.logger, principal)
  }
}

const noop = (): void => {}
const UNSAVED_REASON =
  'The task store could not save an event of this task; the task is failed so that no client misses one'
/**
 * A listener that hears nothing until released, then every event it missed, in order, and the rest as they come.
 * The first event comes with the task as it was then (a stream opens with that Task, numbered by the events it
 * reflects: a copy, taken once); the others with the live task, as a listener always gets it (a stream sends only
 * their events: a copy of a growing task per held chunk would cost the square of its size).
 */
class HeldListener {
  #held: TaskEvent[] | undefined = []
  #opening: Task | undefined
  #live: Task | undefined
  readonly #to: TaskListener

  constructor(to: TaskListener) {
    this.#to = to
  }

  readonly listener: TaskListener = (event, task) => {
    if (!this.#held) return this.#to(event, task)
    this.#opening ??= structuredClone(task)
    this.#live = task
    this.#held.push(event)
  }

  release(): void {
    const held = this.#held ?? []
    this.#held = undefined
    for (const [i, event] of held.entries()) this.#to(event, i === 0 ? this.#opening! : this.#live!)
    this.#opening = undefined
  }
}

const UNCREATED_REASON = 'The task store could not create the task; it was not started'
const LEASE_LOST_REASON = 'The instance running the task stalled past its lease; the task is failed'
