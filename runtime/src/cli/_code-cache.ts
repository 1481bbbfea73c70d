import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire, Module } from 'node:module'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { Script } from 'node:vm'

/** Where the compiled code is kept: the system's temporary folder, as jiti keeps its compiled TypeScript. */
const CACHE_DIR = 'a2a-code-cache'

/** What `requireFromCodeCache` loaded: `save()` keeps its compiled code for the next start, when it has none yet. */
export interface CompiledModule {
  save(): void
}

/**
 * Loads the CommonJS file `file` (by its absolute path) into `require`'s cache, compiled from V8's code cache when an
 * earlier start left one for this very content: Node 20 compiles every module it loads anew (Node 22.1 and later
 * keep a compile cache of their own, which bin/a2a.mjs turns on, and then this does nothing). A later
 * `require` of it, or of a module requiring it, gets it from there. The cache is keyed by a hash of the source, never
 * its size or date: V8 checks only the length of the source it was made from. Undefined when nothing was loaded
 * (a compile cache of Node's own, or anything failing): `require` then loads the file as ever.
 */
export function requireFromCodeCache(file: string): CompiledModule | undefined {
  if ((Module as { getCompileCacheDir?: () => string | undefined }).getCompileCacheDir?.() !== undefined) return
  try {
    const cache = createRequire(file).cache
    if (cache[file]) return
    const source = readFileSync(file, 'utf8')
    const hash = createHash('sha256').update(process.version).update('\0').update(source).digest('hex').slice(0, 32)
    const cacheFile = join(tmpdir(), CACHE_DIR, `${basename(file)}-${hash}`)
    const cachedData = readOr(cacheFile)
    const script = new Script(Module.wrap(source), { filename: file, ...(cachedData && { cachedData }) })
    const module = new Module(file)
    module.filename = file
    module.paths = (Module as unknown as { _nodeModulePaths(from: string): string[] })._nodeModulePaths(dirname(file))
    const wrapper = script.runInThisContext() as (...args: unknown[]) => void
    wrapper.call(module.exports, module.exports, createRequire(file), module, file, dirname(file))
    module.loaded = true
    cache[file] = module
    const stale = cachedData === undefined || script.cachedDataRejected === true
    return {
      save() {
        // After the module ran: the code cache then holds the functions it compiled on the way, not only its top.
        if (stale) writeAtomically(cacheFile, script.createCachedData())
      },
    }
  } catch {
    return
  }
}

function readOr(file: string): Buffer | undefined {
  try {
    return readFileSync(file)
  } catch {
    return undefined
  }
}

/** Written beside, then renamed: a start reading it meanwhile sees the whole file or none. */
function writeAtomically(file: string, data: Buffer): void {
  try {
    mkdirSync(dirname(file), { recursive: true })
    const partial = `${file}.${process.pid}.partial`
    writeFileSync(partial, data)
    renameSync(partial, file)
  } catch {
    // A read-only temporary folder: the next start compiles again.
  }
}
