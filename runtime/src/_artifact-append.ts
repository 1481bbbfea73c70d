import { joinedTextHeapBytes, partsHeapBytes } from './_heap-bytes.js'
import type { Artifact, Part, Task, TextPart } from './types.js'

/**
 * How an appended chunk joins the artifact it continues, for the run that receives it and every store that reads
 * a task back from its events alike. A text part that follows a text part (neither with a media type or
 * metadata) is joined to it: an answer streamed a word at a time is stored as the one text it is, not as tens of
 * thousands of parts (each an object of its own, many times the heap of its word), and every client reading the
 * task sees it whole. Chunk events keep their own parts as they were sent.
 */

/** A text part that joins the text part before it, and that the next one joins: no media type, no metadata. */
export function isPlainText(part: Part | undefined): part is TextPart {
  return part !== undefined && part.kind === 'text' && part.mediaType === undefined && part.metadata === undefined
}

/** The heap `parts` add to `artifact` when appended to it (measured before `appendParts`). */
export function appendedHeapBytes(artifact: Artifact, parts: readonly Part[]): number {
  const first = parts[0]
  // The common chunk: one text part joining the text before it.
  if (parts.length === 1 && isPlainText(first) && isPlainText(artifact.parts[artifact.parts.length - 1]))
    return joinedTextHeapBytes(first.text)
  return partsHeapBytes(parts as Part[])
}

/**
 * Appends `parts` to `artifact`, joining text to the text before it. Returns the text part a join made, if any
 * (see `TextJoins`).
 */
export function appendParts(artifact: Artifact, parts: readonly Part[]): TextPart | undefined {
  let joined: TextPart | undefined
  for (const part of parts) {
    const stored = artifact.parts
    const last = stored[stored.length - 1]
    if (isPlainText(last) && isPlainText(part)) {
      // A new part: the event that carried the previous one keeps it as it was sent.
      joined = { kind: 'text', text: last.text + part.text }
      stored[stored.length - 1] = joined
    } else stored.push(part)
  }
  return joined
}

/**
 * A joined string is a pair of its two halves until V8 copies it into one piece; a text joined word by word is a
 * chain of such pairs, about 60 bytes a word over the text itself. Reading a character makes V8 copy it and let
 * the pieces go. Doing that at every join would copy the text once per word; doing it once the joins since the
 * last copy are many for the text's length keeps the chain under about a tenth of the text, for a copy of the text
 * every few hundred words.
 */
export class TextJoins {
  #since = 0

  joined(part: TextPart): void {
    if (++this.#since < Math.max(64, part.text.length >> 9)) return
    this.#since = 0
    flatten(part.text)
  }
}

/** Has V8 store `text` in one piece (the pieces it was joined from are then free). */
function flatten(text: string): void {
  text.charCodeAt(0)
}

/** Has V8 store each text of the task's artifacts in one piece: once a task read back has all its chunks joined. */
export function flattenArtifactTexts(task: Task): void {
  for (const artifact of task.artifacts) for (const part of artifact.parts) if (part.kind === 'text') flatten(part.text)
}
