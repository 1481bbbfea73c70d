/**
 * The a2a-runtime package's own folder, found upwards from this module rather than at a fixed number of folders
 * up: the sources run from src/ (tests), the published package runs from the bundled dist/, where a module lands
 * in an entry file or a chunk at whatever depth the bundler chose. The first folder whose package.json names
 * a2a-runtime is the package's. The file system is reached through `process.getBuiltinModule`, never imported:
 * the modules that use this also load where there is none (Cloudflare Workers), and then get undefined.
 */

const PACKAGE_NAME = 'a2a-runtime'
/** Deeper than any module of the package sits below its root: a bound on the walk, not a layout rule. */
const MAX_DEPTH = 8

let root: URL | null | undefined

/** The package's root folder as a `file:` URL ending in `/`; undefined without a file system or outside it. */
function packageRoot(): URL | undefined {
  if (root === undefined) root = findRoot() ?? null
  return root ?? undefined
}

/** A file of the package by its path from the root (`package.json`, `dist/inspector/`); undefined as above. */
export function packageFile(path: string): URL | undefined {
  const found = packageRoot()
  return found && new URL(path, found)
}

function findRoot(): URL | undefined {
  try {
    const fs = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.(
      'node:fs',
    ) as typeof import('node:fs') | undefined
    if (!fs) return undefined
    let folder = new URL('./', import.meta.url)
    if (folder.protocol !== 'file:') return undefined
    for (let depth = 0; depth < MAX_DEPTH; depth++) {
      if (nameAt(fs, new URL('package.json', folder)) === PACKAGE_NAME) return folder
      const parent = new URL('../', folder)
      if (parent.href === folder.href) return undefined
      folder = parent
    }
  } catch {
    // no import.meta.url a file system knows (a bundle of the user's)
  }
  return undefined
}

function nameAt(fs: typeof import('node:fs'), manifest: URL): unknown {
  try {
    return (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: unknown }).name
  } catch {
    return undefined
  }
}
