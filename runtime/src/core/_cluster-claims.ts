import type { ClusterLink, TaskStore } from '../stores/task-store.js'
import { isInterrupted } from './_lifecycle.js'

/** Longest a follow-up waits for another instance's agent to return from the turn that asked for it. */
const FOLLOW_UP_WAIT_MS = 30_000

/**
 * Takes the lease of a task for its follow-up. When another instance holds it and the task already waits for
 * input, that instance's agent is returning from the turn: the follow-up waits for its lease, as it waits for a
 * local run (bounded: an instance that died holding it loses it after its lease time).
 */
export async function claimForFollowUp(
  cluster: ClusterLink,
  store: TaskStore,
  taskId: string,
  closing: () => boolean,
): Promise<boolean> {
  if (await cluster.claim(taskId)) return true
  const task = await store.get(taskId)
  if (!task || !isInterrupted(task.status.state)) return false
  const deadline = Date.now() + FOLLOW_UP_WAIT_MS
  for (let delay = 10; Date.now() < deadline && !closing(); delay = Math.min(delay * 2, 250)) {
    await new Promise((resolve) => setTimeout(resolve, delay))
    if (await cluster.claim(taskId)) return true
  }
  return false
}
