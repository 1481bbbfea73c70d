/**
 * The runtime's version, as the meter's and tracer's instrumentation scope carries it: read from its package.json
 * (two folders up from this module, in the sources and in dist alike), on a runtime with a file system. Undefined
 * where there is none (Cloudflare Workers) or the file cannot be read: the scope then has a name only.
 */
export function runtimeVersion(): string | undefined {
  try {
    const fs = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.(
      'node:fs',
    ) as typeof import('node:fs') | undefined
    if (!fs) return undefined
    const { name, version } = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
    return name === 'a2a-runtime' && typeof version === 'string' ? version : undefined
  } catch {
    return undefined
  }
}
