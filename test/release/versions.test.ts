import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { planRuntimeDependency } from '../../generator/src/_runtime-dependency.ts'

// The generator and the runtime are released together with one version, so a published generator's projects
// get the runtime it was released with.

const root = fileURLToPath(new URL('../..', import.meta.url))
const manifest = (path: string) => JSON.parse(readFileSync(join(root, path), 'utf8'))

describe('releasing the two packages together', () => {
  it('gives both packages one version, kept together by a fixed Changesets group', () => {
    const generator = manifest('generator/package.json')
    const runtime = manifest('runtime/package.json')
    expect(runtime.version).toBe(generator.version)
    const config = manifest('.changeset/config.json')
    expect(config.fixed).toEqual([[generator.name, runtime.name]])
    expect(config.access).toBe('public')
  })

  it('publishes both publicly, with provenance', () => {
    for (const path of ['generator/package.json', 'runtime/package.json'])
      expect(manifest(path).publishConfig).toEqual({ access: 'public', provenance: true })
  })

  it('makes a published generator depend on the runtime of its own version, even beside a folder named runtime', () => {
    // As installed from the registry: the generator's package in a node_modules, without the repository's
    // runtime beside it — only an unrelated package that happens to be called `runtime`.
    const installed = mkdtempSync(join(tmpdir(), 'a2a-published-generator-'))
    try {
      const generator = join(installed, 'node_modules/create-a2a-agent')
      const decoy = join(installed, 'node_modules/runtime')
      mkdirSync(generator, { recursive: true })
      mkdirSync(decoy, { recursive: true })
      writeFileSync(
        join(generator, 'package.json'),
        JSON.stringify({ name: 'create-a2a-agent', version: manifest('generator/package.json').version }),
      )
      writeFileSync(join(decoy, 'package.json'), JSON.stringify({ name: 'runtime', version: '1.0.0' }))
      expect(planRuntimeDependency(generator)).toEqual({ specifier: `^${manifest('runtime/package.json').version}` })
    } finally {
      rmSync(installed, { recursive: true, force: true })
    }
  })
})
