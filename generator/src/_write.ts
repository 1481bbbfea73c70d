import { appendFileSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { WriteError } from './errors.js'
import type { RenderedFile } from './render.js'

/** Files a fresh repository may already hold: the user's copy is kept (a .gitignore gains missing lines). */
export const KEPT_IF_PRESENT = new Set(['README.md', '.gitignore'])

type Entry = 'none' | 'folder' | 'file' | 'link'

/** What is at a path, without following links: a dangling link is still something in the way. */
function entryAt(path: string): Entry {
  try {
    const stat = lstatSync(path)
    return stat.isSymbolicLink() ? 'link' : stat.isDirectory() ? 'folder' : 'file'
  } catch {
    return 'none'
  }
}

/** Whether the file at `path` holds exactly `content`. */
export function sameContent(path: string, content: string | Uint8Array): boolean {
  try {
    return readFileSync(path).equals(typeof content === 'string' ? Buffer.from(content) : content)
  } catch {
    return false
  }
}

/**
 * The user's entries the project would have to write over or through: an existing file or link at one of
 * its paths (unless it is `kept`, or already holds what the project would write there), or a file or link
 * where it needs a folder. The generator writes nothing while any remain.
 */
export function findObstacles(
  dir: string,
  files: RenderedFile[],
  kept: ReadonlySet<string> = KEPT_IF_PRESENT,
): string[] {
  const obstacles = new Set<string>()
  for (const file of files) {
    const parts = file.path.split('/')
    for (let i = 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join('/')
      const entry = entryAt(join(dir, folder))
      if (entry === 'file' || entry === 'link') obstacles.add(folder)
    }
    const entry = entryAt(join(dir, file.path))
    const harmless = kept.has(file.path) || sameContent(join(dir, file.path), file.content)
    if (entry === 'folder' || entry === 'link' || (entry === 'file' && !harmless)) obstacles.add(file.path)
  }
  return [...obstacles].sort()
}

/**
 * Writes the files, never over an existing entry (exclusive create): the user's copy of a `kept` file stays
 * (a .gitignore gains the lines it lacks), and a file that already holds this content is left as it is.
 */
export function writeProject(
  dir: string,
  files: RenderedFile[],
  keepIfPresent: ReadonlySet<string> = KEPT_IF_PRESENT,
): { written: string[]; kept: string[]; unchanged: string[] } {
  const written: string[] = []
  const kept: string[] = []
  const unchanged: string[] = []
  try {
    for (const file of files) {
      const target = join(dir, file.path)
      if (entryAt(target) === 'file' && sameContent(target, file.content)) {
        unchanged.push(file.path)
        continue
      }
      if (keepIfPresent.has(file.path) && entryAt(target) === 'file') {
        kept.push(file.path)
        if (file.path === '.gitignore') appendMissingLines(target, String(file.content))
        continue
      }
      mkdirSync(dirname(target), { recursive: true })
      // Created with its mode, so a secret is never readable by others, not even for a moment.
      writeFileSync(target, file.content, { flag: 'wx', mode: file.mode ?? 0o666 })
      written.push(file.path)
    }
  } catch (error) {
    throw new WriteError(written, error)
  }
  return { written, kept, unchanged }
}

function appendMissingLines(path: string, content: string): void {
  const present = new Set(
    readFileSync(path, 'utf8')
      .split(/\r?\n/)
      .map((line) => line.trim()),
  )
  const missing = content.split('\n').filter((line) => line.trim() && !present.has(line.trim()))
  if (missing.length) appendFileSync(path, `\n# Added by create-a2a-agent\n${missing.join('\n')}\n`)
}
