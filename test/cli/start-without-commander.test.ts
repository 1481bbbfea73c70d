import { type ChildProcess, spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { START_OPTIONS } from '../../runtime/src/cli/_start-flags.ts'
import { a2aBin, makeAgentProject } from '../_support.ts'

// `a2a start` with plain arguments is served without commander (a cold start pays for every module it reads);
// anything else still goes through commander, which says what it always said. Run on the built runtime.

const commanderProbe = fileURLToPath(new URL('./_commander-loaded.cjs', import.meta.url))

const AGENT_TS = `import { defineAgent } from 'a2a-runtime'

export default defineAgent({
  card: { name: 'Plain Start', description: 'Echoes' },
  execute(ctx, task) {
    task.artifact(ctx.text)
    task.complete()
  },
})
`

let project: string
const running = new Set<ChildProcess>()

beforeEach(() => {
  project = makeAgentProject('a2a-plain-start-', AGENT_TS)
})

afterEach(() => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  running.clear()
  rmSync(project, { recursive: true, force: true })
})

/** `a2a start <args>` in the project, commander's loading reported on stderr as the process exits. */
function start(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--require', commanderProbe, a2aBin, 'start', ...args], {
    cwd: project,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', NODE_OPTIONS: '', ...env },
  })
  running.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk) => (stdout += chunk))
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
  const output = () => stdout + stderr
  const listening = async (): Promise<string> => {
    await expect.poll(output, { timeout: 30_000 }).toMatch(/listening on http:\/\/\S+\//)
    return /listening on (http:\/\/\S+\/)/.exec(output())![1]!
  }
  return { child, exited, listening, stdout: () => stdout, stderr: () => stderr, output }
}

describe('a2a start without commander', () => {
  it('serves the agent with every option given plainly and never loads commander', async () => {
    const server = start([
      'src/agent.ts',
      '--port=0',
      '-H',
      '127.0.0.1',
      '--public-url',
      'https://agents.example/plain/',
      '--log-level',
      'info',
      '--log-format',
      'json',
      '--request-log',
      'info',
    ])
    const url = await server.listening()
    const card = await (await fetch(new URL('.well-known/agent-card.json', url))).json()
    expect(card.name).toBe('Plain Start')
    // --public-url reached the card, --log-format json the log lines, --request-log info the request's line.
    expect(card.url).toMatch(/^https:\/\/agents\.example\/plain\//)
    await expect
      .poll(() => server.output())
      .toMatch(/"level":"info","message":"GET \/\.well-known\/agent-card\.json 200/)
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
    expect(server.stderr()).toContain('commander loaded: false\n')
  })

  it('says a bad value of a plain option in the one line commander-read options get, and exits 1', async () => {
    const server = start(['--log-level', 'loud'])
    expect(await server.exited).toBe(1)
    expect(server.stderr()).toBe(
      'a2a: --log-level must be one of debug, info, warn, error, silent (got "loud")\ncommander loaded: false\n',
    )
  })

  it('leaves --help, unknown options, missing values and extra arguments to commander, as before', async () => {
    const help = start(['--help'])
    expect(await help.exited).toBe(0)
    expect(help.stdout()).toMatch(/^Usage: a2a start \[options\] \[entry\]/)
    for (const option of START_OPTIONS) expect(help.stdout()).toContain(`--${option.long} <${option.value}>`)
    expect(help.stderr()).toContain('commander loaded: true\n')

    const unknown = start(['--bogus'])
    expect(await unknown.exited).toBe(2)
    expect(unknown.stderr()).toMatch(/^error: unknown option '--bogus'/)

    const missing = start(['--port'])
    expect(await missing.exited).toBe(2)
    expect(missing.stderr()).toMatch(/^error: option '-p, --port <port>' argument missing/)

    const extra = start(['src/agent.ts', 'src/other.ts'])
    expect(await extra.exited).toBe(2)
    expect(extra.stderr()).toMatch(/^error: too many arguments for 'start'/)
  })

  it('reads a value starting with a dash as commander does (commander reads it)', async () => {
    const server = start(['--port', '-1'])
    expect(await server.exited).toBe(1)
    expect(server.stderr()).toBe(
      'a2a: --port (PORT) must be a whole number from 0 to 65535 (got "-1")\ncommander loaded: true\n',
    )
  })
})
