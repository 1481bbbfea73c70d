import { ConfigurationError } from './errors.js'
import { type Env, envValue, processEnv } from './settings.js'

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

/**
 * A logger on the console that drops messages below `level` (default: `A2A_LOG_LEVEL` in `env`, else `info`).
 * An error given as the detail is printed whole (stack, fields, causes) only at debug level; above it, it is a few
 * short lines (`errorLines`): an agent's SDK error can carry the whole request and response it failed on.
 */
export function createConsoleLogger(level?: LogLevel, env: Env = processEnv()): Logger {
  const min = LOG_RANK[level ?? logLevel(envValue(env, 'A2A_LOG_LEVEL'), 'A2A_LOG_LEVEL') ?? 'info'] ?? LOG_RANK.info
  const whole = min <= LOG_RANK.debug
  const print = (sink: (...args: unknown[]) => void, message: string, detail: unknown) => {
    if (detail === undefined) sink(`[a2a] ${message}`)
    else if (whole || !(detail instanceof Error)) sink(`[a2a] ${message}`, detail)
    else sink(errorLines(message, detail).join('\n'))
  }
  const write = (at: LogLevel, sink: (...args: unknown[]) => void) =>
    LOG_RANK[at] < min ? () => {} : (message: string, detail?: unknown) => print(sink, message, detail)
  return {
    debug: write('debug', console.debug),
    info: write('info', console.info),
    warn: write('warn', console.warn),
    error: write('error', console.error),
  }
}

/** Reads a level from a flag or variable; an unknown one is a ConfigurationError naming where it came from. */
export function logLevel(value: string | undefined, from: string): LogLevel | undefined {
  if (value === undefined || value === '') return undefined
  if (value in LOG_RANK) return value as LogLevel
  throw new ConfigurationError(
    `${from} must be one of ${Object.keys(LOG_RANK).join(', ')} (got ${JSON.stringify(value)})`,
  )
}

/** How long one message may be in a summary, and how many causes it follows. */
const MESSAGE_CHARS = 240
const MAX_CAUSES = 4

/**
 * An error as a few lines: the message with the error's name and message, then each cause's (its `cause`, or
 * `lastError` for the AI SDK's RetryError, which keeps its attempts there), each on one line and cut short, then
 * where the rest is.
 */
function errorLines(message: string, error: Error): string[] {
  const lines = [`[a2a] ${message}: ${oneLine(error)}`]
  const seen = new Set<unknown>([error])
  for (let next = causeOf(error); next !== undefined && !seen.has(next); next = causeOf(next)) {
    if (lines.length > MAX_CAUSES) {
      lines.push('[a2a]   caused by: …')
      break
    }
    seen.add(next)
    lines.push(`[a2a]   caused by: ${oneLine(next)}`)
  }
  lines.push("[a2a]   (the stack and the error's fields at debug level: A2A_LOG_LEVEL=debug or --log-level debug)")
  return lines
}

function causeOf(error: unknown): unknown {
  if (typeof error !== 'object' || error === null) return undefined
  const { cause, lastError } = error as { cause?: unknown; lastError?: unknown }
  return cause ?? lastError
}

/** `Name: message` on one line, at most MESSAGE_CHARS long; an AggregateError without one says its errors'. */
function oneLine(value: unknown): string {
  let text: string
  if (value instanceof Error) {
    const errors = (value as { errors?: unknown }).errors
    const inner =
      !value.message && Array.isArray(errors)
        ? errors.slice(0, 3).map((each) => (each instanceof Error ? each.message : String(each)))
        : []
    text = `${value.name}: ${value.message || inner.join('; ')}`
  } else {
    text = typeof value === 'string' ? value : safeString(value)
  }
  text = text.replace(/\s+/g, ' ').trim()
  return text.length <= MESSAGE_CHARS ? text : `${text.slice(0, MESSAGE_CHARS)}… (${text.length} characters)`
}

function safeString(value: unknown): string {
  try {
    return String(value)
  } catch {
    return typeof value
  }
}
