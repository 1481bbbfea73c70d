import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const runtimeManifest = JSON.parse(readFileSync(new URL('../runtime/package.json', import.meta.url), 'utf8')) as {
  exports: Record<string, { default: string }>
}

/**
 * Tests import the runtime as its users do (`a2a-runtime`, `a2a-runtime/workers`…) but run against its source, so
 * a failure points at the line that broke: each entry of the package's `exports` (./dist/entries/workers.js) is
 * its file under src/ (./src/entries/workers.ts).
 */
export const runtimeSourceAliases = Object.entries(runtimeManifest.exports).map(([subpath, { default: built }]) => ({
  find: new RegExp(`^${`a2a-runtime${subpath.slice(1)}`.replaceAll('/', '\\/')}$`),
  replacement: fileURLToPath(
    new URL(built.replace('./dist/', '../runtime/src/').replace(/\.js$/, '.ts'), import.meta.url),
  ),
}))
