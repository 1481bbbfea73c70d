import type { Message } from '../types.js'

/** A file a message carries: inline bytes (base64) or a link. */
export interface TurnFile {
  data: string | URL
  mediaType: string
  filename?: string
}

/** A message as the frameworks take it: who spoke, the text, the files. */
export interface TurnMessage {
  role: 'user' | 'assistant'
  text: string
  files: TurnFile[]
}

/**
 * A2A messages in the frameworks' common shape: text parts joined by new lines, data parts as JSON in the text
 * (every model reads text; few read structured input), files kept as files. A file without bytes or a usable link
 * is named in the text instead, so the model knows it was there.
 */
export function toTurnMessages(messages: readonly Message[]): TurnMessage[] {
  const turns: TurnMessage[] = []
  for (const message of messages) {
    const texts: string[] = []
    const files: TurnFile[] = []
    for (const part of message.parts) {
      if (part.kind === 'text') texts.push(part.text)
      else if (part.kind === 'data') texts.push(JSON.stringify(part.data))
      else {
        const { bytes, uri, name, mimeType } = part.file
        const mediaType = mimeType ?? 'application/octet-stream'
        const link = uri === undefined ? undefined : urlOf(uri)
        if (bytes !== undefined) files.push({ data: bytes, mediaType, ...(name !== undefined && { filename: name }) })
        else if (link) files.push({ data: link, mediaType, ...(name !== undefined && { filename: name }) })
        else texts.push(`[file${name ? ` ${name}` : ''}]`)
      }
    }
    turns.push({ role: message.role === 'user' ? 'user' : 'assistant', text: texts.join('\n'), files })
  }
  return turns
}

function urlOf(uri: string): URL | undefined {
  try {
    const url = new URL(uri)
    return url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'data:' ? url : undefined
  } catch {
    return undefined
  }
}
