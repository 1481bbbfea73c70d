import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

// `npm test` runs `biome ci .` (format, lint and the import-cycle rule) before the tests, with zero findings. No
// module imports itself back through others, type imports included: a cycle works only while every use of the
// other side waits inside a function, and breaks the day one moves to the top level; and it blurs which layer
// stands on which (the bindings share `bindings/shared/`, shared types live in `types.ts`). Here, the rule
// itself, as the repository configures it, is shown to find cycles.

const root = fileURLToPath(new URL('../..', import.meta.url))
const biome = join(root, 'node_modules/.bin/biome')
const exec = promisify(execFile)

/**
 * `biome lint` with the repository's configuration on two modules that import each other as given; the rules it
 * reports.
 */
async function lintPair(aImportsB: string, bImportsA: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-lint-'))
  try {
    copyFileSync(join(root, 'biome.json'), join(dir, 'biome.json'))
    writeFileSync(join(dir, 'a.ts'), `${aImportsB}\nexport const a = 1\nexport type A = number\n`)
    writeFileSync(join(dir, 'b.ts'), `${bImportsA}\nexport const b = 2\nexport type B = number\n`)
    const result = await exec(biome, ['lint', '--reporter=json', '--vcs-enabled=false', 'a.ts', 'b.ts'], {
      cwd: dir,
    }).catch((failure) => failure)
    const report = JSON.parse(result.stdout) as { diagnostics: Array<{ category: string }> }
    return report.diagnostics.map((diagnostic) => diagnostic.category)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe('the import-cycle rule', () => {
  it('finds two modules that import values from each other (with the .js specifiers the sources use)', async () => {
    expect(
      await lintPair(
        "import { b } from './b.js'\nexport const useB = () => b",
        "import { a } from './a.js'\nexport const useA = () => a",
      ),
    ).toContain('lint/suspicious/noImportCycles')
  })

  it('finds a cycle made only of type imports', async () => {
    expect(
      await lintPair(
        "import type { B } from './b.ts'\nexport type UsesB = B",
        "import type { A } from './a.ts'\nexport type UsesA = A",
      ),
    ).toContain('lint/suspicious/noImportCycles')
  })

  it('finds nothing when the imports go one way', async () => {
    expect(await lintPair("import { b } from './b.js'\nexport const useB = () => b", '')).toEqual([])
  })
})

// The bindings stand in two layers: each dialect (the platform's `_platform*`, A2A v0.3's `_v03*`, v1.0's `_v1*`,
// and `_push*`, what webhooks receive) imports only `bindings/shared/` and the core, never another dialect's
// files, and the shared layer imports no dialect. Otherwise a change to one dialect's shapes or params changes
// another's wire without anyone looking at it. biome.json says so with noRestrictedImports per dialect.

/** `biome lint` with the repository's configuration on the given files (path → source); the rules each file breaks. */
async function lintTree(files: Record<string, string>): Promise<Record<string, string[]>> {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-lint-'))
  try {
    copyFileSync(join(root, 'biome.json'), join(dir, 'biome.json'))
    for (const [path, source] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true })
      writeFileSync(join(dir, path), source)
    }
    const args = ['lint', '--reporter=json', '--vcs-enabled=false', ...Object.keys(files)]
    const result = await exec(biome, args, { cwd: dir }).catch((failure) => failure)
    const report = JSON.parse(result.stdout) as { diagnostics: Array<{ category: string; location: { path: string } }> }
    const found: Record<string, string[]> = Object.fromEntries(Object.keys(files).map((path) => [path, []]))
    for (const diagnostic of report.diagnostics) found[diagnostic.location.path]?.push(diagnostic.category)
    return found
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const bindings = 'runtime/src/bindings'

describe('the bindings layer rule', () => {
  it("finds a dialect importing another dialect's file, and the shared layer importing a dialect", async () => {
    const found = await lintTree({
      [`${bindings}/_v1.ts`]: "import { taskToV03 } from './_v03-shapes.js'\nexport const v1 = taskToV03\n",
      [`${bindings}/_push.ts`]: "import type { V1 } from './_v1-task.ts'\nexport type Push = V1\n",
      [`${bindings}/shared/_slash-methods.ts`]:
        "import { platformBinding } from '../_platform.js'\nexport const shared = platformBinding\n",
    })
    expect(found).toEqual({
      [`${bindings}/_v1.ts`]: ['lint/style/noRestrictedImports'],
      [`${bindings}/_push.ts`]: ['lint/style/noRestrictedImports'],
      [`${bindings}/shared/_slash-methods.ts`]: ['lint/style/noRestrictedImports'],
    })
  })

  it("finds nothing in a dialect that imports the shared layer, the core and its own dialect's files", async () => {
    const source = [
      "import { isSettled } from '../core/_lifecycle.js'",
      "import { taskToV03 } from './shared/_v03-shapes.js'",
      "import type { Frames } from './_v03-frames.ts'",
      'export const v03 = [isSettled, taskToV03]',
      'export type V03 = Frames',
      '',
    ].join('\n')
    expect(await lintTree({ [`${bindings}/_v03.ts`]: source })).toEqual({ [`${bindings}/_v03.ts`]: [] })
  })
})
