import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import * as generator from '../../generator/src/index.ts'

// create-a2a-agent is a command; its package exports one way to run it from code. Options, templates and
// rendering are internal: exporting one of them is a decision made here, not an accident.

describe('the public API of create-a2a-agent', () => {
  it('exports run, and nothing else at run time', () => {
    expect(Object.keys(generator).sort()).toEqual(['run'])
  })

  it('exports the CliIo type beside it, and no other type', () => {
    const source = readFileSync(new URL('../../generator/src/index.ts', import.meta.url), 'utf8')
    expect(
      [...source.matchAll(/^export type \{([^}]*)\}/gm)].flatMap(([, names]) =>
        names!.split(',').map((name) => name.trim()),
      ),
    ).toEqual(['CliIo'])
    expect(source.match(/^export /gm)).toHaveLength(2)
  })

  it('runs the command: --version answers with the package version and exit code 0', async () => {
    const said: string[] = []
    const io = {
      cwd: process.cwd(),
      interactive: false,
      out: (text: string) => said.push(text),
      err: (text: string) => said.push(text),
    }
    const { version } = JSON.parse(readFileSync(new URL('../../generator/package.json', import.meta.url), 'utf8')) as {
      version: string
    }
    expect(await generator.run(['--version'], io)).toBe(0)
    expect(said.join('\n')).toContain(version)
  })
})
