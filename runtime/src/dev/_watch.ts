import { type FSWatcher, readdirSync, statSync, watch } from 'node:fs'
import { join, sep } from 'node:path'

/** Never watched: dependencies, history, build output and caches. */
const IGNORED_DIRS = new Set(['node_modules', '.git', 'dist', 'build', 'coverage', '.cache', '.a2a', '.turbo'])

// What an agent is made of: code, data files a card or skill may be read from, and the environment.
const RELEVANT_EXTENSIONS = /\.(?:[cm]?[jt]sx?|json|ya?ml)$/i
const ENV_FILE = /^\.env(?:\..+)?$/

/** A change worth a reload: not a log, an editor's swap file or anything else the agent cannot read. */
function isRelevant(file: string): boolean {
  const name = file.split(/[\\/]/).pop() ?? file
  return ENV_FILE.test(name) || (RELEVANT_EXTENSIONS.test(name) && !name.startsWith('.#'))
}

/**
 * Watches a project for saves, including editors that save by writing a new file and renaming it over the
 * old one: every folder is watched on its own (a folder watch outlives the files renamed inside it, where
 * Node 20's recursive mode loses a file after its first rename-save), and ignored folders are never walked.
 * Calls `onChange` with the path relative to the root, for relevant files only (`isRelevant`).
 */
export function watchProject(root: string, onChange: (file: string) => void): { close(): void } {
  const watchers = new Map<string, FSWatcher>()
  const isFolder = (path: string) => {
    try {
      return statSync(join(root, path)).isDirectory()
    } catch {
      return false
    }
  }
  const unwatch = (path: string) => {
    for (const [folder, watcher] of watchers) {
      if (folder === path || folder.startsWith(`${path}${sep}`)) {
        watcher.close()
        watchers.delete(folder)
      }
    }
  }
  const watchFolder = (path: string) => {
    if (watchers.has(path)) return
    let watcher: FSWatcher
    try {
      watcher = watch(
        join(root, path),
        (_event, file) => file && seen(path ? join(path, file.toString()) : file.toString()),
      )
    } catch {
      return // gone between listing and watching
    }
    watcher.on('error', () => unwatch(path))
    watchers.set(path, watcher)
    for (const entry of readdirSync(join(root, path), { withFileTypes: true })) {
      if (entry.isDirectory() && !IGNORED_DIRS.has(entry.name)) watchFolder(path ? join(path, entry.name) : entry.name)
    }
  }
  const seen = (path: string) => {
    if (path.split(sep).some((part) => IGNORED_DIRS.has(part))) return
    if (isFolder(path)) return watchFolder(path)
    if (watchers.has(path)) unwatch(path) // a folder went away
    if (isRelevant(path)) onChange(path)
  }

  watchFolder('')
  return {
    close() {
      for (const watcher of watchers.values()) watcher.close()
      watchers.clear()
    },
  }
}
