import { InvalidParamsError } from '../errors.js'
import type { Task } from '../types.js'
import type { TaskPage, TaskQuery } from './task-store.js'

/**
 * One page of the tasks that match the query, newest status first. The cursor is the position of the last
 * task shown (status time and id). A task that changes while a client pages moves to the front, onto a page
 * already read: read again from the start to see it.
 */
export function pageOf(tasks: Task[], query: TaskQuery): TaskPage {
  const matching = tasks.filter(
    (task) =>
      (query.contextId === undefined || task.contextId === query.contextId) &&
      (query.state === undefined || task.status.state === query.state) &&
      (query.updatedAfter === undefined || task.status.timestamp >= query.updatedAfter),
  )
  matching.sort(newestFirst)
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
  if (query.cursor !== undefined && !after)
    throw new InvalidParamsError('the page token is not one from a previous page')
  const start = after ? matching.findIndex((task) => newestFirst(task, after) > 0) : 0
  const from = start === -1 ? matching.length : start
  const page = matching.slice(from, from + query.limit)
  const last = page.at(-1)
  const more = from + query.limit < matching.length
  return { tasks: page, total: matching.length, ...(more && last && { nextCursor: encodeCursor(last) }) }
}

/**
 * Newest status first; ties by id, descending (as Redis orders a sorted set read in reverse), so the order is total.
 */
function newestFirst(a: Pick<Task, 'id' | 'status'>, b: Pick<Task, 'id' | 'status'>): number {
  if (a.status.timestamp !== b.status.timestamp) return a.status.timestamp < b.status.timestamp ? 1 : -1
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0
}

export function encodeCursor(task: Pick<Task, 'id' | 'status'>): string {
  return Buffer.from(`${task.status.timestamp}|${task.id}`).toString('base64url')
}

export function decodeCursor(cursor: string): Pick<Task, 'id' | 'status'> | undefined {
  const [timestamp, id] = Buffer.from(cursor, 'base64url').toString().split('|')
  return timestamp && id && !Number.isNaN(Date.parse(timestamp))
    ? { id, status: { state: 'completed', timestamp } }
    : undefined
}
