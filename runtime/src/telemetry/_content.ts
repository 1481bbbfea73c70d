import type { Part } from '../types.js'

/**
 * What a message or an artifact says, as the GenAI semantic conventions record content (`gen_ai.input.messages`,
 * `gen_ai.output.messages`): a JSON list of messages, each a role and its parts. Recorded only when the app opts in
 * (`captureContent`). Text and data are kept; a file is named by its media type, name and URI, never its bytes.
 */

type Role = 'user' | 'assistant'

/**
 * A file's URI as recorded: without its query and fragment, where a presigned URL keeps its signature (a credential
 * for as long as it lasts). A URI that does not parse is left out.
 */
export function recordedUri(uri: string): string | undefined {
  try {
    const parsed = new URL(uri)
    parsed.search = ''
    parsed.hash = ''
    return parsed.href
  } catch {
    return undefined
  }
}

function partOf(part: Part): object {
  if (part.kind === 'text') return { type: 'text', content: part.text }
  if (part.kind === 'data') return { type: 'data', content: part.data }
  const { name, mimeType } = part.file
  const uri = part.file.uri && recordedUri(part.file.uri)
  return { type: 'file', ...(mimeType && { mime_type: mimeType }), ...(name && { name }), ...(uri && { uri }) }
}

/** One message of `role` whose content is `parts`, as the conventions' JSON text. */
export const messagesJson = (role: Role, parts: readonly Part[]): string =>
  JSON.stringify([{ role, parts: parts.map(partOf) }])

/** The A2A role as the conventions name it: the agent is the `assistant`. */
export const roleOf = (role: 'user' | 'agent'): Role => (role === 'agent' ? 'assistant' : 'user')
