import { ConfigurationError, TaskNotFoundError } from '../errors.js'
import type { ClusterLink, MaybePromise, TaskQuery, TaskStore } from '../stores/task-store.js'
import type { Task } from '../types.js'

/**
 * One agent's view of the store the agents of a server share: each agent's tasks are kept under owners of its own,
 * `a2a-agent:<name>` for callers of an agent that checks no credentials and `a2a-agent:<name>/<Principal.id>` for
 * each caller of one that does.
 *
 * Why owners rather than a namespace of their own in every store: the runtime already checks a task's owner before
 * anything else reads it (the engine's `get(taskId, owner)` ahead of every read, cancel, subscription and push config
 * of a caller's request; `list`'s owner filter, which counts only that owner's tasks), and every store that keeps
 * owners (memory, file, Redis, PostgreSQL, Durable Object) answers another owner's task as one that does not exist.
 * Folding the agent into the owner makes those same checks keep agents apart, in every store at once, and the
 * per-caller scope still applies inside each agent (a caller's owner is its agent's plus its own id).
 *
 * A read without an owner means two things to the runtime. For an agent that checks no credentials it is a caller's
 * request (no principal): it is read as the agent's anonymous owner, so only this agent's tasks answer. For one that
 * checks them every caller has a principal, so a read without an owner is the runtime's own, made after the caller's
 * owner was checked for that very task (the engine's subscriptions, resumed runs): it passes through as it is.
 * `checksCredentials` is asked at each read: a reload (`a2a dev`) may add or drop the agent's credentials, and a view
 * fixed at the first version would hand an agent that dropped them the whole shared store.
 */
export function agentStore(
  store: TaskStore,
  name: string,
  checksCredentials: () => boolean,
  cluster: ClusterLink | undefined,
): TaskStore {
  const anonymous = `a2a-agent:${name}`
  // A task is never kept without an owner: nobody's task would answer any agent's reads without one.
  const created = (owner: string | undefined) => (owner === undefined ? anonymous : `${anonymous}/${owner}`)
  const asked = (owner: string | undefined) =>
    owner === undefined ? (checksCredentials() ? undefined : anonymous) : `${anonymous}/${owner}`
  const { snapshot, lastSeq } = store
  const get = (taskId: string, owner?: string) => store.get(taskId, asked(owner))
  return {
    get,
    create: (task, owner) => store.create(task, created(owner)),
    append: (task, event) => store.append(task, event),
    events: (taskId, afterSeq) => store.events(taskId, afterSeq),
    ...(lastSeq && { lastSeq: (taskId: string) => lastSeq.call(store, taskId) }),
    list: (query: TaskQuery) => {
      const owner = asked(query.owner)
      const scoped: TaskQuery = { ...query }
      if (owner === undefined) delete scoped.owner
      else scoped.owner = owner
      return store.list(scoped)
    },
    ...(snapshot && { snapshot: (taskId: string, owner?: string) => snapshot.call(store, taskId, asked(owner)) }),
    ...(cluster && { cluster: ownCancels(cluster, get) }),
    ...(store.pushConfigs && { pushConfigs: store.pushConfigs }),
    keepsOwners: true,
  }
}

/**
 * A cancel is forwarded to the instance that runs the task, which may be this very process running it for another
 * agent: the engine forwards it without reading the task when the caller has no principal, so the task is asked of
 * this agent's view first, and another agent's is not found.
 */
function ownCancels(cluster: ClusterLink, get: (taskId: string) => MaybePromise<Task | undefined>): ClusterLink {
  return linkWith(cluster, {
    cancel: async (taskId) => {
      if (!(await get(taskId))) throw new TaskNotFoundError(taskId)
      return cluster.cancel(taskId)
    },
  })
}

/**
 * `link` with `changed` in place of some of its members, every other one forwarded as it is: its flags and methods,
 * those a store adds later too (a flag copied by hand and forgotten would silently turn a store's feature off).
 */
function linkWith(link: ClusterLink, changed: Partial<ClusterLink>): ClusterLink {
  return new Proxy(link, {
    get(target, key) {
      if (Object.hasOwn(changed, key)) return changed[key as keyof ClusterLink]
      const value: unknown = Reflect.get(target, key)
      // A store's link may be a class instance: its methods keep their `this`.
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/** The agents' namespaces are owners: a store that does not keep them would let each agent read every other's. */
export function refuseOwnerlessStore(store: TaskStore): void {
  if (store.keepsOwners !== true)
    throw new ConfigurationError(
      'Several agents in one server keep their tasks apart by owner, but the task store does not keep owners (keepsOwners); use a store that does (memory, file, Redis, PostgreSQL, Durable Object) or add owners to yours (taskStoreContract checks them)',
    )
}

/**
 * The cluster link of a shared store (Redis, PostgreSQL) for several agents' engines: the link holds one handler for
 * forwarded cancels and one for lost leases, so this one hands each to every engine; an engine answers only for the
 * tasks it runs (a cancel's `undefined` from the others, a lost lease ignored).
 */
export function sharedClusterLink(cluster: ClusterLink | undefined): ClusterLink | undefined {
  if (!cluster) return undefined
  const cancelHandlers: Array<(taskId: string) => Promise<Task> | undefined> = []
  const lostHandlers: Array<(taskId: string) => void> = []
  cluster.onCancel((taskId) => {
    for (const handler of cancelHandlers) {
      const answer = handler(taskId)
      if (answer) return answer
    }
    return undefined
  })
  cluster.onLost((taskId) => {
    for (const handler of lostHandlers) handler(taskId)
  })
  return linkWith(cluster, {
    onCancel: (handler) => void cancelHandlers.push(handler),
    onLost: (handler) => void lostHandlers.push(handler),
  })
}
