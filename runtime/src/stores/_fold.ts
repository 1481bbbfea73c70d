import { appendParts, flattenArtifactTexts } from '../_artifact-append.js'
import type { Message, Task, TaskEvent } from '../types.js'

/**
 * Rebuilding a task from an older copy and what was added to it since, as the run that added it changed it
 * (`core/_task-run.ts`): how a store that appends events and messages instead of rewriting the whole task
 * (the file store's log, Redis's stream) reads the task back. The store contract suite checks that a task
 * read back equals the one the run holds, for every kind of event.
 */

/** One thing added to a task: an event of its log, or a message that joined its history (a follow-up). */
export type TaskEntry = { event: TaskEvent } | { message: Message }

/** Applies `entries`, in order, to `task` (changed in place). */
export function foldEntries(task: Task, entries: Iterable<TaskEntry>): Task {
  for (const entry of entries) {
    if ('event' in entry) applyEvent(task, entry.event)
    else task.history.push(entry.message)
  }
  flattenArtifactTexts(task)
  return task
}

/** Applies one event to the task, as the run that emitted it did. */
export function applyEvent(task: Task, event: TaskEvent): void {
  if (event.kind === 'status-update') {
    const { status } = event
    task.status = status
    // A question to the user joins the conversation too: the same message, in the history and the status.
    if (status.message && (status.state === 'input-required' || status.state === 'auth-required'))
      task.history.push(status.message)
    return
  }
  const chunk = event.artifact
  const index = task.artifacts.findIndex((artifact) => artifact.artifactId === chunk.artifactId)
  const existing = index === -1 ? undefined : task.artifacts[index]
  if (event.append && existing) {
    appendParts(existing, chunk.parts)
    existing.lastChunk = chunk.lastChunk
    return
  }
  // The task's copy grows with later chunks; the event's stays as it was.
  const stored = { ...chunk, parts: chunk.parts.slice() }
  if (existing) task.artifacts[index] = stored
  else task.artifacts.push(stored)
}
