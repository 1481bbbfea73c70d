import { appendFileSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { RenderedFile } from './_render.js'

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

/**
 * The user's entries the project would have to write over or through: an existing file or link at one of
 * its paths, or a file or link where it needs a folder. The generator writes nothing while any remain.
 */
export function findObstacles(dir: string, paths: string[]): string[] {
  const obstacles = new Set<string>()
  for (const path of paths) {
    const parts = path.split('/')
    for (let i = 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join('/')
      const entry = entryAt(join(dir, folder))
      if (entry === 'file' || entry === 'link') obstacles.add(folder)
    }
    const entry = entryAt(join(dir, path))
    if (entry === 'folder' || entry === 'link' || (entry === 'file' && !KEPT_IF_PRESENT.has(path))) obstacles.add(path)
  }
  return [...obstacles].sort()
}

/** Thrown part-way through writing: says what is already on disk. */
export class WriteError extends Error {
  constructor(
    readonly written: string[],
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause })
  }
}

/**
 * Writes the files, never over an existing entry (exclusive create), keeping the user's README.md and
 * appending to their .gitignore. Returns what was written and what was kept.
 */
export function writeProject(dir: string, files: RenderedFile[]): { written: string[]; kept: string[] } {
  const written: string[] = []
  const kept: string[] = []
  try {
    for (const file of files) {
      const target = join(dir, file.path)
      if (KEPT_IF_PRESENT.has(file.path) && entryAt(target) === 'file') {
        kept.push(file.path)
        if (file.path === '.gitignore') appendMissingLines(target, file.content)
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
  return { written, kept }
}

function appendMissingLines(path: string, content: string): void {
  const present = new Set(readFileSync(path, 'utf8').split(/\r?\n/).map((line) => line.trim()))
  const missing = content.split('\n').filter((line) => line.trim() && !present.has(line.trim()))
  if (missing.length) appendFileSync(path, `\n# Added by create-a2a-agent\n${missing.join('\n')}\n`)
}
