import { existsSync, readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { packRuntime } from './_runtime-pack.js'
import { UsageError } from './errors.js'
import type { RenderedFile } from './render.js'

export interface RuntimeDependency {
  /** The `a2a-runtime` entry of the generated package.json. */
  specifier: string
  /** From a clone: where the packed runtime goes in the project, and how to pack it. */
  tarball?: { path: string; pack(): Promise<RenderedFile> }
}

/**
 * A published generator depends on the published runtime of its own version (`^x.y.z`). Run from a clone of
 * the repository, where the runtime's folder (`runtime/`, the package `a2a-runtime`) sits beside the generator's,
 * the runtime may not be on the registry yet, so it is packed into the project's `vendor/` and the project
 * depends on that tarball.
 */
export function planRuntimeDependency(packageRoot: string): RuntimeDependency {
  const runtimeDir = join(packageRoot, '..', 'runtime')
  const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }
  if (!isRuntimePackage(runtimeDir)) return { specifier: `^${version}` }
  if (!existsSync(join(runtimeDir, 'dist/index.js'))) {
    throw new UsageError(`The runtime in ${runtimeDir} is not built: run \`npm run build\` in the repository first`, 1)
  }
  const runtime = JSON.parse(readFileSync(join(runtimeDir, 'package.json'), 'utf8')) as {
    name: string
    version: string
  }
  const path = `vendor/${runtime.name}-${runtime.version}.tgz`
  return {
    specifier: `file:./${path}`,
    tarball: {
      path,
      // Packed aside, then written like every other file: never over a different one already there.
      async pack() {
        return { path, content: await packRuntime(runtimeDir, basename(path)) }
      },
    },
  }
}

/** The repository's runtime beside the generator, not some other folder of that name (in a node_modules, say). */
function isRuntimePackage(dir: string): boolean {
  const manifest = join(dir, 'package.json')
  if (!existsSync(manifest)) return false
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'a2a-runtime'
}
