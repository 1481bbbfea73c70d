import { readFileSync } from 'node:fs'
import { basename, extname } from 'node:path'
import type { Command } from 'commander'
import type { JsonValue, Part } from '../../client/types.js'
import { UsageError } from '../output/_failures.js'

/**
 * A message's parts as the command line gives them, in order: `--text <string>`, `--file <path|url>`,
 * `--data <path|->` (JSON; `-` reads stdin), each repeatable, and `--media-type <type>` setting the type of the part
 * flag just before it. commander parses options left to right, so each flag's parser appends in the order typed.
 */
type PartFlag = { kind: 'text' | 'file' | 'data'; value: string; mediaType?: string }

export function withMessageParts<T extends Command>(command: T): { command: T; parts: () => PartFlag[] } {
  const given: PartFlag[] = []
  const add = (kind: PartFlag['kind']) => (value: string) => {
    given.push({ kind, value })
    return value
  }
  command
    .option('--text <text>', 'a text part; repeatable, parts keep their order', add('text'))
    .option('--file <path|url>', 'a file part: a local file is sent inline, a URL as a reference', add('file'))
    .option('--data <path|->', 'a data part: JSON from a file, or - for stdin', add('data'))
    .option('--media-type <type>', 'the media type of the part flag just before it', (type: string) => {
      const last = given.at(-1)
      if (!last)
        throw new UsageError('--media-type sets the type of the part before it: put it after --text, --file or --data')
      if (!/^[\w.+-]+\/[\w.+-]+/.test(type))
        throw new UsageError(`--media-type: '${type}' is not a media type (e.g. application/pdf)`)
      last.mediaType = type
      return type
    })
  return { command, parts: () => given }
}

/** The parts to send: the words given as arguments first (one text part), then the flags in their order. */
export function messageParts(words: string[], flags: PartFlag[]): Part[] {
  const parts: Part[] = []
  if (words.length > 0) parts.push({ text: words.join(' ') })
  for (const flag of flags) parts.push(partOf(flag))
  if (parts.length === 0)
    throw new UsageError('nothing to send: give the message as an argument, or --text, --file or --data')
  return parts
}

function partOf(flag: PartFlag): Part {
  const withType = (part: Part, inferred?: string): Part => {
    const mediaType = flag.mediaType ?? inferred
    return mediaType === undefined ? part : { ...part, mediaType }
  }
  switch (flag.kind) {
    case 'text':
      return withType({ text: flag.value })
    case 'data':
      return withType({ data: readJson(flag.value) })
    case 'file': {
      if (/^https?:\/\//i.test(flag.value)) {
        const name = basename(new URL(flag.value).pathname)
        return withType(
          { url: flag.value, ...(name && { filename: name }) },
          flag.mediaType ? undefined : guessType(name),
        )
      }
      let bytes: Buffer
      try {
        bytes = readFileSync(flag.value)
      } catch (error) {
        throw new UsageError(`--file ${flag.value}: ${(error as NodeJS.ErrnoException).code ?? 'cannot be read'}`)
      }
      return withType({ raw: bytes.toString('base64'), filename: basename(flag.value) }, guessType(flag.value))
    }
  }
}

function readJson(source: string): JsonValue {
  let text: string
  try {
    text = readFileSync(source === '-' ? 0 : source, 'utf8')
  } catch (error) {
    throw new UsageError(`--data ${source}: ${(error as NodeJS.ErrnoException).code ?? 'cannot be read'}`)
  }
  try {
    return JSON.parse(text) as JsonValue
  } catch (error) {
    throw new UsageError(`--data ${source === '-' ? '(stdin)' : source} is not JSON: ${(error as Error).message}`)
  }
}

/** Types by extension, used only when the caller named none: an extension is a hint, not a promise. */
const TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.html': 'text/html',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.mp4': 'video/mp4',
}

const guessType = (name: string): string | undefined => TYPES[extname(name).toLowerCase()]
