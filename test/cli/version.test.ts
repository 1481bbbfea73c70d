import type { ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { afterEach, expect, it } from 'vitest'
import { runA2a } from '../_support.ts'

/** `a2a` answers the same version flags as `create-a2a-agent`: -v, -V and --version, each printing only the version. */

const { version } = JSON.parse(readFileSync(new URL('../../runtime/package.json', import.meta.url), 'utf8')) as {
  version: string
}
const running = new Set<ChildProcess>()

afterEach(() => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
  running.clear()
})

it.each(['--version', '-v', '-V'])('a2a %s prints just the version and exits 0', async (flag) => {
  const result = await runA2a([flag], { cwd: tmpdir(), env: process.env, running })
  expect(result.stderr).toBe('')
  expect(result.code).toBe(0)
  expect(result.stdout).toBe(`${version}\n`)
})

it('a2a --help lists -v, --version', async () => {
  const result = await runA2a(['--help'], { cwd: tmpdir(), env: process.env, running })
  expect(result.code).toBe(0)
  expect(result.stdout).toMatch(/^\s+-v, --version\s/m)
})
