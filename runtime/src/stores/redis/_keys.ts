import { ConfigurationError } from '../../errors.js'

/**
 * The keys and channels of the Redis store. A task's keys share the hash tag `{<task id>}`, and the list
 * indexes share `{index}`: with `cluster: true` each Lua script touches one slot, so the store runs on Redis
 * Cluster. On a single Redis (the default) the scripts that write a task also file it in the indexes, two slots
 * in one call: a proxy that shards one address over several nodes needs `cluster: true` too. (Redis hashes
 * only what is inside the first `{…}` of a key, so the prefix must not hold one.)
 */
export class RedisKeys {
  constructor(readonly prefix: string) {
    if (prefix.includes('{') || prefix.includes('}')) {
      throw new ConfigurationError(
        `The Redis store's prefix must not contain "{" or "}" (got ${JSON.stringify(prefix)}): the store puts its own hash tags in the keys`,
      )
    }
  }

  /**
   * A hash: `json` (the task as of `seq`, without its history), `seq`, `state` (now), `head` (the task without
   * history nor artifacts, as of its last status), the history one message per field `h:0` … `h:<hn - 1>`, and
   * `v` 2 for this layout (a task written before it has its history in `json` and follow-ups in the entries).
   */
  task(taskId: string): string {
    return `${this.prefix}{${taskId}}:task`
  }

  /** A stream: what was added to the task after its `json` was written (events, and follow-up messages). */
  entries(taskId: string): string {
    return `${this.prefix}{${taskId}}:entries`
  }

  push(taskId: string): string {
    return `${this.prefix}{${taskId}}:push`
  }

  lease(taskId: string): string {
    return `${this.prefix}{${taskId}}:lease`
  }

  /** The three keys that live and expire together. */
  taskKeys(taskId: string): [string, string, string] {
    return [this.task(taskId), this.entries(taskId), this.push(taskId)]
  }

  /** Where the index keys start: each script builds the names of the per-state and per-context sets from it. */
  get index(): string {
    return `${this.prefix}{index}:`
  }

  /** Sorted set of every task by the time of its status. */
  get all(): string {
    return `${this.index}all`
  }

  /** Hash: task id → `<state> <context id>`, what the task is indexed under now. */
  get indexed(): string {
    return `${this.index}indexed`
  }

  /** Set of the tasks that have not settled (checked for a lost instance). */
  get running(): string {
    return `${this.index}running`
  }

  /** The lock that keeps sweeps from overlapping, across instances. */
  get sweepLock(): string {
    return `${this.index}sweep`
  }

  byState(state: string): string {
    return `${this.index}state:${state}`
  }

  byContext(contextId: string): string {
    return `${this.index}ctx:${contextId}`
  }

  byContextState(contextId: string, state: string): string {
    return `${this.index}ctx-state:${state}:${contextId}`
  }

  /**
   * Hash: task id → the `Principal.id` of its owner, for the tasks created with one (a task missing from it is
   * nobody's). The index keeps it so that taking a task out of the indexes knows its owner's sets without the task.
   */
  get owners(): string {
    return `${this.index}owners`
  }

  /**
   * The sorted set of the owner's tasks, of one context and/or in one state when given (the owner's own `all`,
   * `ctx:`, `state:` and `ctx-state:`). The scripts build the same names in Lua (`OWNER_SETS_LUA` in `_scripts.ts`).
   */
  byOwner(owner: string, filters: { contextId?: string | undefined; state?: string | undefined } = {}): string {
    // The owner's byte length goes first: an owner and a context id may both hold ':' (an issuer's URL), and
    // `<owner>:<context>` alone would read the same for two different pairs.
    const who = `${new TextEncoder().encode(owner).length}:${owner}`
    const { contextId, state } = filters
    if (contextId === undefined)
      return state === undefined ? `${this.index}owner:${who}` : `${this.index}owner-state:${state}:${who}`
    return state === undefined
      ? `${this.index}owner-ctx:${who}:${contextId}`
      : `${this.index}owner-ctx-state:${state}:${who}:${contextId}`
  }

  live(taskId: string): string {
    return `${this.prefix}live:${taskId}`
  }

  get cancel(): string {
    return `${this.prefix}cancel`
  }

  reply(instanceId: string): string {
    return `${this.prefix}reply:${instanceId}`
  }
}
