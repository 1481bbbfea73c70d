import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { requireFromCodeCache } from '../../runtime/src/cli/_code-cache.ts'
import { makeAgentProject } from '../_support.ts'

// Node 20 compiles every module anew at each start: jiti's 190 KB core (which a2a start loads for the agent's
// TypeScript) is compiled from V8's code cache, kept in the temporary folder, once an earlier start left it.

const a2aBin = fileURLToPath(new URL('../../runtime/bin/a2a.mjs', import.meta.url))
const require = createRequire(import.meta.url)
const cleanups: Array<() => void> = []
const running = new Set<ChildProcess>()

afterEach(() => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  running.clear()
  for (const cleanup of cleanups.splice(0)) cleanup()
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

/** Starts `a2a start` in `project` with `temp` as its temporary folder, waits for its card, stops it. */
async function startOnce(project: string, temp: string): Promise<void> {
  const child = spawn(process.execPath, [a2aBin, 'start'], {
    cwd: project,
    // NODE_COMPILE_CACHE off: on Node 22 and later Node's own cache would stand in for this one.
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', TMPDIR: temp, NODE_DISABLE_COMPILE_CACHE: '1' },
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
}

const AGENT_TS = `import { defineAgent } from 'a2a-runtime'
export default defineAgent({
  card: { name: 'Cached', description: 'Echoes' },
  execute(ctx, task) { task.artifact(ctx.text); task.complete() },
})
`

describe("jiti's code from V8's code cache", () => {
  it('a2a start leaves it in the temporary folder, and starts with it, or with a broken one, all the same', async () => {
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
  })

  it('never runs the code an earlier content left, even at the same length', () => {
    const temp = tempDir('a2a-code-cache-unit-')
    const previous = process.env.TMPDIR
    process.env.TMPDIR = temp
    cleanups.push(() => {
      if (previous === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = previous
    })
    const file = join(temp, 'module.cjs')
    const load = (word: string) => {
      writeFileSync(file, `module.exports = { word: ${JSON.stringify(word)}, shout: () => ${JSON.stringify(word)} }\n`)
      delete require.cache[file]
      const compiled = requireFromCodeCache(file)
      const loaded = require(file) as { word: string; shout(): string }
      compiled?.save()
      return { compiled, said: [loaded.word, loaded.shout()] }
    }
    expect(load('first').said).toEqual(['first', 'first'])
    expect(load('first').compiled).toBeDefined()
    expect(load('other').said).toEqual(['other', 'other'])
    expect(codeCaches(temp)).toHaveLength(2)
  })
})
