import type { Task, TaskEvent } from '../types.js'
import { isTerminal } from './_lifecycle.js'
import type { TaskListener } from './_task-run.js'

/**
 * One subscription to a task (SubscribeToTask, tasks/resubscribe) across its turns: it outlives the turn that
 * asks for input, because the follow-up that starts the next one may come from any client, and ends only with
 * the task, the client or the server. Its events come from one source at a time (a run here, the shared
 * store's feed), which it may change between turns; it passes each event on once, in order.
 */
export class TaskFollower {
  #delivered = 0
  /** The task the last event heard came with (for an event a run here published: its live task). */
  #lastTask: Task | undefined
  #detach: (() => void) | undefined
  #stopped = false

  constructor(
    readonly taskId: string,
    readonly listener: TaskListener,
    /** Told when the engine ends the subscription itself (a shutdown), not when the task ends or the client leaves. */
    readonly onEnd: () => void,
    readonly registry: Followers,
  ) {
    registry.add(this)
  }

  get stopped(): boolean {
    return this.#stopped
  }

  /** The task and the number of the event it reflects, as of the last event heard; `undefined` before one. */
  get lastHeard(): { task: Task; seq: number } | undefined {
    return this.#lastTask && { task: this.#lastTask, seq: this.#delivered }
  }

  /** Takes events from `detach`'s source from now on; the previous source is left. */
  listenTo(detach: () => void): void {
    this.#detach?.()
    if (this.#stopped) detach()
    else this.#detach = detach
  }

  hear(event: TaskEvent, task: Task): void {
    if (this.#stopped || event.seq <= this.#delivered) return
    this.#delivered = event.seq
    this.#lastTask = task
    this.listener(event, task)
    if (event.kind === 'status-update' && isTerminal(event.status.state)) this.stop()
  }

  /** The client left, or the task ended: nothing more is heard. */
  readonly stop = (): void => {
    if (this.#stopped) return
    this.#stopped = true
    this.#detach?.()
    this.#detach = undefined
    this.registry.delete(this)
  }

  /** The server ends the subscription (it is shutting down): the client is told, so its stream can close. */
  end(): void {
    if (this.#stopped) return
    this.stop()
    this.onEnd()
  }
}

/**
 * The open subscriptions of one engine: all of them (a shutdown ends them), and those that hear a task's events
 * from the engine itself, whichever of its runs here publishes them (a store no other instance writes to: every
 * turn of the task runs here).
 */
export class Followers {
  readonly #all = new Set<TaskFollower>()
  readonly #byTask = new Map<string, Set<TaskFollower>>()

  add(follower: TaskFollower): void {
    this.#all.add(follower)
  }

  delete(follower: TaskFollower): void {
    this.#all.delete(follower)
    const ofTask = this.#byTask.get(follower.taskId)
    if (ofTask?.delete(follower) && ofTask.size === 0) this.#byTask.delete(follower.taskId)
  }

  /** `follower` hears every event of its task that a run here publishes, from now on. */
  hearLocalRuns(follower: TaskFollower): void {
    if (follower.stopped) return
    let ofTask = this.#byTask.get(follower.taskId)
    if (!ofTask) {
      ofTask = new Set()
      this.#byTask.set(follower.taskId, ofTask)
    }
    ofTask.add(follower)
  }

  /** An event a run here published (called for every event: no lookup at all while nobody follows a task here). */
  publish(task: Task, event: TaskEvent): void {
    if (this.#byTask.size === 0) return
    const ofTask = this.#byTask.get(task.id)
    if (ofTask) for (const follower of ofTask) follower.hear(event, task)
  }

  /** Ends the subscriptions `which` picks (all by default), telling their clients. */
  end(which: (follower: TaskFollower) => boolean = () => true): void {
    for (const follower of [...this.#all]) if (which(follower)) follower.end()
  }
}
