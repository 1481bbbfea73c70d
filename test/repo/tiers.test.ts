import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { TIERS } from '../tiers.ts'

// The suite is split into tiers (test/tiers.ts) so the inner loop runs in a minute; the full `npm test` still runs
// every tier. A test file in no tier would silently never run, one in two would run twice: vitest itself is asked.

const root = fileURLToPath(new URL('../..', import.meta.url))
const exec = promisify(execFile)

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name === 'fixtures') return []
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return testFiles(path)
    return entry.name.endsWith('.test.ts') ? [relative(root, path)] : []
  })
}

describe('the test tiers', () => {
  it('put every test file in exactly one tier', async () => {
    const { stdout } = await exec(join(root, 'node_modules/.bin/vitest'), ['list', '--filesOnly', '--json'], {
      cwd: root,
    })
    const listed = (JSON.parse(stdout) as Array<{ file: string; projectName: string }>).map(
      ({ file, projectName }) => ({
        file: relative(root, file),
        tier: projectName,
      }),
    )
    const tiersOf = new Map<string, string[]>()
    for (const { file, tier } of listed) tiersOf.set(file, [...(tiersOf.get(file) ?? []), tier])
    const files = testFiles(join(root, 'test'))
    expect(files.length).toBeGreaterThan(50)
    expect(
      files.filter((file) => tiersOf.get(file)?.length !== 1).map((file) => `${file}: ${tiersOf.get(file) ?? 'none'}`),
    ).toEqual([])
    expect([...new Set(listed.map(({ tier }) => tier))].sort()).toEqual(TIERS.map(({ name }) => name).sort())
  })

  it('each have a script, and `npm test` runs them all', () => {
    const scripts = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts
    expect(scripts['test:fast']).toBe('vitest run --project unit')
    for (const { name } of TIERS.filter(({ name }) => name !== 'unit'))
      expect(scripts[`test:${name}`]).toMatch(new RegExp(`vitest run --project ${name}$`))
    expect(scripts.test).toMatch(/&& vitest run$/)
  })
})
