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

/**
 * Never raw in a text JSON.stringify made: it writes every control character as an escape (`\u001e`). JSON texts
 * joined by it go to PostgreSQL as one parameter, split back by the statement (`string_to_array`), rather than as a
 * text[]: node-postgres would escape each element (two replaces of each text, a copy each: a fifth of what a send
 * allocated) and PostgreSQL parse the escapes back.
 */
const JOIN_SEPARATOR = '\x1e'

/** `texts` (each from JSON.stringify) as one parameter: see JOIN_SEPARATOR. */
export const joinedJson = (texts: string[]): string => texts.join(JOIN_SEPARATOR)
