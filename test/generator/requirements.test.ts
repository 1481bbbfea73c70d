import { type ChildProcess, spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { missingRequirements } from '../../generator/src/_requirements.ts'
import { resolveOptions } from '../../generator/src/options.ts'

/**
 * What the machine lacks for the chosen project, said in one line each before anything is written or installed:
 * a Node.js older than its dependencies declare, the Bun or Deno it runs on. The generator runs as a process with
 * the Node.js and the PATH of each case; --json puts its own lines on stderr too, so their order shows.
 */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const bin = join(repoRoot, 'generator/bin/create-a2a-agent.mjs')
/** A Node.js new enough for every template (test-runtimes/ installs it for wrangler). */
const node24 = join(repoRoot, 'test-runtimes/node_modules/node24/bin/node')

let cwd: string
const running = new Set<ChildProcess>()

beforeAll(() => {
  if (!existsSync(join(repoRoot, 'generator/dist/index.js')) || !existsSync(join(repoRoot, 'runtime/dist/index.js'))) {
    throw new Error('The generator and the runtime are not built: run `npm run build` first (the bin imports dist/).')
  }
  if (!existsSync(node24))
    throw new Error(`Node 24 is not installed (${node24} is missing): run \`npm install\` at the repository root`)
})

beforeEach(() => {
  cwd = mkdtempSync(join(realpathSync(tmpdir()), 'a2a-requirements-'))
})

afterEach(() => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL')
  running.clear()
  rmSync(cwd, { recursive: true, force: true })
})

/** The generator run by `node` with `path` as PATH (no install, no git): its exit code and stderr's lines. */
function generate(
  args: string[],
  { node = process.execPath, path = dirname(process.execPath) } = {},
): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn(node, [bin, ...args, '--yes', '--no-install', '--no-git', '--json'], {
    cwd,
    env: { HOME: process.env.HOME, PATH: path, npm_config_offline: 'true' },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  })
  running.add(child)
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, lines: stderr.split('\n') })))
}

/** A folder holding an executable `name` that does nothing: the runtime is on PATH. */
function fakeBinary(name: string): string {
  const folder = join(cwd, `bin-${name}`)
  mkdirSync(folder)
  writeFileSync(join(folder, name), '#!/bin/sh\nexit 0\n')
  chmodSync(join(folder, name), 0o755)
  return folder
}

const mentioning = (lines: string[], text: string) => lines.filter((line) => line.includes(text))

describe('the runtime the project runs on', () => {
  it.each([
    {
      runtime: 'bun',
      line: 'Bun is not installed (no bun on PATH)',
      todo: ['https://bun.sh', '`npm install --save-dev bun`'],
    },
    {
      runtime: 'deno',
      line: 'Deno is not installed (no deno on PATH)',
      todo: ['https://deno.com', '`npx deno task dev`'],
    },
  ])(
    '$runtime missing from PATH: one line saying how to get it, before the project is written',
    async ({ runtime, line, todo }) => {
      const { code, lines } = await generate(['agent', '--runtime', runtime])
      expect(code).toBe(0)
      const said = mentioning(lines, line)
      expect(said).toHaveLength(1)
      for (const text of todo) expect(said[0]).toContain(text)
      expect(lines.indexOf(said[0]!)).toBeLessThan(lines.findIndex((each) => each.startsWith('Created agent')))
      expect(lines.join('\n')).not.toMatch(/\n\s+at /)
    },
  )

  it.each(['bun', 'deno'])('%s on PATH: nothing said', async (runtime) => {
    const { code, lines } = await generate(['agent', '--runtime', runtime], {
      path: [fakeBinary(runtime), dirname(process.execPath)].join(delimiter),
    })
    expect(code).toBe(0)
    expect(mentioning(lines, 'not installed')).toEqual([])
    expect(lines.some((each) => each.startsWith('Created agent'))).toBe(true)
  })
})

describe('the Node.js running the generator', () => {
  it.each([
    { template: 'echo', runtime: 'workers', need: 'wrangler needs Node.js 22.12.0 or later' },
    { template: 'mastra', runtime: 'node', need: 'Mastra needs Node.js 22.22.0 or later' },
    { template: 'ai-sdk', runtime: 'bun', need: 'the AI SDK needs Node.js 22.0.0 or later' },
    { template: 'langgraph', runtime: 'node', need: '@langchain/openai needs Node.js 22.0.0 or later' },
  ])(
    'too old for the $template template on $runtime: one line saying which Node.js it needs and what to do',
    ({ template, runtime, need }) => {
      const options = resolveOptions({ dir: 'agent', template, runtime }, cwd)
      const problems = missingRequirements(options, { PATH: fakeBinary('bun') }, '20.19.0')
      expect(problems).toEqual([expect.stringContaining(`Node.js 20.19.0 is older than this project needs: ${need}`)])
      expect(problems[0]).toContain('install a newer Node.js (https://nodejs.org)')
      expect(problems[0]).not.toContain('\n')
    },
  )

  it('new enough: nothing said, at the exact version a dependency declares too', () => {
    const mastra = resolveOptions({ dir: 'agent', template: 'mastra' }, cwd)
    expect(missingRequirements(mastra, {}, '22.22.0')).toEqual([])
    expect(missingRequirements(mastra, {}, '22.21.9')).toHaveLength(1)
    expect(missingRequirements(resolveOptions({ dir: 'agent' }, cwd), {}, '20.19.0')).toEqual([])
    // Deno runs a Deno project: the Node.js that generates it does not matter.
    expect(
      missingRequirements(
        resolveOptions({ dir: 'agent', runtime: 'deno', template: 'mastra' }, cwd),
        { PATH: fakeBinary('deno') },
        '20.19.0',
      ),
    ).toEqual([])
  })

  it('a Workers project generated by this Node.js says so up front when it is older than 22.12, and Node 24 says nothing', async () => {
    const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
    const older = major < 22 || (major === 22 && minor < 12)
    const here = await generate(['here', '--runtime', 'workers'])
    expect(here.code).toBe(0)
    expect(mentioning(here.lines, 'wrangler needs Node.js 22.12.0 or later')).toHaveLength(older ? 1 : 0)
    const newer = await generate(['newer', '--runtime', 'workers'], { node: node24, path: dirname(node24) })
    expect(newer.code).toBe(0)
    expect(mentioning(newer.lines, 'is older than this project needs')).toEqual([])
    expect(newer.lines.some((each) => each.startsWith('Created newer'))).toBe(true)
  })
})
