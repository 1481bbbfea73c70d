import { isObject } from '../_is-object.js'
import { recordedUri } from './_content.js'

/**
 * What an A2A v1.0 message or artifact says, as the GenAI semantic conventions record content
 * (`gen_ai.input.messages`, `gen_ai.output.messages`), read from the ProtoJSON the client sends and receives: the same
 * shape as the server's (`_content.ts`). Recorded only when the caller opts in (`captureContent`). Text and data are
 * kept; a file is named by its media type, name and URL, never its bytes.
 */

type Role = 'user' | 'assistant'

function partOf(part: unknown): object {
  if (!isObject(part)) return { type: 'text', content: '' }
  if (typeof part.text === 'string') return { type: 'text', content: part.text }
  if ('data' in part) return { type: 'data', content: part.data }
  const { mediaType, filename, url } = part
  return {
    type: 'file',
    ...(typeof mediaType === 'string' && mediaType && { mime_type: mediaType }),
    ...(typeof filename === 'string' && filename && { name: filename }),
    ...(typeof url === 'string' && recordedUri(url) && { uri: recordedUri(url) }),
  }
}

/** Messages, each a role and its parts (a ProtoJSON list; anything else is no parts), as the conventions' JSON text. */
export const wireMessagesJson = (messages: ReadonlyArray<{ role: Role; parts: unknown }>): string =>
  JSON.stringify(messages.map(({ role, parts }) => ({ role, parts: Array.isArray(parts) ? parts.map(partOf) : [] })))

/** A ProtoJSON message's role as the conventions name it: the agent is the `assistant`. */
export const wireRoleOf = (role: unknown): Role => (role === 'ROLE_AGENT' ? 'assistant' : 'user')
