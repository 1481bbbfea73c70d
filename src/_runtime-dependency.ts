import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { execa } from 'execa'

export interface RuntimeDependency {
  /** The `a2a-runtime` entry of the generated package.json. */
  specifier: string
  /** A packed runtime written into the project, when generated from a clone. */
  tarball?: string
}

const VENDOR_DIR = 'vendor'

/**
 * A published generator depends on the published runtime of its own version (`^x.y.z`). Run from a clone of
 * the repository, where `runtime/` sits beside the generator, the runtime may not be on the registry yet, so
 * it is packed into the project and the project depends on that tarball.
 */
export async function resolveRuntimeDependency(packageRoot: string, projectDir: string): Promise<RuntimeDependency> {
  const runtimeDir = join(packageRoot, 'runtime')
  const { version } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }
  if (!existsSync(join(runtimeDir, 'package.json'))) return { specifier: `^${version}` }
  if (!existsSync(join(runtimeDir, 'dist/index.js'))) {
    throw new Error(`The runtime in ${runtimeDir} is not built: run \`npm run build\` in the repository first`)
  }
  const destination = join(projectDir, VENDOR_DIR)
  mkdirSync(destination, { recursive: true })
  const { stdout } = await execa('npm', ['pack', '--json', '--pack-destination', destination], { cwd: runtimeDir })
  const [packed] = JSON.parse(stdout) as Array<{ filename: string }>
  if (!packed) throw new Error('npm pack of the runtime produced no tarball')
  const tarball = `${VENDOR_DIR}/${packed.filename}`
  return { specifier: `file:./${tarball}`, tarball }
}
