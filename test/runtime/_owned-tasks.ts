import type { Task } from 'a2a-runtime'
import type { TaskEvent, TaskStore } from 'a2a-runtime/store'
import { expect } from 'vitest'

// Tasks created by two owners (and one created without an owner) on a store, driven as the engine drives them, and
// the check that each caller sees only its own: for the stores' owner tests (file-store-owners.test.ts,
// durable-object-store-owners.test.ts, file-store.test.ts after a SIGKILL).

/** The context every task here is in: a list by context must not mix owners either. */
const CONTEXT = 'shared-context'

const at = (ms: number) => new Date(Date.UTC(2026, 10, 26, 0, 0, 0, ms)).toISOString()

/** A new task with the user's first message, as the engine creates it; `ms` orders its status times. */
export function submitted(id: string, ms: number, text = 'Hello'): Task {
  return {
    kind: 'task',
    id,
    contextId: CONTEXT,
    status: { state: 'submitted', timestamp: at(ms) },
    history: [{ kind: 'message', role: 'user', messageId: `m-${id}`, parts: [{ kind: 'text', text }], taskId: id }],
    artifacts: [],
  }
}

/** Moves `task` (in place) and gives the event that says so. */
export function status(task: Task, seq: number, state: Task['status']['state'], final: boolean): TaskEvent {
  task.status = { state, timestamp: new Date(Date.parse(task.status.timestamp) + 1).toISOString() }
  return { kind: 'status-update', seq, taskId: task.id, contextId: task.contextId, status: task.status, final }
}

/** Completes a task that is working, its event numbered `seq`, and waits for the store's write. */
export async function settle(store: TaskStore, task: Task, seq: number): Promise<void> {
  await store.append(task, status(task, seq, 'completed', true))
}

/** A task created by `owner` (undefined: by an agent that checks no credentials), run to `state`. */
export async function ownedTask(
  store: TaskStore,
  id: string,
  owner: string | undefined,
  ms: number,
  state: 'completed' | 'input-required' = 'completed',
  text?: string,
): Promise<string> {
  const task = submitted(id, ms, text)
  await store.create(task, owner)
  void store.append(task, status(task, 1, 'working', false))
  await store.append(task, status(task, 2, state, true))
  return id
}

/** The ids each owner created; `unowned` those created without an owner. */
export interface OwnedTasks {
  alice: string[]
  bob: string[]
  unowned: string[]
}

const idsOf = (tasks: Task[]) => tasks.map((task) => task.id).sort()

/**
 * Each owner gets its own tasks from get and list (all, and by context), and another's (or an unowned one) as a
 * task that does not exist; a caller with no tasks gets none; a read without an owner (the runtime's own) gets all.
 */
export async function expectOwnTasks(store: TaskStore, tasks: OwnedTasks): Promise<void> {
  const all = [...tasks.alice, ...tasks.bob, ...tasks.unowned]
  for (const owner of ['alice', 'bob', 'carol'] as const) {
    const own = owner === 'carol' ? [] : tasks[owner]
    for (const id of all) {
      const task = await store.get(id, owner)
      expect(task?.id, `get(${id}, ${owner})`).toBe(own.includes(id) ? id : undefined)
    }
    const listed = await store.list({ owner, limit: 50 })
    expect({ ids: idsOf(listed.tasks), total: listed.total }, `list of ${owner}`).toEqual({
      ids: [...own].sort(),
      total: own.length,
    })
    const inContext = await store.list({ owner, contextId: CONTEXT, limit: 50 })
    expect(idsOf(inContext.tasks), `list of ${owner} by context`).toEqual([...own].sort())
  }
  for (const id of all) expect((await store.get(id))?.id, `get(${id}) without an owner`).toBe(id)
  expect(idsOf((await store.list({ limit: 50 })).tasks)).toEqual([...all].sort())
  expect(idsOf((await store.list({ contextId: CONTEXT, limit: 50 })).tasks)).toEqual([...all].sort())
}
