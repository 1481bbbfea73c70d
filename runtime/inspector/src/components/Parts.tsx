import type { Part } from '../model'
import { JsonTree } from './JsonTree'
import { Markdown } from './Markdown'

/** A message's or an artifact's parts: Markdown for text, a JSON tree for data, a download for files. */
export function Parts({ parts }: { parts: Part[] }) {
  return (
    <>
      {parts.map((part, i) => {
        if (part.kind === 'text') return <Markdown key={i} text={part.text} />
        if (part.kind === 'data') return <JsonTree key={i} value={part.data} />
        const name = part.name ?? 'file'
        const href = part.uri ?? `data:${part.mimeType ?? 'application/octet-stream'};base64,${part.bytes ?? ''}`
        return (
          <p key={i} class="file-part">
            <a href={href} download={part.uri ? undefined : name} rel="noreferrer">
              Download {name}
            </a>
            {part.mimeType && <span class="muted"> ({part.mimeType})</span>}
          </p>
        )
      })}
    </>
  )
}
