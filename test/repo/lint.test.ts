import { execFile } from 'node:child_process'
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

// `npm test` runs `biome ci .` (format, lint and the import-cycle rule) before the tests, with zero findings. No
// module imports itself back through others, type imports included: a cycle works only while every use of the
// other side waits inside a function, and breaks the day one moves to the top level; and it blurs which layer
// stands on which (the bindings share `bindings/_params.ts`, shared types live in `types.ts`). Here, the rule
// itself, as the repository configures it, is shown to find cycles.

const root = fileURLToPath(new URL('../..', import.meta.url))
const biome = join(root, 'node_modules/.bin/biome')
const exec = promisify(execFile)

/** `biome lint` with the repository's configuration on two modules that import each other as given; the rules it reports. */
async function lintPair(aImportsB: string, bImportsA: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-lint-'))
  try {
    copyFileSync(join(root, 'biome.json'), join(dir, 'biome.json'))
    writeFileSync(join(dir, 'a.ts'), `${aImportsB}\nexport const a = 1\nexport type A = number\n`)
    writeFileSync(join(dir, 'b.ts'), `${bImportsA}\nexport const b = 2\nexport type B = number\n`)
    const result = await exec(biome, ['lint', '--reporter=json', '--vcs-enabled=false', 'a.ts', 'b.ts'], { cwd: dir }).catch((failure) => failure)
    const report = JSON.parse(result.stdout) as { diagnostics: Array<{ category: string }> }
    return report.diagnostics.map((diagnostic) => diagnostic.category)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe('the import-cycle rule', () => {
  it('finds two modules that import values from each other (with the .js specifiers the sources use)', async () => {
    expect(await lintPair("import { b } from './b.js'\nexport const useB = () => b", "import { a } from './a.js'\nexport const useA = () => a")).toContain(
      'lint/suspicious/noImportCycles',
    )
  })

  it('finds a cycle made only of type imports', async () => {
    expect(await lintPair("import type { B } from './b.ts'\nexport type UsesB = B", "import type { A } from './a.ts'\nexport type UsesA = A")).toContain(
      'lint/suspicious/noImportCycles',
    )
  })

  it('finds nothing when the imports go one way', async () => {
    expect(await lintPair("import { b } from './b.js'\nexport const useB = () => b", '')).toEqual([])
  })
})
