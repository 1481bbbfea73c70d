import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { execa } from 'execa'

export interface RuntimeDependency {
  /** The `a2a-runtime` entry of the generated package.json. */
  specifier: string
  /** From a clone: where the packed runtime goes in the project, and how to put it there. */
  tarball?: { path: string; write(projectDir: string): Promise<void> }
}

/**
 * A published generator depends on the published runtime of its own version (`^x.y.z`). Run from a clone of
 * the repository, where `runtime/` sits beside the generator, the runtime may not be on the registry yet, so
 * it is packed into the project's `vendor/` and the project depends on that tarball.
 */
export function planRuntimeDependency(packageRoot: string): RuntimeDependency {
  const runtimeDir = join(packageRoot, 'runtime')
  const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }
  if (!existsSync(join(runtimeDir, 'package.json'))) return { specifier: `^${version}` }
  if (!existsSync(join(runtimeDir, 'dist/index.js'))) {
    throw new Error(`The runtime in ${runtimeDir} is not built: run \`npm run build\` in the repository first`)
  }
  const runtime = JSON.parse(readFileSync(join(runtimeDir, 'package.json'), 'utf8')) as { name: string; version: string }
  const path = `vendor/${runtime.name}-${runtime.version}.tgz`
  return {
    specifier: `file:./${path}`,
    tarball: {
      path,
      async write(projectDir) {
        const destination = dirname(join(projectDir, path))
        mkdirSync(destination, { recursive: true })
        await execa('npm', ['pack', '--pack-destination', destination], { cwd: runtimeDir })
        if (!existsSync(join(projectDir, path))) throw new Error(`npm pack of the runtime did not produce ${path}`)
      },
    },
  }
}
