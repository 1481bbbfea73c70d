import type { TaskQuery } from '../task-store.js'

/**
 * What ListTasks shows of each task (its `historyLength` and `includeArtifacts`), given with the query: the store
 * then reads only that. Without them (or with `includeArtifacts` true and no `historyLength`) a listing answers
 * whole tasks.
 */
export interface ListView {
  /** The newest messages of the history kept; 0 none. Default: all. */
  historyLength?: number
  /** Default `true`. */
  includeArtifacts?: boolean
}

/** The view a listing asks for, or `undefined` for whole tasks. */
export function viewOf(query: ListView): Required<ListView> | undefined {
  const { historyLength, includeArtifacts } = query
  const cut = historyLength !== undefined && Number.isInteger(historyLength) && historyLength >= 0
  if (!cut && includeArtifacts !== false) return undefined
  return { historyLength: cut ? historyLength : Number.POSITIVE_INFINITY, includeArtifacts: includeArtifacts !== false }
}

/** Where a page starts: after the task at this status time (ms) and id. */
export interface PageStart {
  ms: number
  id: string
}

/** A row of a page: the task's columns as the view reads them, and the page's `total` (on every row). */
export interface PageRow {
  total: number
  id: string | null
  status_ms: string
  json: string | null
  head: string | null
  events: string[] | null
  history: string[] | null
}

/**
 * One statement for one page and its total, a round trip: the count of the matches (kept by a trigger for the
 * filters without a context and time; counted otherwise) beside at most `limit + 1` rows
 * (one more tells there is a next page), read newest status first along the index the filters pick (their columns
 * lead it, then status time and id, as the cursor is), so a page costs its rows, not the tasks. With `owner` the
 * owner's own indexes; the owner is compared in the statement, before any row of a task is read.
 */
export function pageStatement(
  s: string,
  query: TaskQuery,
  start: PageStart | undefined,
  view: Required<ListView> | undefined,
): { text: string; values: unknown[] } {
  const values: unknown[] = []
  const param = (value: unknown) => {
    values.push(value)
    return `$${values.length}`
  }
  const filters: string[] = []
  if (query.owner !== undefined) filters.push(`t.owner = ${param(query.owner)}`)
  if (query.contextId !== undefined) filters.push(`t.context_id = ${param(query.contextId)}`)
  if (query.state !== undefined) filters.push(`t.state = ${param(query.state)}`)
  if (query.updatedAfter !== undefined) filters.push(`t.status_ms >= ${param(Date.parse(query.updatedAfter))}`)
  const where = filters.length ? `WHERE ${filters.join(' AND ')}` : ''
  const after = start ? `(t.status_ms, t.id) < (${param(start.ms)}, ${param(start.id)})` : ''
  const pageWhere = [...filters, ...(after ? [after] : [])]
  const events = `ARRAY(SELECT e.event FROM ${s}.a2a_events e WHERE e.task_id = t.id AND e.seq > t.folded_seq
    ORDER BY e.seq) AS events`
  const newest =
    view && view.historyLength !== Number.POSITIVE_INFINITY
      ? ` AND h.n >= t.history_count - ${param(view.historyLength)}`
      : ''
  const history = `ARRAY(SELECT h.message FROM ${s}.a2a_history h WHERE h.task_id = t.id${newest} ORDER BY h.n) AS history`
  const columns = !view
    ? `t.json, NULL::text AS head, ${events}, ${history}`
    : view.includeArtifacts
      ? `t.json, NULL::text AS head, ${events}, ${history}`
      : `NULL::text AS json, t.head, NULL::text[] AS events, ${history}`
  const limit = param(query.limit + 1)
  // The counts a trigger keeps (see a2a_count), when the filters are theirs; else the matches counted.
  const counted =
    query.contextId === undefined && query.updatedAfter === undefined
      ? `SELECT coalesce(sum(n), 0)::integer AS total FROM ${s}.a2a_counts WHERE key = ${param(countKey(query))}`
      : `SELECT count(*)::integer AS total FROM ${s}.a2a_tasks t ${where}`
  return {
    text: `SELECT c.total, p.* FROM (${counted}) c
LEFT JOIN LATERAL (
  SELECT t.id, t.status_ms, ${columns} FROM ${s}.a2a_tasks t
  ${pageWhere.length ? `WHERE ${pageWhere.join(' AND ')}` : ''}
  ORDER BY t.status_ms DESC, t.id DESC LIMIT ${limit}
) p ON true
ORDER BY p.status_ms DESC, p.id DESC`,
    values,
  }
}

/** The key of a2a_counts that counts the tasks of `query` (its owner and state; see a2a_count). */
function countKey({ owner, state }: TaskQuery): string {
  if (owner === undefined) return state === undefined ? '' : `s:${state}`
  return state === undefined ? `o:${owner}` : `os:${state}:${owner}`
}
