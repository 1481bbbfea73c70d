import { type FSWatcher, readdirSync, statSync, watch } from 'node:fs'
import { join } from 'node:path'

/** Never watched: dependencies, history, build output and caches. */
export const IGNORED_DIRS = new Set(['node_modules', '.git', 'dist', 'build', 'coverage', '.cache', '.a2a', '.turbo'])

// What an agent is made of: code, data files a card or skill may be read from, and the environment.
const RELEVANT_EXTENSIONS = /\.(?:[cm]?[jt]sx?|json|ya?ml)$/i
const ENV_FILE = /^\.env(?:\..+)?$/

/** A change worth a reload: not a log, an editor's swap file or anything else the agent cannot read. */
export function isRelevant(file: string): boolean {
  const name = file.split(/[\\/]/).pop() ?? file
  return ENV_FILE.test(name) || (RELEVANT_EXTENSIONS.test(name) && !name.startsWith('.#'))
}

/**
 * Watches a project for saves, including editors that save by writing a new file and renaming it over the
 * old one: directories are watched, not files. The root is watched alone (its files: `.env`,
 * `package.json`…) and each of its folders recursively, so `node_modules` is never walked.
 * Calls `onChange` with the path relative to the root, for relevant files only (`isRelevant`).
 */
export function watchProject(root: string, onChange: (file: string) => void): { close(): void } {
  const watchers = new Map<string, FSWatcher>()
  const watchFolder = (name: string) => {
    if (IGNORED_DIRS.has(name) || watchers.has(name)) return
    try {
      const watcher = watch(join(root, name), { recursive: true }, (_event, file) => {
        if (!file) return
        const path = join(name, file.toString())
        if (isRelevant(path) && !path.split(/[\\/]/).some((part) => IGNORED_DIRS.has(part))) onChange(path)
      })
      watcher.on('error', () => unwatch(name))
      watchers.set(name, watcher)
    } catch {
      // Gone between listing and watching: nothing to watch.
    }
  }
  const unwatch = (name: string) => {
    watchers.get(name)?.close()
    watchers.delete(name)
  }
  const isFolder = (name: string) => {
    try {
      return statSync(join(root, name)).isDirectory()
    } catch {
      return false
    }
  }

  for (const entry of readdirSync(root)) if (isFolder(entry)) watchFolder(entry)
  const rootWatcher = watch(root, (_event, file) => {
    if (!file) return
    const name = file.toString()
    if (IGNORED_DIRS.has(name)) return
    if (isFolder(name)) watchFolder(name)
    else {
      unwatch(name)
      if (isRelevant(name)) onChange(name)
    }
  })
  return {
    close() {
      rootWatcher.close()
      for (const name of [...watchers.keys()]) unwatch(name)
    },
  }
}
