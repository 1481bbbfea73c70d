import { type ChildProcess, spawn } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Script } from 'node:vm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { requireFromCodeCache } from '../../runtime/src/cli/_code-cache.ts'
import { a2aBin, makeAgentProject } from '../_support.ts'

// Node 20 compiles every module anew at each start: jiti's 190 KB core (which a2a start loads for the agent's
// TypeScript) is compiled from V8's code cache, kept in the temporary folder, once an earlier start left it.

const require = createRequire(import.meta.url)
const cleanups: Array<() => void> = []
const running = new Set<ChildProcess>()

afterEach(() => {
  vi.restoreAllMocks()
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  running.clear()
  for (const cleanup of cleanups.splice(0).reverse()) cleanup()
})

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const codeCaches = (temp: string): string[] => {
  try {
    return readdirSync(join(temp, 'a2a-code-cache'))
  } catch {
    return []
  }
}

/** The environment without NODE_DISABLE_COMPILE_CACHE, which turns this cache off too. */
function withoutCompileCacheSwitch(): NodeJS.ProcessEnv {
  const { NODE_DISABLE_COMPILE_CACHE: _, ...env } = process.env
  return env
}

/** Sets TMPDIR to a new temporary folder for this test (and unsets NODE_DISABLE_COMPILE_CACHE), which it answers. */
function inTempDir(prefix: string): string {
  const temp = tempDir(prefix)
  const previous = { TMPDIR: process.env.TMPDIR, NODE_DISABLE_COMPILE_CACHE: process.env.NODE_DISABLE_COMPILE_CACHE }
  process.env.TMPDIR = temp
  delete process.env.NODE_DISABLE_COMPILE_CACHE
  cleanups.push(() => {
    for (const [name, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  })
  return temp
}

/** Writes `source` to `file` and loads it as a2a start loads jiti: through the code cache, then require, then save. */
function loadThroughCache<T>(file: string, source: string) {
  writeFileSync(file, source)
  delete require.cache[file]
  const compiled = requireFromCodeCache(file)
  const loaded = require(file) as T
  compiled?.save()
  return { compiled, loaded }
}

/** Starts `a2a start` in `project` with `temp` as its temporary folder, waits for its card, stops it. */
async function startOnce(project: string, temp: string): Promise<void> {
  const child = spawn(process.execPath, [a2aBin, 'start'], {
    cwd: project,
    env: { ...withoutCompileCacheSwitch(), PORT: '0', HOST: '127.0.0.1', TMPDIR: temp },
  })
  running.add(child)
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
  await expect.poll(() => output, { timeout: 30_000 }).toMatch(/listening on (http:\/\/\S+\/)|a2a: /)
  const url = /listening on (http:\/\/\S+\/)/.exec(output)?.[1]
  if (!url) throw new Error(`a2a start did not start: ${output}`)
  expect((await (await fetch(new URL('.well-known/agent-card.json', url))).json()).name).toBe('Cached')
  child.kill('SIGTERM')
  expect(await exited).toBe(0)
  // Node's loader for the cached code's import() warns (experimental) only when used: jiti's core never calls it.
  expect(output).not.toMatch(/Warning/)
}

const AGENT_TS = `import { defineAgent } from 'a2a-runtime'
export default defineAgent({
  card: { name: 'Cached', description: 'Echoes' },
  execute(ctx, task) { task.artifact(ctx.text); task.complete() },
})
`

// On Node 22 and later a2a start turns Node's own compile cache on, and this one then does nothing: the start is
// tested on Node 20 only (which the test suites run on), the cache's own behaviour on any Node (below).
const onNode20 = process.versions.node.startsWith('20.')

describe("jiti's code from V8's code cache", () => {
  it.runIf(onNode20)(
    'a2a start leaves it in the temporary folder, and starts with it, or with a broken one, all the same',
    async () => {
      const project = makeAgentProject('a2a-code-cache-', AGENT_TS)
      cleanups.push(() => rmSync(project, { recursive: true, force: true }))
      const temp = tempDir('a2a-code-cache-tmp-')
      await startOnce(project, temp)
      const [cached] = codeCaches(temp)
      expect(cached).toMatch(/^jiti\.cjs-[0-9a-f]{32}$/)
      await startOnce(project, temp)
      // Garbage where the cache was: V8 refuses it, the start compiles and leaves a good one again.
      writeFileSync(join(temp, 'a2a-code-cache', cached!), 'not a code cache')
      await startOnce(project, temp)
      expect(codeCaches(temp)).toEqual([cached])
    },
  )

  it('never runs the code an earlier content left, even at the same length', () => {
    const temp = inTempDir('a2a-code-cache-unit-')
    const file = join(temp, 'module.cjs')
    const load = (word: string) => {
      const source = `module.exports = { word: ${JSON.stringify(word)}, shout: () => ${JSON.stringify(word)} }\n`
      const { compiled, loaded } = loadThroughCache<{ word: string; shout(): string }>(file, source)
      return { compiled, said: [loaded.word, loaded.shout()] }
    }
    expect(load('first').said).toEqual(['first', 'first'])
    expect(load('first').compiled).toBeDefined()
    expect(load('other').said).toEqual(['other', 'other'])
    expect(codeCaches(temp)).toHaveLength(2)
  })

  it('keeps its folder private, and is not used from a folder others can write', () => {
    const temp = inTempDir('a2a-code-cache-mode-')
    const file = join(temp, 'module.cjs')
    expect(loadThroughCache(file, 'module.exports = 1\n').compiled).toBeDefined()
    expect(statSync(join(temp, 'a2a-code-cache')).mode & 0o777).toBe(0o700)

    const shared = inTempDir('a2a-code-cache-shared-')
    mkdirSync(join(shared, 'a2a-code-cache'))
    chmodSync(join(shared, 'a2a-code-cache'), 0o777)
    const { compiled, loaded } = loadThroughCache(join(shared, 'module.cjs'), 'module.exports = 2\n')
    expect([compiled, loaded]).toEqual([undefined, 2])
    expect(codeCaches(shared)).toEqual([])
  })

  it('leaves no partial file when the cache cannot be renamed into place', () => {
    const temp = inTempDir('a2a-code-cache-rename-')
    const file = join(temp, 'module.cjs')
    loadThroughCache(file, 'module.exports = 3\n')
    const [cached] = codeCaches(temp)
    // A folder where the cache goes: it cannot be read, nor the new cache renamed onto it.
    rmSync(join(temp, 'a2a-code-cache', cached!))
    mkdirSync(join(temp, 'a2a-code-cache', cached!, 'inside'), { recursive: true })
    expect(loadThroughCache(file, 'module.exports = 3\n').loaded).toBe(3)
    expect(codeCaches(temp)).toEqual([cached])
  })

  it('never throws when saving, the module loaded', () => {
    const file = join(inTempDir('a2a-code-cache-throw-'), 'module.cjs')
    vi.spyOn(Script.prototype, 'createCachedData').mockImplementation(() => {
      throw new Error('out of memory')
    })
    expect(loadThroughCache(file, 'module.exports = 4\n').loaded).toBe(4)
  })

  it("loads a module whose import( works, from its code cache too (Node's loader, relative to it)", async () => {
    const temp = inTempDir('a2a-code-cache-import-')
    const file = join(temp, 'module.cjs')
    writeFileSync(join(temp, 'beside.mjs'), 'export const word = "beside"\n')
    const source = "module.exports = { later: () => import('./beside.mjs').then((beside) => beside.word) }\n"
    for (const round of ['compiled', 'from its cache']) {
      const { compiled, loaded } = loadThroughCache<{ later(): Promise<string> }>(file, source)
      expect(compiled, round).toBeDefined()
      expect(await loaded.later(), round).toBe('beside')
    }
    expect(codeCaches(temp)).toHaveLength(1)
  })

  it.each(['1', '0', ''])('is off with NODE_DISABLE_COMPILE_CACHE=%j, as Node’s own', (value) => {
    const temp = inTempDir('a2a-code-cache-off-')
    process.env.NODE_DISABLE_COMPILE_CACHE = value
    expect(loadThroughCache(join(temp, 'module.cjs'), 'module.exports = 5\n').compiled).toBeUndefined()
    expect(codeCaches(temp)).toEqual([])
  })
})
