import { readdirSync, readFileSync } from 'node:fs'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { packageFile } from '../../_package-root.js'

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
}

export interface Asset {
  body: Buffer
  type: string
  /** Hashed names never change: cached for good; the page itself is checked each time. */
  immutable: boolean
}

let assets: Map<string, Asset> | undefined

/**
 * The inspector's files by path under /__a2a/ ('' is the page), read on the first request rather than at
 * start-up (a dev server that nobody inspects pays nothing). Empty when the package was built without them.
 */
export function inspectorAssets(): Map<string, Asset> {
  if (assets) return assets
  assets = new Map()
  // The page, built with the package (vite) into dist/inspector: found from the package's root, as this module may
  // sit in any chunk of the bundled dist (and in src/ when the sources run, where the page is the last build's).
  const url = packageFile('dist/inspector/')
  if (!url) return assets
  const dir = fileURLToPath(url)
  const add = (relativePath: string) => {
    const file = join(dir, relativePath)
    const name = relativePath === 'index.html' ? '' : relativePath.split('\\').join('/')
    assets!.set(name, {
      body: readFileSync(file),
      type: TYPES[extname(file)] ?? 'application/octet-stream',
      immutable: name.startsWith('assets/'),
    })
  }
  try {
    for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) add(join(entry.parentPath, entry.name).slice(dir.length))
    }
  } catch {
    // not built: the handler says so
  }
  return assets
}
