import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import prompts from 'prompts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type CliIo, run } from '../../generator/src/cli.ts'

/**
 * `--deploy` at a terminal: the multi-select (docker chosen until changed), and an earlier run's targets read back
 * from its files, so a project generated with them is continued rather than refused. The questions are answered
 * through `prompts.inject`, in the order they are asked.
 */

const injected = prompts as unknown as { _injected?: unknown[] }

let cwd: string
let out: string[]
let err: string[]
let io: CliIo

beforeEach(() => {
  cwd = mkdtempSync(join(realpathSync(tmpdir()), 'a2a-deploy-prompts-'))
  out = []
  err = []
  io = { cwd, interactive: true, out: (text) => out.push(text), err: (text) => err.push(text) }
})

afterEach(() => {
  injected._injected = undefined
  rmSync(cwd, { recursive: true, force: true })
})

/** Every answer after the directory, as asked for a Node project, with `deploy` for the multi-select. */
const answers = (deploy: unknown) => [
  'Weather',
  'Tells the weather',
  'echo',
  'node',
  true,
  false,
  'none',
  deploy,
  false,
  false,
]

const has = (path: string) => existsSync(join(cwd, 'weather', path))

describe('the deploy question', () => {
  it('writes the targets chosen, and what the command would have been', { timeout: 60_000 }, async () => {
    prompts.inject(['weather', ...answers(['k8s', 'fly'])])
    expect(await run(['--no-install', '--no-git'], io)).toBe(0)
    expect(injected._injected ?? []).toEqual([])
    expect(err).toEqual([])
    expect([has('Dockerfile'), has('k8s/deployment.yaml'), has('fly.toml'), has('service.yaml')]).toEqual([
      true,
      true,
      true,
      false,
    ])
    expect(out.join('\n')).toContain(' --deploy docker,k8s,fly ')
  })

  it('takes nothing chosen as no target: no Dockerfile', { timeout: 60_000 }, async () => {
    prompts.inject(['weather', ...answers([])])
    expect(await run(['--no-install', '--no-git'], io)).toBe(0)
    expect(has('Dockerfile')).toBe(false)
    expect(out.join('\n')).toContain(' --deploy none ')
  })

  it('continues a project an earlier run made with --deploy, asking nothing but the directory', {
    timeout: 60_000,
  }, async () => {
    expect(
      await run(['weather', '--deploy', 'agentcore', '--deploy', 'k8s', '--yes', '--no-install', '--no-git'], io),
    ).toBe(0)
    out = []
    // A second answer would be taken by a question: "cancel" stops the run if anything else is asked.
    prompts.inject(['weather', 'cancel'])
    expect(await run(['--no-install', '--no-git'], io)).toBe(0)
    expect(injected._injected).toEqual(['cancel'])
    expect(out.join('\n')).toMatch(/^Continuing in .*weather: it holds this project from an earlier run/m)
    expect(out.join('\n')).toContain(' --deploy docker,agentcore,k8s ')
  })
})
