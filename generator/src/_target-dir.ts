import { readdirSync, statSync } from 'node:fs'
import { KEPT_IF_PRESENT } from './_write.js'
import { UsageError } from './errors.js'

/** Files that may already be in the target: a fresh repository's usual contents. They are kept. */
export const TOLERATED_FILES = new Set(['.git', 'LICENSE', '.DS_Store', ...KEPT_IF_PRESENT])

/**
 * The entries of `dir` that stand in the way (none when it does not exist yet). Throws a UsageError (exit 1)
 * when `dir` cannot be a project directory at all: a file, or a path through a file.
 */
export function busyEntries(dir: string): string[] {
  let isDirectory: boolean
  try {
    isDirectory = statSync(dir).isDirectory()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return []
    throw new UsageError(
      code === 'ENOTDIR'
        ? `${dir} cannot be created: part of its path is a file`
        : `${dir} cannot be used: ${(error as Error).message}`,
      1,
    )
  }
  if (!isDirectory) throw new UsageError(`${dir} exists and is not a directory`, 1)
  return readdirSync(dir)
    .filter((entry) => !TOLERATED_FILES.has(entry))
    .sort()
}

/** At most `limit` entries, one a line, and how many more there are. */
function listEntries(entries: string[], limit = 20): string {
  const shown = entries.slice(0, limit).map((entry) => `  ${entry}`)
  if (entries.length > limit) shown.push(`  … and ${entries.length - limit} more`)
  return shown.join('\n')
}

/** The refusal of a busy directory: what is in it and the ways on. */
export function busyDirectoryError(dir: string, busy: string[]): UsageError {
  return new UsageError(
    `The directory ${dir} is not empty:\n${listEntries(busy)}\nChoose another directory, or pass --force to add the project beside these files (none of them is deleted).`,
    1,
  )
}
