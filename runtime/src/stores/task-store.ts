import type { PushConfigStore } from '../push/push-config.js'
import type { MaybePromise, Task, TaskEvent, TaskState } from '../types.js'

export type { MaybePromise } from '../types.js'

/**
 * Where tasks and their ordered event logs live. The runtime calls `create` once per task and then
 * `append` after applying each event to the task, in order; an implementation may keep the task object it
 * is given (the memory store does) or serialise it (a remote store must).
 */
export interface TaskStore {
  /**
   * The task, or `undefined` when it never existed or retention removed it. With `owner`: `undefined` too when
   * the task is not that owner's (another's, or created without one), exactly as for a task that does not exist;
   * without it, whoever owns it (the runtime's own reads, after it checked the caller).
   */
  get(taskId: string, owner?: string): MaybePromise<Task | undefined>
  /**
   * Keeps a new task, once, before any of its events. `owner` (the `Principal.id` of the caller that created it;
   * undefined when the agent checks no credentials) is kept with the task for its whole life, restarts included.
   */
  create(task: Task, owner?: string): MaybePromise<void>
  /** `task` already reflects `event`. */
  append(task: Task, event: TaskEvent): MaybePromise<void>
  /**
   * The events after `afterSeq`, oldest first, while the store still has the log. `undefined` when the task
   * is unknown or its log was compacted into the task (a store may do so once the task is terminal), or when
   * some of the events after `afterSeq` were dropped (a store may keep only a task's newest events). Without
   * `afterSeq`: the events it keeps.
   */
  events(taskId: string, afterSeq?: number): MaybePromise<TaskEvent[] | undefined>
  /** The number of the task's last event while the store has its log, without reading the log. */
  lastSeq?(taskId: string): MaybePromise<number | undefined>
  /** Tasks newest first (by status time), filtered, one page at a time. */
  list(query: TaskQuery): MaybePromise<TaskPage>
  /** Stops timers and releases connections. */
  close?(): MaybePromise<void>
  /**
   * Resolves once the store can serve. Rejects with a `ConfigurationError` when it never will as it is set up (a
   * database schema newer than this runtime, or one left for a migration command): `serveAgent` then stops the start
   * with that one line. Any other rejection (the database cannot be reached yet) lets the start go on: requests get
   * a 503 until the store can serve.
   */
  ready?(): Promise<void>
  /**
   * Resolves when the store answers now, one cheap round trip (Redis `PING`, PostgreSQL `SELECT 1`); rejects saying
   * why not. `/readyz` asks it, at most once a second however often it is probed, and waits 750 ms at most. A store
   * without it is ready once `ready` resolves (memory and file stores always are).
   */
  reachable?(): Promise<void>
  /**
   * The task and the number of its last event, read together (a store that other instances write to must
   * not let an event fall between the two reads). `owner` as for `get`.
   */
  snapshot?(taskId: string, owner?: string): MaybePromise<{ task: Task; seq: number } | undefined>
  /** Present on a store that several instances share (Redis): how they coordinate the tasks' runs. */
  readonly cluster?: ClusterLink
  /** Webhooks of tasks, on a store several instances share (otherwise the runtime keeps them in memory). */
  readonly pushConfigs?: PushConfigStore
  /**
   * `true` says this store keeps each task's owner and answers by it (`create`, `get`, `snapshot` and `list` with
   * an owner, as `taskStoreContract` checks). An agent whose card declares authentication refuses to start on a
   * store without it: one that ignored owners would show every caller every task.
   */
  readonly keepsOwners?: boolean
}

/**
 * Coordination between instances that share a store: one instance runs a task at a time (a lease it renews
 * while the agent runs), others follow its events and forward cancels to it.
 */
export interface ClusterLink {
  /** The store's `create` takes the new task's lease in the same write: the engine need not claim it first. */
  claimsOnCreate?: boolean
  /**
   * The store's `create` waits a moment for the new task's first events and writes them in the same statement: the
   * engine starts the agent while the create is on its way, and answers the client (the task, its stream's first
   * event, a blocking answer) only once the create landed; a create that fails stops the run and fails the send.
   */
  createJoinsFirstEvents?: boolean
  /** Takes the lease to run the task here; `false` when another live instance holds it. */
  claim(taskId: string): Promise<boolean>
  /** Gives the lease back once this instance's run of the task has ended. */
  release(taskId: string): Promise<void>
  /**
   * Follows the events after `afterSeq` of a task, whichever instance publishes them, in order, each once, until
   * it ends (through the turns that follow-ups start) or the returned function is called.
   */
  follow(taskId: string, afterSeq: number, onEvent: (event: TaskEvent) => void): () => void
  /**
   * Asks the instance that runs the task to cancel it; resolves with the task as that instance answers, or
   * `undefined` when no instance runs it any more and it waits for input (the caller cancels it itself).
   */
  cancel(taskId: string): Promise<Task | undefined>
  /** Serves the cancels other instances forward here; the handler answers `undefined` for a task not run here. */
  onCancel(handler: (taskId: string) => Promise<Task> | undefined): void
  /** Hears of a task whose lease this instance lost (it stalled past it): the run here must stop. */
  onLost(handler: (taskId: string) => void): void
}

/** What `list` answers: the filters of a ListTasks request and the page it asks for. */
export interface TaskQuery {
  /**
   * Only the tasks of this owner (`Principal.id`); tasks created without an owner are nobody's. Undefined: every
   * task (an agent that checks no credentials).
   */
  owner?: string
  /** Only the tasks of this context. */
  contextId?: string
  /** Only the tasks in this state. */
  state?: TaskState
  /** Only tasks whose status changed at or after this ISO time. */
  updatedAfter?: string
  /** Page size, at least 1. */
  limit: number
  /** From a previous page's `nextCursor`. */
  cursor?: string
  /**
   * What the caller shows of each task's history: its newest `historyLength` messages (0: none). A store may
   * answer only those (and must answer at least those).
   * @default undefined (all)
   */
  historyLength?: number
  /**
   * `false`: the caller shows no artifacts, and a store may leave them out.
   * @default true
   */
  includeArtifacts?: boolean
}

/** One page of `list`'s answer. */
export interface TaskPage {
  /** The page's tasks, newest first. */
  tasks: Task[]
  /** Absent on the last page. */
  nextCursor?: string
  /** Tasks matching the filters, all pages together. */
  total: number
}
