import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { execa } from 'execa'

/** Where packed runtimes are kept, by the content they were packed from. */
const PACKS = join(tmpdir(), 'create-a2a-agent-runtime-packs')
/** Packs of other contents older than this are removed when a new one is made. */
const STALE_MS = 60 * 60 * 1000

/**
 * The runtime folder packed by `npm pack`, as bytes. The same content is packed once: a clone's generator runs
 * many times (every test that generates a project; a developer trying templates), and `npm pack` takes seconds,
 * so the tarball is kept under the hash of every file npm packs and reused while none of them changes.
 */
export async function packRuntime(runtimeDir: string, tarballName: string): Promise<Buffer> {
  const kept = join(PACKS, `${contentHash(runtimeDir)}-${tarballName}`)
  if (existsSync(kept)) return readFileSync(kept)
  mkdirSync(PACKS, { recursive: true })
  const aside = mkdtempSync(join(PACKS, 'packing-'))
  try {
    await execa('npm', ['pack', '--pack-destination', aside], { cwd: runtimeDir, stdin: 'ignore' })
    const packed = join(aside, tarballName)
    if (!existsSync(packed)) throw new Error(`npm pack of the runtime did not produce ${tarballName}`)
    const content = readFileSync(packed)
    // A rename is atomic: a generator running at the same time reads the whole tarball or none.
    renameSync(packed, kept)
    removeStalePacks(kept)
    return content
  } finally {
    rmSync(aside, { recursive: true, force: true })
  }
}

/** A hash of the paths and contents npm packs: the manifest's `files`, the manifest, README and LICENSE. */
function contentHash(runtimeDir: string): string {
  const manifest = JSON.parse(readFileSync(join(runtimeDir, 'package.json'), 'utf8')) as { files?: string[] }
  const roots = [
    ...(manifest.files ?? []),
    ...readdirSync(runtimeDir).filter((name) => /^(package\.json|readme|license|licence)/i.test(name)),
  ]
  const hash = createHash('sha256')
  for (const root of roots.sort()) {
    for (const file of filesUnder(join(runtimeDir, root))) {
      hash.update(relative(runtimeDir, file)).update('\0').update(readFileSync(file)).update('\0')
    }
  }
  return hash.digest('hex').slice(0, 16)
}

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return []
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((entry) => filesUnder(join(path, entry.name)))
}

function removeStalePacks(kept: string): void {
  for (const name of readdirSync(PACKS)) {
    const path = join(PACKS, name)
    if (path === kept || name.startsWith('packing-')) continue
    try {
      if (Date.now() - statSync(path).mtimeMs > STALE_MS) rmSync(path, { force: true })
    } catch {
      // Removed by a generator running at the same time.
    }
  }
}
