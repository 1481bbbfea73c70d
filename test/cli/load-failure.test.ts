import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { describeLoadFailure, explainLoadFailure } from '../../runtime/src/dev/_load-failure.ts'
import { a2aBin, freePort, makeAgentProject, runA2a } from '../_support.ts'

/** The location of a load failure, for project paths that stacks print as they are and file URLs percent-encode. */
describe('describeLoadFailure', () => {
  const root = '/home/ada/My Agents/wetter-äpp'
  const failure = (stack: string) =>
    Object.assign(new Error('config missing'), { stack: `Error: config missing\n${stack}` })

  it('finds the place in a path with spaces and non-ASCII letters', () => {
    expect(
      describeLoadFailure(
        failure(
          `    at ${root}/src/agent.ts:7:9\n    at async Function.import (/x/node_modules/jiti/dist/jiti.cjs:1:2)`,
        ),
        root,
      ),
    ).toBe('src/agent.ts:7:9 Error: config missing')
  })

  it('finds the place in a percent-encoded file URL', () => {
    const url = pathToFileURL(`${root}/src/tools/geo.mjs`).href
    expect(url).toContain('%20')
    expect(describeLoadFailure(failure(`    at loadGeo (${url}:12:3)`), root)).toBe(
      'src/tools/geo.mjs:12:3 Error: config missing',
    )
  })

  it("skips the project's node_modules and other folders", () => {
    const stack = `    at ${root}/node_modules/lib/index.js:1:1\n    at /elsewhere/src/agent.ts:2:2\n    at ${root}/src/agent.ts:3:4`
    expect(describeLoadFailure(failure(stack), root)).toBe('src/agent.ts:3:4 Error: config missing')
  })

  it('finds the place in a project that itself lives under a node_modules folder', () => {
    const nested = '/srv/node_modules/some-tool/fixtures/agent'
    const stack = `    at ${nested}/node_modules/lib/index.js:1:1\n    at ${nested}/src/agent.ts:5:6`
    expect(describeLoadFailure(failure(stack), nested)).toBe('src/agent.ts:5:6 Error: config missing')
  })
})

describe('explainLoadFailure: the frame', () => {
  const dirs: string[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  const frameOf = (source: string, line: number, column: number) => {
    const root = mkdtempSync(join(tmpdir(), 'a2a-frame-'))
    dirs.push(root)
    writeFileSync(join(root, 'agent.ts'), source)
    const error = Object.assign(new Error('boom'), { stack: `Error: boom\n    at ${root}/agent.ts:${line}:${column}` })
    return explainLoadFailure(error, root)
  }

  it('keeps tabs before the column, so the caret lines up in a terminal', () => {
    expect(frameOf('a\n\t\tcall(x)\n', 2, 8)).toEqual({
      summary: 'agent.ts:2:8 Error: boom',
      frame: '  2 | \t\tcall(x)\n    | \t\t     ^',
    })
  })

  it('shows a long line around the column, cut on both sides', () => {
    const long = `${'a'.repeat(300)}X${'b'.repeat(300)}`
    const { frame } = frameOf(long, 1, 301)
    const [shown, caret] = frame.split('\n')
    expect(shown!.length).toBeLessThan(140)
    expect(shown).toMatch(/^ {2}1 \| …a+Xb+…$/)
    expect(shown![caret!.indexOf('^')]).toBe('X')
  })

  it('has no frame when the line is not in the file', () => {
    expect(frameOf('one line\n', 9, 1).frame).toBe('')
  })
})

/** `a2a start` and `a2a dev` on a module that does not load: where, 1-based as editors count, and the line itself. */
describe('a load failure on the console', () => {
  const running = new Set<ChildProcess>()
  const projects: string[] = []
  afterEach(() => {
    for (const child of running) if (child.exitCode === null) process.kill(child.pid!, 'SIGKILL')
    for (const project of projects.splice(0)) rmSync(project, { recursive: true, force: true })
  })
  const project = (source: string) => {
    const dir = makeAgentProject('a2a-load-failure-', source)
    projects.push(dir)
    return dir
  }
  const env = { ...process.env, PORT: '0', HOST: '127.0.0.1' }
  // Line 6, and the `;` babel stops at is the 15th character: column 15, where editors put the cursor.
  const syntaxError = `import { defineAgent } from 'a2a-runtime'

export default defineAgent({
  card: { name: 'Broken', description: 'Does not parse' },
  execute(ctx, task) {
    const x = ;
    task.complete()
  },
})
`

  it('a2a start names a syntax error at its 1-based line and column, under a frame of the line with a caret', async () => {
    const { code, stderr } = await runA2a(['start'], { cwd: project(syntaxError), env, running })
    expect(code).toBe(1)
    const lines = stderr.trimEnd().split('\n')
    expect(lines[0]).toBe('a2a: src/agent.ts:6:15 ParseError: Unexpected token')
    expect(lines.slice(1)).toEqual(['  6 |     const x = ;', '    |               ^'])
    expect(lines[2]!.indexOf('^') - '    | '.length + 1).toBe(15)
  })

  it('a2a start frames a throw at import at the column the stack names', async () => {
    const { code, stderr } = await runA2a(['start'], {
      cwd: project("const ready = false\nif (!ready) throw new Error('config missing')\n"),
      env,
      running,
    })
    expect(code).toBe(1)
    const lines = stderr.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^a2a: src\/agent\.ts:2:(\d+) Error: config missing$/)
    const column = Number(/:2:(\d+) /.exec(lines[0]!)![1])
    expect(lines[1]).toBe("  2 | if (!ready) throw new Error('config missing')")
    expect(lines[2]).toBe(`    | ${' '.repeat(column - 1)}^`)
    expect(stderr).not.toMatch(/^\s+at /m)
  })

  it('a2a dev logs the frame under its one line, and keeps the JSON-RPC error to that line', async () => {
    const port = await freePort()
    const child = spawn(process.execPath, [a2aBin, 'dev'], {
      cwd: project(syntaxError),
      env: { ...env, PORT: String(port) },
    })
    running.add(child)
    let output = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    await expect.poll(() => output, { timeout: 15_000 }).toContain('Dev server at')
    expect(output).toContain(
      'The agent failed to load: src/agent.ts:6:15 ParseError: Unexpected token. Fix it and save; the server keeps running.\n  6 |     const x = ;\n    |               ^\n',
    )
    const response = await fetch(`http://127.0.0.1:${port}/.well-known/agent.json`)
    expect(response.status).toBe(503)
    expect((await response.json()).error.message).toBe(
      'The agent failed to load: src/agent.ts:6:15 ParseError: Unexpected token',
    )
  })
})
