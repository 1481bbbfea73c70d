import { useEffect } from 'preact/hooks'
import { useStore } from '../store'
import { clock, sinceText, watchClock } from '../time'

/** A time as how long ago it was, kept current, with the exact ISO time as its title; "time not known" without one. */
export function Since({ iso }: { iso: string | undefined }) {
  useStore(clock)
  useEffect(watchClock, [])
  const at = iso === undefined ? Number.NaN : Date.parse(iso)
  if (Number.isNaN(at)) return <span class="since muted">time not known</span>
  const exact = new Date(at).toISOString()
  return (
    <time class="since" dateTime={exact} title={exact}>
      {sinceText(at, Date.now())}
    </time>
  )
}
