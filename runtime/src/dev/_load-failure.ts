import { readFileSync } from 'node:fs'
import { relative, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * Finds "<file>:<line>:<column>" under `root`, written as a path or as a file URL. The root is matched
 * literally rather than by a generic path pattern because a project path may hold spaces or non-ASCII
 * letters, which stacks print as they are and file URLs percent-encode.
 */
function locationsUnder(root: string): RegExp {
  const base = root.endsWith(sep) ? root : `${root}${sep}`
  const asPath = `(?<path>${escapeRegExp(base)}[^\\n():]*?)`
  const asUrl = `(?<url>${escapeRegExp(pathToFileURL(base).href)}[^\\s():]*?)`
  return new RegExp(`(?:${asUrl}|${asPath}):(?<line>\\d+):(?<column>\\d+)`, 'g')
}

/** Where a failure happened: the file (absolute, and as the project names it), its line and column, 1-based. */
interface Place {
  file: string
  inProject: string
  line: number
  column: number
}

/**
 * jiti reports a module that does not compile as `Code: message \n <file>:<line>:<column>` with Babel's column,
 * which counts from 0; stacks count from 1, as editors do.
 */
const COMPILE_ERROR = /^\w+: [^\n]* \n \S[^\n]*:\d+:\d+$/

/**
 * Where and why the agent failed to load, as "src/agent.ts:4:2 ParseError: Unexpected token": the first
 * place in the project's own files (not node_modules) that the error's message or stack names.
 */
export function describeLoadFailure(error: unknown, root: string): string {
  return explainLoadFailure(error, root).summary
}

/** The one-line description (`describeLoadFailure`) and, when the place is known, a frame of its line with a caret. */
export function explainLoadFailure(error: unknown, root: string): { summary: string; frame: string } {
  const err = error instanceof Error ? error : new Error(String(error))
  const firstLine = err.message.split('\n')[0]!.trim()
  const cause = firstLine.includes(':') && /^[A-Z]\w*Error:/.test(firstLine) ? firstLine : `${err.name}: ${firstLine}`
  const place = placeOf(err, root)
  if (!place) return { summary: cause, frame: '' }
  return { summary: `${place.inProject}:${place.line}:${place.column} ${cause}`, frame: codeFrame(place) }
}

function placeOf(err: Error, root: string): Place | undefined {
  const fromZero = COMPILE_ERROR.test(err.message)
  const text = `${err.message}\n${err.stack ?? ''}`
  for (const match of text.matchAll(locationsUnder(root))) {
    const { url, path, line, column } = match.groups!
    let file: string
    try {
      file = url ? fileURLToPath(url) : path!
    } catch {
      continue // a malformed escape in what only looked like a file URL
    }
    // Inside the project only: a project that itself lives under a node_modules folder still has locations.
    const inProject = relative(root, file)
    if (inProject.split(sep).includes('node_modules')) continue
    // The message comes first in `text`: a compile error's own place is the first found.
    const inMessage = match.index < err.message.length
    return { file, inProject, line: Number(line), column: Number(column) + (fromZero && inMessage ? 1 : 0) }
  }
  return undefined
}

/** The widest stretch of a line a frame shows; a longer line is shown around the column. */
const FRAME_CHARS = 120

/**
 * The failing line and a caret under its column, as bundlers show it:
 *
 *     6 |     const x = ;
 *       |               ^
 *
 * Empty when the file or the line cannot be read. Tabs before the column stay tabs under it, so the caret lines up.
 */
function codeFrame({ file, line, column }: Place): string {
  let source: string
  try {
    source = readFileSync(file, 'utf8')
  } catch {
    return ''
  }
  const text = source.split(/\r?\n/)[line - 1]
  if (text === undefined) return ''
  const at = Math.min(Math.max(column - 1, 0), text.length)
  const start = text.length > FRAME_CHARS ? Math.max(0, Math.min(at - FRAME_CHARS / 2, text.length - FRAME_CHARS)) : 0
  const shown = text.slice(start, start + FRAME_CHARS)
  const before = start > 0 ? '…' : ''
  const after = start + FRAME_CHARS < text.length ? '…' : ''
  const pad = (before + text.slice(start, at)).replace(/[^\t]/g, ' ')
  const gutter = String(line)
  const blank = ' '.repeat(gutter.length)
  return `  ${gutter} | ${before}${shown}${after}\n  ${blank} | ${pad}^`
}
