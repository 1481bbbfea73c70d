import type { Logger } from 'a2a-runtime'

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error'
  message: string
  detail?: unknown
}

export interface CapturedLogger extends Logger {
  lines: LogLine[]
  /** Every line at `level`, as text with its detail's message. */
  text(level: LogLine['level']): string
}

/** A logger that keeps what the runtime says, so tests can check warnings and hidden error details. */
export function captureLogger(): CapturedLogger {
  const lines: LogLine[] = []
  const at = (level: LogLine['level']) => (message: string, detail?: unknown) => {
    lines.push({ level, message, detail })
  }
  return {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    text(level) {
      return lines
        .filter((line) => line.level === level)
        .map((line) => `${line.message}${line.detail instanceof Error ? ` ${line.detail.message}` : ''}`)
        .join('\n')
    },
  }
}
