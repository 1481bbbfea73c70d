import { useEffect, useState } from 'preact/hooks'
import { type TaskTrace, tracing } from '../state'
import { useStore } from '../store'
import { distinctTraces, traceHref } from '../traces'

/** How long "Copied" stays on the button. */
const COPIED_MS = 1500

/** Only a viewer on the web is linked: the dev server checks the template, the page does again. */
const linkable = (template: string | undefined): template is string => !!template && /^https?:\/\//i.test(template)

/**
 * A trace on a timeline entry: its first 8 hex digits (the whole id as the title), linked to the trace viewer
 * when `A2A_TRACE_URL` names one.
 */
export function TraceRef({ traceId }: { traceId: string }) {
  const url = useStore(tracing)?.url
  const text = `trace ${traceId.slice(0, 8)}`
  return linkable(url) ? (
    <a
      class="trace-ref"
      href={traceHref(url, traceId)}
      target="_blank"
      rel="noopener noreferrer"
      title={`Trace ${traceId} in the trace viewer`}
    >
      {text}
    </a>
  ) : (
    <code class="trace-ref" title={`Trace ${traceId}`}>
      {text}
    </code>
  )
}

/**
 * Puts `text` on the clipboard; says how it went on the button for a moment. A page that is no secure context (a
 * listed host name over http:) has no clipboard: it says "Not copied", and the id beside it can be selected.
 */
function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState<boolean | undefined>()
  useEffect(() => {
    if (copied === undefined) return
    const timer = setTimeout(() => setCopied(undefined), COPIED_MS)
    return () => clearTimeout(timer)
  }, [copied])
  const copy = () => {
    if (!navigator.clipboard) return setCopied(false)
    navigator.clipboard.writeText(text).then(
      () => setCopied(true),
      () => setCopied(false),
    )
  }
  return (
    <button type="button" class="copy" aria-label={label} onClick={copy}>
      {copied === undefined ? 'Copy' : copied ? 'Copied' : 'Not copied'}
    </button>
  )
}

/**
 * The traces a task's events were made in (its first turn's, then a follow-up's or a cancel's), each id whole,
 * copyable, and linked to the trace viewer when one is set. Nothing when the dev server reports none.
 */
export function TaskTraces({ traces }: { traces: TaskTrace[] | undefined }) {
  const url = useStore(tracing)?.url
  const list = distinctTraces(traces)
  if (!list.length) return null
  return (
    <div class="task-traces">
      <h3>{list.length === 1 ? 'Trace' : 'Traces'}</h3>
      <ul aria-label="Traces of the task">
        {list.map(({ traceId, firstSeq }) => (
          <li key={traceId}>
            <code class="trace-id">{traceId}</code>
            <CopyButton text={traceId} label={`Copy trace id ${traceId}`} />
            {linkable(url) && (
              <a href={traceHref(url, traceId)} target="_blank" rel="noopener noreferrer">
                Open in the trace viewer
              </a>
            )}
            <span class="muted">{firstSeq === 0 ? 'from its creation' : `from event ${firstSeq}`}</span>
          </li>
        ))}
      </ul>
    </div>
  )
}
