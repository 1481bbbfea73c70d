import { TaskNotFoundError } from '../errors.js'
import type { ClusterLink, TaskStore } from '../stores/task-store.js'
import type { Task } from '../types.js'
import { type Followers, TaskFollower } from './_followers.js'
import { isInterrupted, isSettled, isTerminal } from './_lifecycle.js'
import type { TaskListener, TaskRun } from './_task-run.js'

/** A subscription to a task (see `TaskEngine.subscribe`). */
export interface Subscription {
  /** Whether more events may come: false once the task has ended, or for a task at rest during a shutdown. */
  following: boolean
  /** The task as it stands and the number of the last event it reflects, read together. */
  current: () => { task: Task; seq: number | undefined }
  unsubscribe: () => void
}

/** What following a task needs of the engine. */
export interface Subscribable {
  readonly store: TaskStore
  readonly followers: Followers
  /** The run of the task on this instance, while its agent code runs here. */
  runOf(taskId: string): TaskRun | undefined
  /** Whether the server is shutting down (no follow-up will start a task at rest any more). */
  closing(): boolean
  get(taskId: string): Promise<Task>
}

const noop = (): void => {}

/**
 * Follows a task until it ends: `listener` sees its events from now on, of this turn and of the turns that
 * follow-ups start (from any client, on any instance that shares the store), each once, in order. A task
 * waiting for input is followed too: its subscriber waits for the next turn. `following` is false for a task
 * that has ended, or one at rest while the server shuts down: nothing more will come. `onEnd` hears that the
 * server ended the subscription (a shutdown).
 *
 * `current()` is the task as it stands and the number of the last event it reflects, read together (a task
 * moves on while the caller awaits); the number is `undefined` when the store no longer keeps the log of a
 * task at rest (it ended a while ago).
 */
export async function subscribeToTask(
  engine: Subscribable,
  taskId: string,
  listener: TaskListener,
  onEnd: () => void,
): Promise<Subscription> {
  const follower = new TaskFollower(taskId, listener, onEnd, engine.followers)
  const cluster = engine.store.cluster
  // Registered before anything is read: no event published from here on can slip past it.
  if (!cluster) engine.followers.hearLocalRuns(follower)
  const run = engine.runOf(taskId)
  // A task that has settled (waiting for input) sends nothing more from this run, even while its agent is
  // still returning: its next turn is another run.
  if (run && !isSettled(run.state)) {
    if (cluster) follower.listenTo(followRunThenCluster(follower, run, cluster))
    return { following: true, current: () => ({ task: run.task, seq: run.seq }), unsubscribe: follower.stop }
  }
  let read: { task: Task; seq: number | undefined }
  try {
    const snapshot = engine.store.snapshot ? await engine.store.snapshot(taskId) : undefined
    if (engine.store.snapshot && !snapshot) throw new TaskNotFoundError(taskId)
    read = snapshot ?? { task: await engine.get(taskId), seq: await lastSeqOf(engine.store, taskId) }
  } catch (error) {
    follower.stop()
    throw error
  }
  // A follow-up may have started the next turn here since the subscription began (even ended it): the task of
  // its run, live, is then the current one, and what was heard goes out after it.
  const heard = !cluster && follower.lastHeard !== undefined
  // Otherwise nothing more to hear: the task has ended, or no follow-up can start it here any more.
  if (!heard && (isTerminal(read.task.status.state) || engine.closing())) {
    follower.stop()
    return { following: false, current: () => read, unsubscribe: noop }
  }
  if (!cluster) return { following: true, current: () => follower.lastHeard ?? read, unsubscribe: follower.stop }
  // At rest, or running on another instance that shares the store: the store's feed carries the events of
  // every instance, in order, this turn's and the next ones'.
  follower.listenTo(cluster.follow(taskId, read.seq ?? 0, (event) => follower.hear(event, read.task)))
  return { following: true, current: () => read, unsubscribe: follower.stop }
}

/**
 * With a shared store: the events of the run here while it runs (as it publishes them), then, once it waits
 * for input, the store's feed, as the follow-up that starts the next turn may reach any instance.
 */
function followRunThenCluster(follower: TaskFollower, run: TaskRun, cluster: ClusterLink): () => void {
  return run.subscribe((event, task) => {
    follower.hear(event, task)
    if (event.kind === 'status-update' && isInterrupted(event.status.state)) {
      follower.listenTo(cluster.follow(run.id, event.seq, (next) => follower.hear(next, run.task)))
    }
  })
}

/** The number of the task's last event, from the store's count when it keeps one (no copy of the log). */
export async function lastSeqOf(store: TaskStore, taskId: string): Promise<number | undefined> {
  if (store.lastSeq) return store.lastSeq(taskId)
  const log = await store.events(taskId)
  return log ? (log.at(-1)?.seq ?? 0) : undefined
}
