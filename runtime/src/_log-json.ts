import { causeLines, shortened } from './_error-summary.js'
import type { TraceIds } from './telemetry/_hooks.js'

/** What the request log says of one request once it is answered. */
export interface RequestLine {
  method: string
  /** The route, never the target as sent (`logPath`). */
  route: string
  status: number
  durationMs: number
}

/** What a line knows beyond its level, message and detail. */
interface LineContext {
  /** The trace active where the line is written. */
  trace: TraceIds | undefined
  /** The logger prints whole errors (debug level): the stack goes in too. */
  whole: boolean
  /** The request log's line: its fields go in apart. */
  request?: RequestLine | undefined
}

/** How long the JSON of a detail that is not an error may be before it is given as cut text. */
const DETAIL_CHARS = 2000

/**
 * A log line as one JSON object, for log shippers: `timestamp` (ISO), `level`, `message`, then the fields the line
 * has: `method`, `route`, `status`, `duration_ms` (the request log), `task_id` (a task the message names),
 * `trace_id`, `span_id`, `trace_flags` (OpenTelemetry's names for the trace in a log that is not OTLP),
 * `error_name`, `error_message`, `error_causes` (each cut short as the text log cuts them; `error_stack` at debug
 * level), or `detail` (what an agent's own line gave, as JSON when it can be, cut short). Nothing else of an error:
 * its fields may hold the request it failed on.
 */
export function jsonLine(level: string, message: string, detail: unknown, context: LineContext): string {
  const record: Record<string, unknown> = { timestamp: new Date().toISOString(), level, message }
  const { request, trace } = context
  if (request) {
    record.method = request.method
    record.route = request.route
    record.status = request.status
    record.duration_ms = Math.round(request.durationMs * 10) / 10
  }
  const taskId = TASK_NAMED.exec(message)?.[1]
  if (taskId) record.task_id = taskId
  if (trace) {
    record.trace_id = trace.traceId
    record.span_id = trace.spanId
    record.trace_flags = trace.flags.toString(16).padStart(2, '0')
  }
  if (detail instanceof Error) {
    record.error_name = detail.name
    record.error_message = shortened(detail.message)
    const causes = causeLines(detail)
    if (causes.length) record.error_causes = causes
    if (context.whole && typeof detail.stack === 'string') record.error_stack = detail.stack
  } else if (detail !== undefined) {
    record.detail = detail
  }
  return stringified(record)
}

/**
 * The task a message names: the runtime's lines say `task <id>` and its ids are UUIDs it made, so a UUID after the
 * word is a task's id (and nothing a client chose).
 */
const TASK_NAMED = /\btask ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/i

/** The record's JSON; a detail that will not serialise (a cycle) or is too long is given as cut text. */
function stringified(record: Record<string, unknown>): string {
  if (!('detail' in record)) return JSON.stringify(record)
  try {
    const json = JSON.stringify(record.detail, bigints)
    if (json !== undefined && json.length <= DETAIL_CHARS) return JSON.stringify(record, bigints)
    record.detail = shortened(json ?? String(record.detail))
  } catch {
    record.detail = shortened(Object.prototype.toString.call(record.detail))
  }
  return JSON.stringify(record)
}

/** A BigInt as its digits: JSON has no such number, and a count of tokens may be one. */
const bigints = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value)
