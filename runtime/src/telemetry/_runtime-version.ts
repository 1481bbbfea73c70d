import { packageFile } from '../_package-root.js'

/**
 * The runtime's version, as the meter's and tracer's instrumentation scope carries it: read from its package.json
 * (found by _package-root.ts, in the sources and in the bundled dist alike), on a runtime with a file system.
 * Undefined where there is none (Cloudflare Workers) or the file cannot be read: the scope then has a name only.
 */
export function runtimeVersion(): string | undefined {
  try {
    const manifest = packageFile('package.json')
    const fs = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.(
      'node:fs',
    ) as typeof import('node:fs') | undefined
    if (!manifest || !fs) return undefined
    const { version } = JSON.parse(fs.readFileSync(manifest, 'utf8'))
    return typeof version === 'string' ? version : undefined
  } catch {
    return undefined
  }
}
