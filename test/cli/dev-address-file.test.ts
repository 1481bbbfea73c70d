import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { publishDevAddress } from '../../runtime/src/dev/_address.ts'

const folders: string[] = []
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true })
})

describe('publishDevAddress', () => {
  it('leaves no temporary file behind when the address cannot be put in place', () => {
    const root = mkdtempSync(join(tmpdir(), 'a2a-publish-'))
    folders.push(root)
    // A folder (not empty) where the file goes: the rename over it fails.
    mkdirSync(join(root, '.a2a/dev.json'), { recursive: true })
    writeFileSync(join(root, '.a2a/dev.json/keep'), '')
    const address = publishDevAddress(root, 'http://127.0.0.1:3000/')
    expect(readdirSync(join(root, '.a2a'))).toEqual(['dev.json'])
    address.remove()
    expect(readdirSync(join(root, '.a2a/dev.json'))).toEqual(['keep'])
  })
})
