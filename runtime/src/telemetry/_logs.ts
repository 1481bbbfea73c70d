import type { RequestLine } from '../_log-json.js'

/**
 * Where the runtime's console logger sends each line it writes, beside the console: an instrumentation's log records
 * (`_logs-otel.ts`). Nothing here names OpenTelemetry, so the logger can reach it without loading it.
 */
export interface LogRecords {
  /** A line the logger wrote at `level`, in the async context it was written in. */
  emit(level: LineLevel, message: string, detail: unknown, line: LineShape): void
}

export type LineLevel = 'debug' | 'info' | 'warn' | 'error'

/** What the logger knows of a line beyond its message and detail. */
export interface LineShape {
  /** The logger prints whole errors (debug level): the stack goes in too. */
  whole: boolean
  /** The request log's line. */
  request?: RequestLine | undefined
}

// Kept beside the instrumentations, not on them: an instrumentation's interface stays free of the logger's concerns.
const logRecords = new WeakMap<object, LogRecords>()

/** From now on the lines of a logger correlated with `instrumentation` (`correlateLogs`) go to `records` too. */
export function sendLogRecords(instrumentation: object, records: LogRecords): void {
  logRecords.set(instrumentation, records)
}

/** Where the lines of a logger correlated with `instrumentation` go beside the console; undefined: nowhere. */
export const logRecordsOf = (instrumentation: object): LogRecords | undefined => logRecords.get(instrumentation)
