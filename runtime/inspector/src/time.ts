import { Store } from './store'

/** How often relative times ("3 minutes ago") are said again. */
const TICK_MS = 15_000

/** Ticks every `TICK_MS` while a view shows a relative time, which then says it again. */
export const clock = new Store<number>(0)
let ticking: ReturnType<typeof setInterval> | undefined
/** Views showing a relative time; the clock ticks only while there is one. */
let watchers = 0

/** For an effect of a view that shows a relative time: the clock ticks until the last such view goes. */
export function watchClock(): () => void {
  watchers++
  ticking ??= setInterval(() => clock.update((tick) => tick + 1), TICK_MS)
  return () => {
    if (--watchers > 0) return
    clearInterval(ticking)
    ticking = undefined
  }
}

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' })
const UNITS: ReadonlyArray<[Intl.RelativeTimeFormatUnit, number]> = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
]

/** "now", "12 seconds ago", "3 minutes ago"… A time a little ahead of `now` (another clock) is "now". */
export function sinceText(at: number, now: number): string {
  const ago = now - at
  if (ago < 1000) return relative.format(0, 'second')
  for (const [unit, ms] of UNITS)
    if (ago >= ms || unit === 'second') return relative.format(-Math.floor(ago / ms), unit)
  return relative.format(0, 'second')
}

/** An offset on a timeline: ms under 10 s, then seconds, then minutes (a replay may come long after). */
export function offsetText(ms: number): string {
  const sign = ms < 0 ? '−' : '+'
  const size = Math.abs(ms)
  if (size < 10_000) return `${sign}${Math.round(size)} ms`
  if (size < 600_000) return `${sign}${(size / 1000).toFixed(1)} s`
  return `${sign}${(size / 60_000).toFixed(1)} min`
}
