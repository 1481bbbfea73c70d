import type { Message, Task, TaskEvent } from '../../types.js'
import { foldEntries } from '../_fold.js'

/** The task as its `json` column holds it: its history is kept apart, one row per message. */
export function withoutHistory(task: Task): string {
  return JSON.stringify({ ...task, history: [] })
}

/** The task without history nor artifacts (the `head` column): what a listing that asks for neither reads. */
export function headOf(task: Task): string {
  return JSON.stringify({ ...task, artifacts: [], history: [] })
}

/** The task from its json and the events written after it, with its history (the messages, oldest first). */
export function folded(json: string, events: string[], history: string[]): Task {
  const task = JSON.parse(json) as Task
  // The agent's questions are in `history` already: the events move the rest.
  foldEntries(
    task,
    events.map((event) => ({ event: JSON.parse(event) as TaskEvent })),
  )
  task.history = parsedMessages(history)
  return task
}

export const parsedMessages = (messages: string[]): Message[] => messages.map((json) => JSON.parse(json) as Message)
