import { createHash, randomBytes } from 'node:crypto'
import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire, Module } from 'node:module'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { Script, constants as vmConstants } from 'node:vm'
import { processEnv } from '../settings.js'

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
  // Node's own switch for its compile cache turns this one off too (bin/a2a.mjs says it turns caching off); as for
  // Node (22 and 24), set at all is enough, whatever its value.
  if (processEnv().NODE_DISABLE_COMPILE_CACHE !== undefined) return
  try {
    const cache = createRequire(file).cache
    if (cache[file]) return
    const source = readFileSync(file, 'utf8')
    // A Script's `import()` throws ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING unless it is given a loader: Node's own, as
    // require's modules have (Node 20.12 and later; jiti's core today has `import(` only in a string and a method's
    // name). Where Node has none, a file with `import(` anywhere (a string or a comment too: simpler than parsing)
    // is left to require.
    const importModuleDynamically = vmConstants?.USE_MAIN_CONTEXT_DEFAULT_LOADER
    if (importModuleDynamically === undefined && source.includes('import(')) return
    const dir = ownCacheDir()
    if (dir === undefined) return
    const hash = createHash('sha256').update(process.version).update('\0').update(source).digest('hex').slice(0, 32)
    const cacheFile = join(dir, `${basename(file)}-${hash}`)
    const cachedData = readOr(cacheFile)
    const script = new Script(Module.wrap(source), {
      filename: file,
      ...(cachedData && { cachedData }),
      ...(importModuleDynamically && { importModuleDynamically }),
    })
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
        // Never throws: the agent has loaded by then, and a cache not written only costs the next start a compile.
        try {
          if (stale) writeAtomically(cacheFile, script.createCachedData())
        } catch {
          // The next start compiles again.
        }
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

/**
 * The cache's folder in the temporary folder, made private (0700) if new; undefined (no cache) unless it is a folder
 * (not a link) of this user's that no one else can write: the temporary folder is shared, and a file planted under
 * the cache's predictable name would run as this module's code.
 */
function ownCacheDir(): string | undefined {
  const dir = join(tmpdir(), CACHE_DIR)
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const stats = lstatSync(dir)
    if (!stats.isDirectory() || (stats.mode & 0o022) !== 0) return
    if (process.getuid !== undefined && stats.uid !== process.getuid()) return
    return dir
  } catch {
    return
  }
}

/**
 * Written beside under a random name (a pid is the same in every container sharing the folder), created afresh
 * (`wx`: never into a file already there), then renamed: a start reading it meanwhile sees the whole file or none.
 */
function writeAtomically(file: string, data: Buffer): void {
  const partial = `${file}.${randomBytes(8).toString('hex')}.partial`
  try {
    writeFileSync(partial, data, { flag: 'wx', mode: 0o600 })
    renameSync(partial, file)
  } catch {
    // A full or read-only temporary folder: the next start compiles again, and no partial file is left behind.
    rmSync(partial, { force: true })
  }
}
