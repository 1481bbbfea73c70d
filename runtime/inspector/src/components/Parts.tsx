import { useEffect, useMemo } from 'preact/hooks'
import type { Part } from '../model'
import { JsonTree } from './JsonTree'
import { Markdown, SAFE_URL } from './Markdown'

type FilePart = Extract<Part, { kind: 'file' }>

/** The file's bytes as a download: a Blob of no particular type, so the agent's media type cannot rewrite the URL. */
function Download({ part }: { part: FilePart }) {
  const name = part.name ?? 'file'
  const href = useMemo(() => {
    try {
      return URL.createObjectURL(
        new Blob([Uint8Array.from(atob(part.bytes ?? ''), (c) => c.charCodeAt(0))], {
          type: 'application/octet-stream',
        }),
      )
    } catch {
      return undefined // not base64: nothing to download
    }
  }, [part.bytes])
  useEffect(() => () => href && URL.revokeObjectURL(href), [href])
  if (!href) return <span class="error">{name}: the bytes are not base64</span>
  return (
    <a href={href} download={name}>
      Download {name}
    </a>
  )
}

/** A file by reference: a link beside the inspector when it is http(s), else its address as text. */
function FileLink({ part }: { part: FilePart }) {
  const name = part.name ?? part.uri!
  if (!SAFE_URL.test(part.uri!)) return <span>{`${name}: ${part.uri}`}</span>
  return (
    <a href={part.uri} target="_blank" rel="noopener noreferrer">
      Open {name}
    </a>
  )
}

/** A message's or an artifact's parts: Markdown for text, a JSON tree for data, a download for files. */
export function Parts({ parts }: { parts: Part[] }) {
  return (
    <>
      {parts.map((part, i) => {
        if (part.kind === 'text') return <Markdown key={i} text={part.text} />
        if (part.kind === 'data') return <JsonTree key={i} value={part.data} />
        return (
          <p key={i} class="file-part">
            {part.uri !== undefined ? <FileLink part={part} /> : <Download part={part} />}
            {part.mimeType && <span class="muted"> ({part.mimeType})</span>}
          </p>
        )
      })}
    </>
  )
}
