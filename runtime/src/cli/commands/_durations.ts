import { UsageError } from '../output/_failures.js'

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/**
 * A duration as the flags take it, in milliseconds: `500ms`, `2s`, `1.5m`, `1h`, or a bare number of seconds.
 * Thrown as a usage error naming the flag when it is not one.
 */
export function parseDuration(text: string, flag: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(text)
  if (!match) throw new UsageError(`${flag}: '${text}' is not a duration (e.g. 500ms, 2s, 5m)`)
  const ms = Number(match[1]) * UNITS[match[2] ?? 's']!
  if (!(ms > 0) || ms > 2 ** 31 - 1) throw new UsageError(`${flag}: '${text}' is out of range`)
  return ms
}
