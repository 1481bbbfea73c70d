import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { packRuntime } from '../../generator/src/_runtime-pack.ts'

// From a clone, every generated project gets the runtime packed into its vendor/ folder. `npm pack` takes seconds,
// and a test run generates dozens of projects: the tarball is packed once per content and reused.

const made: string[] = []
const tarballs: string[] = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
  // The kept tarballs of this test's fake packages (the generator's own cache folder).
  const packs = join(tmpdir(), 'create-a2a-agent-runtime-packs')
  const names = tarballs.splice(0)
  for (const kept of existsSync(packs) ? readdirSync(packs) : []) {
    if (names.some((name) => kept.endsWith(name))) rmSync(join(packs, kept), { force: true })
  }
})

/** A tiny package like the runtime (`files: ["dist"]`), with content no other test run has. */
function fakeRuntime(): { dir: string; tarball: string } {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-pack-test-'))
  made.push(dir)
  const name = `pack-test-${Math.random().toString(36).slice(2)}`
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', files: ['dist'] }))
  mkdirSync(join(dir, 'dist'))
  writeFileSync(join(dir, 'dist/index.js'), 'export const version = 1\n')
  tarballs.push(`${name}-1.0.0.tgz`)
  return { dir, tarball: `${name}-1.0.0.tgz` }
}

/** What a tarball holds at a path, read by tar as a user would. */
function fileInTarball(bytes: Buffer, path: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-pack-read-'))
  made.push(dir)
  writeFileSync(join(dir, 'packed.tgz'), bytes)
  return execFileSync('tar', ['-xzOf', join(dir, 'packed.tgz'), `package/${path}`], { encoding: 'utf8' })
}

/** Runs `pack` where no `npm` can be found: only a kept tarball can answer. */
async function withoutNpm<T>(pack: () => Promise<T>): Promise<T> {
  const path = process.env.PATH
  process.env.PATH = mkdtempSync(join(tmpdir(), 'a2a-no-npm-'))
  made.push(process.env.PATH)
  try {
    return await pack()
  } finally {
    process.env.PATH = path
  }
}

describe('the packed runtime', () => {
  it('is packed once: the same content is answered again without running npm', async () => {
    const { dir, tarball } = fakeRuntime()
    const first = await packRuntime(dir, tarball)
    expect(fileInTarball(first, 'dist/index.js')).toBe('export const version = 1\n')
    const again = await withoutNpm(() => packRuntime(dir, tarball))
    expect(again.equals(first)).toBe(true)
  })

  it('is packed again when a packed file changes, and holds the new content', async () => {
    const { dir, tarball } = fakeRuntime()
    await packRuntime(dir, tarball)
    writeFileSync(join(dir, 'dist/index.js'), 'export const version = 2\n')
    await expect(withoutNpm(() => packRuntime(dir, tarball))).rejects.toThrow()
    expect(fileInTarball(await packRuntime(dir, tarball), 'dist/index.js')).toBe('export const version = 2\n')
  })

  it('is packed again when a file is added to a packed folder', async () => {
    const { dir, tarball } = fakeRuntime()
    await packRuntime(dir, tarball)
    writeFileSync(join(dir, 'dist/extra.js'), 'export {}\n')
    expect(fileInTarball(await packRuntime(dir, tarball), 'dist/extra.js')).toBe('export {}\n')
  })
})
