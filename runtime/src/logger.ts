import { ConfigurationError } from './errors.js'
import { type Env, envValue, processEnv } from './settings.js'

/** Where the runtime reports what the client does not see: agent mistakes, internal errors, shutdown. */
export interface Logger {
  debug(message: string, detail?: unknown): void
  info(message: string, detail?: unknown): void
  warn(message: string, detail?: unknown): void
  error(message: string, detail?: unknown): void
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

/** Order of the levels: a logger at one level drops everything ranked below it. */
export const LOG_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

/** A logger on the console that drops messages below `level` (default: `A2A_LOG_LEVEL` in `env`, else `info`). */
export function createConsoleLogger(level?: LogLevel, env: Env = processEnv()): Logger {
  const min = LOG_RANK[level ?? logLevel(envValue(env, 'A2A_LOG_LEVEL'), 'A2A_LOG_LEVEL') ?? 'info'] ?? LOG_RANK.info
  const write = (at: LogLevel, sink: (...args: unknown[]) => void) =>
    LOG_RANK[at] < min ? () => {} : (message: string, detail?: unknown) => (detail === undefined ? sink(`[a2a] ${message}`) : sink(`[a2a] ${message}`, detail))
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
  throw new ConfigurationError(`${from} must be one of ${Object.keys(LOG_RANK).join(', ')} (got ${JSON.stringify(value)})`)
}
