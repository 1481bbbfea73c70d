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
 * has (`lineFields`), then `trace_id`, `span_id`, `trace_flags` (OpenTelemetry's names for the trace in a log that
 * is not OTLP).
 */
export function jsonLine(level: string, message: string, detail: unknown, context: LineContext): string {
  const record: Record<string, unknown> = {
    timestamp: new Date().toISOString(),
    level,
    message,
    ...lineFields(message, detail, context),
  }
  const { trace } = context
  if (trace) {
    record.trace_id = trace.traceId
    record.span_id = trace.spanId
    record.trace_flags = trace.flags.toString(16).padStart(2, '0')
  }
  return jsonText(record)
}

/**
 * What a line says beyond its time, level, message and trace: `method`, `route`, `status`, `duration_ms` (the
 * request log), `task_id` (a task the message names), `error_name`, `error_message`, `error_causes` (each cut short
 * as the text log cuts them; `error_stack` at debug level), or `detail` (what an agent's own line gave, as it is when
 * JSON holds it in 2,000 characters, else cut text). Nothing else of an error: its fields may hold the request it
 * failed on. The JSON line writes these; the OpenTelemetry log record carries them as attributes.
 */
export function lineFields(
  message: string,
  detail: unknown,
  context: Omit<LineContext, 'trace'>,
): Record<string, unknown> {
  const fields: Record<string, unknown> = {}
  const { request } = context
  if (request) {
    fields.method = request.method
    fields.route = request.route
    fields.status = request.status
    fields.duration_ms = Math.round(request.durationMs * 10) / 10
  }
  const taskId = TASK_NAMED.exec(message)?.[1]
  if (taskId) fields.task_id = taskId
  if (detail instanceof Error) {
    fields.error_name = detail.name
    fields.error_message = shortened(detail.message)
    const causes = causeLines(detail)
    if (causes.length) fields.error_causes = causes
    if (context.whole && typeof detail.stack === 'string') fields.error_stack = detail.stack
  } else if (detail !== undefined) {
    fields.detail = detailValue(detail)
  }
  return fields
}

/**
 * The task a message names: the runtime's lines say `task <id>` and its ids are UUIDs it made, so a UUID after the
 * word is a task's id (and nothing a client chose).
 */
const TASK_NAMED = /\btask ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/i

/** A detail as it is when JSON holds it in DETAIL_CHARS; else (a cycle, too long) as cut text. */
function detailValue(detail: unknown): unknown {
  try {
    const json = JSON.stringify(detail, bigints)
    if (json !== undefined && json.length <= DETAIL_CHARS) return detail
    return shortened(json ?? String(detail))
  } catch {
    return shortened(Object.prototype.toString.call(detail))
  }
}

/** JSON of a line's record or detail: a BigInt as its digits (JSON has no such number; a count of tokens may be one). */
export const jsonText = (value: unknown): string => JSON.stringify(value, bigints)

const bigints = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value)
