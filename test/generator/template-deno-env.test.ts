import { execFile } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, type Workspace, workspace } from './template-support.ts'

/**
 * A Deno project's `deno task start`, run by Deno on the generated deno.json and src/ without an install: a
 * stand-in `a2a-runtime` in node_modules whose serveAgent prints the settings the server was started with.
 */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const deno = join(repoRoot, 'test-runtimes/node_modules/.bin/deno')
const exec = promisify(execFile)

let space: Workspace
let project: string

beforeAll(async () => {
  assertBuilt()
  space = workspace('a2a-deno-env-')
  project = await space.generate('on-deno', ['--runtime', 'deno', '--auth', 'bearer'])
  const runtime = join(project, 'node_modules/a2a-runtime')
  mkdirSync(runtime, { recursive: true })
  writeFileSync(
    join(runtime, 'package.json'),
    JSON.stringify({ name: 'a2a-runtime', version: '0.0.0', type: 'module', exports: './index.js' }),
  )
  writeFileSync(
    join(runtime, 'index.js'),
    [
      'export const defineAgent = (agent) => agent',
      'export async function serveAgent() {',
      '  console.log(JSON.stringify({ token: process.env.A2A_BEARER_TOKEN ?? null, level: process.env.A2A_LOG_LEVEL ?? null }))',
      '}',
    ].join('\n'),
  )
}, 120_000)

afterAll(() => space?.remove())

/** `deno task start` in the project: what the stand-in printed and what Deno said on stderr. */
async function start(
  env: NodeJS.ProcessEnv = {},
): Promise<{ settings: { token: string | null; level: string | null }; stderr: string }> {
  const { stdout, stderr } = await exec(deno, ['task', 'start'], {
    cwd: project,
    env: {
      HOME: process.env.HOME,
      PATH: `${dirname(deno)}${delimiter}${process.env.PATH ?? ''}`,
      NO_COLOR: '1',
      DENO_NO_UPDATE_CHECK: '1',
      ...env,
    },
    timeout: 60_000,
  })
  return { settings: JSON.parse(stdout.trim().split('\n').at(-1)!), stderr }
}

describe('deno task start', () => {
  it('reads .env before the server starts, the environment winning over it', async () => {
    const token = /^A2A_BEARER_TOKEN=(.+)$/m.exec(space.read(project, '.env'))![1]
    writeFileSync(join(project, '.env'), `${space.read(project, '.env')}A2A_LOG_LEVEL=debug\n`)
    expect((await start()).settings).toEqual({ token, level: 'debug' })
    expect((await start({ A2A_LOG_LEVEL: 'warn' })).settings).toEqual({ token, level: 'warn' })
  }, 120_000)

  it('starts without a word when there is no .env (Deno warned on every start: .env not found)', async () => {
    rmSync(join(project, '.env'))
    const { settings, stderr } = await start()
    expect(settings).toEqual({ token: null, level: null })
    expect(stderr).not.toMatch(/warning|not found/i)
  }, 120_000)
})
