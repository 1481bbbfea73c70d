import { useState } from 'preact/hooks'
import { DIALECTS } from '../model'
import type { TaskTrace, Timeline as TimelineData } from '../state'
import { offsetText } from '../time'
import { traceOf } from '../traces'
import { TraceRef } from './Traces'

const DIRECTION_LABEL = { request: 'request →', response: '← response', frame: '← SSE frame' } as const

/**
 * Where a timeline's offsets count from: its own origin, else (a replay of a task the dev server forgot) its
 * earliest event with a known time.
 */
function originOf(timeline: TimelineData): number | undefined {
  if (timeline.t0 !== undefined) return timeline.t0
  let earliest: number | undefined
  for (const entry of timeline.entries) {
    if (entry.direction === 'frame' && entry.at !== undefined && (earliest === undefined || entry.at < earliest))
      earliest = entry.at
  }
  return earliest ?? timeline.entries.find((entry) => entry.at !== undefined)?.at
}

const originText = (timeline: TimelineData) =>
  !timeline.replayed
    ? 'offsets from the first request'
    : timeline.t0 !== undefined
      ? "offsets from the task's creation"
      : 'offsets from its first event with a known time'

/**
 * Every event of a task as the page saw it, each at the time it happened and, with telemetry, in the trace that
 * made it (`traces`, as the dev server reports them); the raw request and frames on demand.
 */
export function Timeline({ timeline, traces }: { timeline: TimelineData; traces?: TaskTrace[] | undefined }) {
  const [raw, setRaw] = useState(false)
  const dialectLabel = DIALECTS.find((d) => d.id === timeline.dialect)?.label
  const origin = originOf(timeline)
  return (
    <div class="timeline">
      <div class="timeline-head">
        <span class="muted">
          Spoken in {dialectLabel}; {timeline.entries.length} events
          {timeline.dropped ? ` (the ${timeline.dropped} before them dropped)` : ''}; {originText(timeline)}
        </span>
        <label>
          <input type="checkbox" checked={raw} onChange={(event) => setRaw(event.currentTarget.checked)} /> Show raw{' '}
          {timeline.dialect === 'a2a-1.0-rest' ? 'HTTP requests' : 'JSON-RPC'} and SSE frames
        </label>
      </div>
      <ol aria-label="Timeline">
        {timeline.entries.map((entry, i) => {
          const traceId = traceOf(entry, traces)
          return (
            <li key={i} class="timeline-entry" data-direction={entry.direction}>
              {entry.at === undefined || origin === undefined ? (
                <span class="offset unknown">time not known</span>
              ) : (
                <time
                  class="offset"
                  dateTime={new Date(entry.at).toISOString()}
                  title={new Date(entry.at).toISOString()}
                >
                  {offsetText(entry.at - origin)}
                </time>
              )}
              <span class="direction">{DIRECTION_LABEL[entry.direction]}</span>
              <div class="summary">
                {entry.summary.length ? (
                  entry.summary.map((line, j) => <div key={j}>{line}</div>)
                ) : (
                  <div class="muted">
                    {entry.direction !== 'request'
                      ? '—'
                      : timeline.replayed
                        ? 'sent now, for the events the agent keeps'
                        : 'sent'}
                  </div>
                )}
                {traceId && <TraceRef traceId={traceId} />}
                {raw && entry.raw && <pre class="raw">{entry.raw}</pre>}
              </div>
            </li>
          )
        })}
      </ol>
    </div>
  )
}
