import { useState } from 'preact/hooks'
import { DIALECTS } from '../model'
import type { Timeline as TimelineData } from '../state'

const DIRECTION_LABEL = { request: 'request →', response: '← response', frame: '← SSE frame' } as const

/** Every event of a task as the page saw it, with time offsets; the raw request and frames on demand. */
export function Timeline({ timeline }: { timeline: TimelineData }) {
  const [raw, setRaw] = useState(false)
  const dialectLabel = DIALECTS.find((d) => d.id === timeline.dialect)?.label
  return (
    <div class="timeline">
      <div class="timeline-head">
        <span class="muted">
          Spoken in {dialectLabel}; {timeline.entries.length} events{timeline.dropped ? ` (the ${timeline.dropped} before them dropped)` : ''}
        </span>
        <label>
          <input type="checkbox" checked={raw} onChange={(event) => setRaw(event.currentTarget.checked)} /> Show raw JSON-RPC and SSE frames
        </label>
      </div>
      <ol aria-label="Timeline">
        {timeline.entries.map((entry, i) => (
          <li key={i} class="timeline-entry" data-direction={entry.direction}>
            <span class="offset">+{Math.round(entry.t)} ms</span>
            <span class="direction">{DIRECTION_LABEL[entry.direction]}</span>
            <div class="summary">
              {entry.summary.length ? (
                entry.summary.map((line, j) => <div key={j}>{line}</div>)
              ) : (
                <div class="muted">{entry.direction === 'request' ? 'sent' : '—'}</div>
              )}
              {raw && entry.raw && <pre class="raw">{entry.raw}</pre>}
            </div>
          </li>
        ))}
      </ol>
    </div>
  )
}
