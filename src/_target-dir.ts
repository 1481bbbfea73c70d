import { readdirSync, statSync } from 'node:fs'
import { UsageError } from './_names.js'
import { KEPT_IF_PRESENT } from './_write.js'

/** Files that may already be in the target: a fresh repository's usual contents. They are kept. */
export const TOLERATED_FILES = new Set(['.git', 'LICENSE', '.DS_Store', ...KEPT_IF_PRESENT])

/**
 * The files in `dir` that stand in the way. Throws a UsageError (exit 1) listing them unless `force`; with
 * `force` the generator writes its own files among them and touches nothing else.
 */
export function checkTargetDir(dir: string, force: boolean): { exists: boolean; conflicts: string[] } {
  let isDirectory: boolean
  try {
    isDirectory = statSync(dir).isDirectory()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return { exists: false, conflicts: [] }
    throw new UsageError(code === 'ENOTDIR' ? `${dir} cannot be created: part of its path is a file` : `${dir} cannot be used: ${(error as Error).message}`, 1)
  }
  if (!isDirectory) throw new UsageError(`${dir} exists and is not a directory`, 1)
  const conflicts = readdirSync(dir)
    .filter((entry) => !TOLERATED_FILES.has(entry))
    .sort()
  if (conflicts.length && !force) {
    const shown = conflicts.slice(0, 20).map((entry) => `  ${entry}`)
    if (conflicts.length > 20) shown.push(`  … and ${conflicts.length - 20} more`)
    throw new UsageError(`The directory ${dir} is not empty:\n${shown.join('\n')}\nChoose another directory, or pass --force to add the project beside these files (none of them is deleted).`, 1)
  }
  return { exists: true, conflicts }
}
