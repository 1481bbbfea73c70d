import { readFileSync, statSync } from 'node:fs'
import { dirname, extname, relative, resolve, sep } from 'node:path'

/**
 * The project's own files an agent module is made of: itself and what it imports with a relative path, followed
 * through those files in turn. `a2a dev` of a folder of agents reloads only the agents whose files a save touched.
 *
 * Read from the source text rather than from the loader: jiti evaluates each load afresh and reports no graph.
 * Static imports, re-exports, `import()` and `require()` of string literals are seen; a module reached another way
 * (a computed specifier, a path alias) is not, which is why a save of a file no agent is seen to import reloads every
 * agent. Packages (bare specifiers) are never followed: they do not change under a dev server.
 */

const SPECIFIERS = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)(['"])(\.{1,2}\/[^'"\n]*|\.{1,2})\1/g
/** TypeScript's ESM imports name the emitted file: `./tools.js` is `./tools.ts` in the sources. */
const EMITTED: Record<string, string[]> = {
  '.js': ['.ts', '.tsx'],
  '.mjs': ['.mts'],
  '.cjs': ['.cts'],
  '.jsx': ['.tsx'],
}
const EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.mjs', '.cjs', '.jsx', '.json']
/** More files than an agent's own code would ever have: a bound on a walk through generated code. */
const MAX_FILES = 2000

/** The files (relative to `root`, with the platform's separators) the module at `entry` is made of. */
export function moduleFiles(root: string, entry: string): Set<string> {
  const seen = new Set<string>()
  const pending = [resolve(root, entry)]
  while (pending.length > 0 && seen.size < MAX_FILES) {
    const file = pending.pop()!
    const name = relative(root, file)
    if (seen.has(name) || name.startsWith('..') || name.split(sep).includes('node_modules')) continue
    seen.add(name)
    if (extname(file) === '.json') continue
    let source: string
    try {
      source = readFileSync(file, 'utf8')
    } catch {
      continue // gone, or unreadable: the load says so
    }
    for (const match of source.matchAll(SPECIFIERS)) {
      const found = resolveSpecifier(dirname(file), match[2]!)
      if (found) pending.push(found)
    }
  }
  return seen
}

function resolveSpecifier(from: string, specifier: string): string | undefined {
  const base = resolve(from, specifier)
  const extension = extname(base)
  const stem = base.slice(0, base.length - extension.length)
  const candidates = [
    base,
    ...(EMITTED[extension] ?? []).map((emitted) => stem + emitted),
    ...EXTENSIONS.map((added) => base + added),
    ...EXTENSIONS.map((added) => resolve(base, `index${added}`)),
  ]
  return candidates.find(isFile)
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}
