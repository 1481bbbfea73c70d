/**
 * An error told in a few short lines, for logs: an agent's SDK error can carry the whole request and response it failed
 * on, and a log line above debug level gets only its name, message and causes, each on one line and cut short.
 */

/** How long one message may be in a summary, and how many causes it follows. */
const MESSAGE_CHARS = 240
const MAX_CAUSES = 4

/** Each cause of `error` on one line (`oneLine`), at most MAX_CAUSES, then `…` when there are more. */
export function causeLines(error: Error): string[] {
  const causes: string[] = []
  const seen = new Set<unknown>([error])
  for (let next = causeOf(error); next !== undefined && !seen.has(next); next = causeOf(next)) {
    if (causes.length === MAX_CAUSES) {
      causes.push('…')
      break
    }
    seen.add(next)
    causes.push(oneLine(next))
  }
  return causes
}

function causeOf(error: unknown): unknown {
  if (typeof error !== 'object' || error === null) return undefined
  const { cause, lastError } = error as { cause?: unknown; lastError?: unknown }
  return cause ?? lastError
}

/** `Name: message` on one line, at most MESSAGE_CHARS long; an AggregateError without one says its errors'. */
export function oneLine(value: unknown): string {
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
  return shortened(text)
}

/** `text` on one line, at most MESSAGE_CHARS long, saying how long it was when cut. */
export function shortened(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length <= MESSAGE_CHARS ? line : `${line.slice(0, MESSAGE_CHARS)}… (${line.length} characters)`
}

function safeString(value: unknown): string {
  try {
    return String(value)
  } catch {
    return typeof value
  }
}
