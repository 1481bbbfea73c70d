import type { Artifact, JsonValue, Message, Part } from '../../client/types.js'
import { printableLine } from './_sanitize.js'
import type { TextWriter } from './_text-writer.js'

/**
 * Parts in a block's content, none ever dropped: text as text, data as indented JSON, a file by name, media type
 * and size (or its URL), anything else as its JSON. `verbose` heads each part with its kind, media type and metadata.
 * Text parts follow each other without a separator when `joinText` (the chunks of one streamed text).
 */
export function appendParts(
  writer: TextWriter,
  given: readonly Part[] | undefined,
  verbose: boolean,
  joinText = false,
): void {
  // ProtoJSON leaves an empty list out: no parts is an empty list.
  const parts = given ?? []
  parts.forEach((part, index) => {
    const kind = kindOf(part)
    if (verbose) {
      writer.endLine()
      writer.append(`Part: ${kind} (${part.mediaType ?? 'no media type'})\n`)
      if (part.metadata !== undefined) writer.append(`Metadata: ${JSON.stringify(part.metadata)}\n`)
    } else if (index > 0 && !(joinText && kind === 'text' && kindOf(parts[index - 1]!) === 'text')) writer.endLine()
    writer.append(contentOf(part, kind))
  })
}

/** An artifact's block label value: its name and id, or its id. */
export function artifactTitle(artifact: Pick<Artifact, 'artifactId' | 'name'>): string {
  return artifact.name ? `${artifact.name} (${artifact.artifactId})` : artifact.artifactId
}

/** A message's block: `Message:` for the agent's words, `History: user|agent` for a task's past turns. */
export function roleOf(message: Message): string {
  if (message.role === 'ROLE_USER') return 'user'
  if (message.role === 'ROLE_AGENT') return 'agent'
  return String(message.role ?? 'unspecified')
}

type PartKind = 'text' | 'data' | 'file' | 'url' | 'unknown'

function kindOf(part: Part): PartKind {
  if (typeof part.text === 'string') return 'text'
  if (part.data !== undefined) return 'data'
  if (typeof part.raw === 'string') return 'file'
  if (typeof part.url === 'string') return 'url'
  return 'unknown'
}

function contentOf(part: Part, kind: PartKind): string {
  switch (kind) {
    case 'text':
      return part.text!
    case 'data':
      return JSON.stringify(part.data, null, 2)
    case 'file':
      return printableLine(
        `File: ${part.filename || '(unnamed)'} (${part.mediaType || 'no media type'}, ${base64Bytes(part.raw!)} bytes)`,
      )
    case 'url':
      return printableLine(
        part.filename
          ? `File: ${part.filename} (${part.mediaType || 'no media type'}, ${part.url})`
          : `File: ${part.url} (${part.mediaType || 'no media type'})`,
      )
    default:
      return JSON.stringify(part as unknown as JsonValue)
  }
}

/** The size of what base64 (standard or URL-safe, padded or not) holds, without decoding it. */
function base64Bytes(raw: string): number {
  const digits = raw.replace(/[\s=]/g, '').length
  return Math.floor((digits * 3) / 4)
}
