import { causeLines, oneLine } from './_error-summary.js'
import { jsonLine, type RequestLine } from './_log-json.js'
import { ConfigurationError } from './errors.js'
import { type Env, envValue, processEnv } from './settings.js'
import type { TraceIds } from './telemetry/_hooks.js'
import { type LogRecords, logRecordsOf } from './telemetry/_logs.js'

/** Where the runtime reports what the client does not see: agent mistakes, internal errors, shutdown. */
export interface Logger {
  /** What helps find a problem: each request's line (`requestLogLevel`), an error's stack and fields. */
  debug(message: string, detail?: unknown): void
  /** What an operator wants to see: the server listening, shutting down. */
  info(message: string, detail?: unknown): void
  /** Something went wrong but the server carries on: an agent's mistake, a webhook that failed. */
  warn(message: string, detail?: unknown): void
  /** An unexpected error, which the client sees only as `Internal error`. */
  error(message: string, detail?: unknown): void
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

/** Order of the levels: a logger at one level drops everything ranked below it. */
export const LOG_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

/** How the console logger writes a line: `text` for people, `json` (one object per line) for log shippers. */
export type LogFormat = 'text' | 'json'

const LOG_FORMATS: readonly LogFormat[] = ['text', 'json']

/** Where a console logger learns the trace of the context it writes in (`correlateLogs`). */
interface TraceSource {
  currentTrace(): TraceIds | undefined
}

/** What the runtime keeps of each console logger it made: the request log and `correlateLogs` reach it here. */
interface ConsoleLogger {
  trace: TraceSource | undefined
  /** Where each line goes beside the console (OpenTelemetry log records), once `correlateLogs` knows. */
  records: LogRecords | undefined
  request(level: LogLevel, line: RequestLine): void
}

// Kept beside the loggers, not on them: an app given a logger of its own cannot tell one of these from its own.
const consoleLoggers = new WeakMap<Logger, ConsoleLogger>()

/**
 * A logger on the console that drops messages below `level` (default: `A2A_LOG_LEVEL` in `env`, else `info`), in
 * `format` (default: `A2A_LOG_FORMAT` in `env`, else `text`). An error given as the detail is printed whole (stack,
 * fields, causes) only at debug level; above it, it is a few short lines (`errorLines`): an agent's SDK error can
 * carry the whole request and response it failed on. Once an app's instrumentation is known (`correlateLogs`), a
 * line written while a trace is active names it.
 */
export function createConsoleLogger(level?: LogLevel, env: Env = processEnv(), format?: LogFormat): Logger {
  const min = LOG_RANK[level ?? logLevel(envValue(env, 'A2A_LOG_LEVEL'), 'A2A_LOG_LEVEL') ?? 'info'] ?? LOG_RANK.info
  const json = (format ?? logFormat(envValue(env, 'A2A_LOG_FORMAT'), 'A2A_LOG_FORMAT')) === 'json'
  const whole = min <= LOG_RANK.debug
  const state: ConsoleLogger = { trace: undefined, records: undefined, request: () => {} }
  const print = (at: LogLevel, message: string, detail: unknown, request?: RequestLine) => {
    const sink = SINKS[at as keyof typeof SINKS]
    // Asked only once an instrumentation is set: without telemetry a line costs what it always did.
    const trace = state.trace?.currentTrace()
    if (json) sink(jsonLine(at, message, detail, { trace, whole, request }))
    else if (detail === undefined) sink(`[a2a] ${message}${traceSuffix(trace)}`)
    else if (whole || !(detail instanceof Error)) sink(`[a2a] ${message}${traceSuffix(trace)}`, detail)
    else sink(errorLines(message, detail, traceSuffix(trace)).join('\n'))
    state.records?.emit(at as Exclude<LogLevel, 'silent'>, message, detail, { whole, request })
  }
  const write = (at: LogLevel) =>
    LOG_RANK[at] < min ? () => {} : (message: string, detail?: unknown) => print(at, message, detail)
  state.request = (at, line) => {
    if (LOG_RANK[at] >= min) print(at, requestText(line), undefined, line)
  }
  const logger: Logger = { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') }
  consoleLoggers.set(logger, state)
  return logger
}

/** Each level's console method, looked up when a line is written (tests and tools replace them). */
const SINKS = {
  debug: (...args: unknown[]) => console.debug(...args),
  info: (...args: unknown[]) => console.info(...args),
  warn: (...args: unknown[]) => console.warn(...args),
  error: (...args: unknown[]) => console.error(...args),
}

/**
 * From now on the lines of `logger` (when the runtime made it: a logger of the app's own is left as it is) carry
 * the trace `source` says is active where each is written: an operation's span while its method and the agent run;
 * and go to its log records too, when it has them (`logRecordsOf`).
 */
export function correlateLogs(logger: Logger, source: TraceSource): void {
  const state = consoleLoggers.get(logger)
  if (!state) return
  state.trace = source
  state.records = logRecordsOf(source)
}

/**
 * How the request log writes a line at `level`: a console logger the runtime made gets its fields (JSON shows them
 * apart), any other logger the line as text, as it always did.
 */
export function requestLogWriter(logger: Logger, level: Exclude<LogLevel, 'silent'>): (line: RequestLine) => void {
  const state = consoleLoggers.get(logger)
  if (state) return (line) => state.request(level, line)
  const write = logger[level].bind(logger)
  return (line) => write(requestText(line))
}

/** `POST / 200 3.1 ms`: the request line as text. */
const requestText = (line: RequestLine): string =>
  `${line.method} ${line.route} ${line.status} ${line.durationMs.toFixed(1)} ms`

/** The trace a text line names, at its end: the W3C ids in full, as a trace viewer's search takes them. */
const traceSuffix = (trace: TraceIds | undefined): string =>
  trace ? ` (trace_id=${trace.traceId} span_id=${trace.spanId})` : ''

/** Reads a level from a flag or variable; an unknown one is a ConfigurationError naming where it came from. */
export function logLevel(value: string | undefined, from: string): LogLevel | undefined {
  if (value === undefined || value === '') return undefined
  if (value in LOG_RANK) return value as LogLevel
  throw new ConfigurationError(
    `${from} must be one of ${Object.keys(LOG_RANK).join(', ')} (got ${JSON.stringify(value)})`,
  )
}

/** Reads a format from a flag or variable; an unknown one is a ConfigurationError naming where it came from. */
export function logFormat(value: string | undefined, from: string): LogFormat | undefined {
  if (value === undefined || value.trim() === '') return undefined
  if ((LOG_FORMATS as readonly string[]).includes(value.trim())) return value.trim() as LogFormat
  throw new ConfigurationError(`${from} must be one of ${LOG_FORMATS.join(', ')} (got ${JSON.stringify(value)})`)
}

/**
 * An error as a few lines: the message with the error's name and message, then each cause's (its `cause`, or
 * `lastError` for the AI SDK's RetryError, which keeps its attempts there), each on one line and cut short, then
 * where the rest is.
 */
function errorLines(message: string, error: Error, suffix: string): string[] {
  const lines = [
    `[a2a] ${message}: ${oneLine(error)}${suffix}`,
    ...causeLines(error).map((cause) => `[a2a]   caused by: ${cause}`),
  ]
  lines.push("[a2a]   (the stack and the error's fields at debug level: A2A_LOG_LEVEL=debug or --log-level debug)")
  return lines
}
