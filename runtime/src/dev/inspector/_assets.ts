import { readdirSync, readFileSync } from 'node:fs'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The page, built with the package (vite) into dist/inspector beside dist/dev. */
const ASSETS_DIR = fileURLToPath(new URL('../../inspector/', import.meta.url))

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
  const add = (relativePath: string) => {
    const file = join(ASSETS_DIR, relativePath)
    const name = relativePath === 'index.html' ? '' : relativePath.split('\\').join('/')
    assets!.set(name, {
      body: readFileSync(file),
      type: TYPES[extname(file)] ?? 'application/octet-stream',
      immutable: name.startsWith('assets/'),
    })
  }
  try {
    for (const entry of readdirSync(ASSETS_DIR, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) add(join(entry.parentPath, entry.name).slice(ASSETS_DIR.length))
    }
  } catch {
    // not built: the handler says so
  }
  return assets
}
