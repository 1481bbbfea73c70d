import type { ClusterLink, TaskStore } from '../stores/task-store.js'
import { isInterrupted, isSettled } from './_lifecycle.js'

/** Longest a follow-up waits for another instance's agent to return from the turn that asked for it. */
const FOLLOW_UP_WAIT_MS = 30_000
/**
 * Longest a follow-up waits for the shared store to show the question another instance already streamed: that
 * instance streams each event as it hands it to the store, so its client can answer before the write lands.
 */
const QUESTION_LAG_MS = 3_000

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
  let task = await store.get(taskId)
  // Still working as the store has it: the question may be on its way there (bounded; a task that truly works on
  // is refused after it, as before).
  const lagDeadline = Date.now() + QUESTION_LAG_MS
  for (let delay = 10; task && !isSettled(task.status.state) && Date.now() < lagDeadline && !closing(); ) {
    await new Promise((resolve) => setTimeout(resolve, delay))
    delay = Math.min(delay * 2, 250)
    if (await cluster.claim(taskId)) return true
    task = await store.get(taskId)
  }
  if (!task || !isInterrupted(task.status.state)) return false
  const deadline = Date.now() + FOLLOW_UP_WAIT_MS
  for (let delay = 10; Date.now() < deadline && !closing(); delay = Math.min(delay * 2, 250)) {
    await new Promise((resolve) => setTimeout(resolve, delay))
    if (await cluster.claim(taskId)) return true
  }
  return false
}
