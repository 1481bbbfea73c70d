import { lstatSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { LOCKFILES } from './_install.js'
import { TOLERATED_FILES } from './_target-dir.js'
import { sameContent } from './_write.js'
import type { RenderedFile } from './render.js'

/** What installing leaves in a project: its dependencies and a lockfile. */
const INSTALL_OUTPUT = new Set(['node_modules', ...LOCKFILES])

/** The credential an earlier run made: kept as it is, so the clients that have it still get in. */
export const EARLIER_SECRET = '.env'

/**
 * Whether `dir` holds the project this run would write, left there by an earlier run with the same answers
 * (stopped during install, say), so this run may continue into it. It does when its package.json is the one
 * this run writes and every other file is one this run writes, with the same content: except the `.env`
 * (kept) and the packed runtime at `pendingPaths` (compared once packed). What installing and git leave
 * (`node_modules/`, a lockfile, `.git`) and a fresh repository's files may be there too. Anything else, or a
 * link anywhere, and it is someone's directory, not an earlier run; with `besideOthers` (--force) other files
 * may be there too, as the earlier run wrote beside them.
 */
export function isEarlierRun(
  dir: string,
  files: RenderedFile[],
  pendingPaths: string[] = [],
  besideOthers = false,
): boolean {
  const rendered = new Map(files.map((file) => [file.path, file]))
  const manifest = rendered.get('package.json')
  if (!manifest || !sameContent(join(dir, 'package.json'), manifest.content)) return false
  const pending = new Set(pendingPaths)
  const fits = (path: string): boolean => {
    const stat = lstatSync(join(dir, path))
    if (stat.isSymbolicLink()) return false
    if (stat.isDirectory()) return readdirSync(join(dir, path)).every((entry) => fits(`${path}/${entry}`))
    if (pending.has(path) || (path === EARLIER_SECRET && rendered.has(path))) return true
    const file = rendered.get(path)
    // With --force the project was written beside the user's files: those may stay, ours must be unchanged.
    if (file === undefined) return besideOthers
    return sameContent(join(dir, path), file.content)
  }
  return readdirSync(dir)
    .filter((entry) => !TOLERATED_FILES.has(entry) && !INSTALL_OUTPUT.has(entry))
    .every(fits)
}
