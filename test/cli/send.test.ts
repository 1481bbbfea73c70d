import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server as HttpServer } from 'node:http'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type CommandResult, freePort, makeAgentProject, runA2a } from '../_support.ts'

const runtimeDir = fileURLToPath(new URL('../../runtime', import.meta.url))
const a2aBin = join(runtimeDir, 'bin/a2a.mjs')

/** The environment without anything that would pick the agent or credentials for the CLI. */
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(PORT|HOST|A2A_)/.test(key)),
) as Record<string, string>

const TOKEN = 'send-test-token-7f3a'

/**
 * Streams "Weather in <city>: sunny" in three append chunks after a progress status; asks "Which city?" on
 * "ask" and answers the follow-up naming the city; fails on "fail"; echoes the skill id it was asked for;
 * on "story" sends progress between the pieces of a one-line answer; on "hang" says it is working and never ends.
 */
const agentSource = (authentication = '') => `import { defineAgent } from 'a2a-runtime'

const pause = () => new Promise((resolve) => setTimeout(resolve, 15))

export default defineAgent({
  card: {
    name: 'Send Fixture',
    description: 'Streams a weather answer in chunks, for a2a send tests',
    capabilities: { streaming: true },
    skills: [
      { id: 'forecast', name: 'Forecast', description: 'The forecast for a city', tags: ['weather'], examples: ['Oslo'] },
      { id: 'alerts', name: 'Alerts', description: 'Weather alerts for a city', tags: ['weather'], examples: ['Oslo'] },
    ],${authentication}
  },
  async execute(ctx, task) {
    if (ctx.text === 'fail') {
      task.fail('No forecast today')
      return
    }
    if (ctx.text === 'story') {
      // Progress between the pieces of one line of the answer.
      const id = task.artifact('Once upon ', { lastChunk: false })
      task.working('Choosing a hero')
      await pause()
      task.artifact('a time, ', { artifactId: id, append: true, lastChunk: false })
      task.working('Choosing an ending')
      await pause()
      task.artifact('the end.', { artifactId: id, append: true, lastChunk: true })
      task.complete()
      return
    }
    if (ctx.text === 'hang') {
      // Runs until its server is killed.
      task.working('Holding on')
      await new Promise(() => {})
    }
    if (ctx.text === 'ask') {
      task.inputRequired('Which city?')
      return
    }
    const asked = ctx.history.some((m) => m.role === 'agent' && m.parts.some((p) => p.kind === 'text' && p.text === 'Which city?'))
    const skill = ctx.message.metadata?.skillId
    task.working('Looking up the forecast')
    await pause()
    const id = task.artifact(asked ? 'You answered ' : 'Weather in ', { lastChunk: false })
    await pause()
    task.artifact(ctx.text, { artifactId: id, append: true, lastChunk: false })
    await pause()
    task.artifact(': sunny' + (typeof skill === 'string' ? ' [skill ' + skill + ']' : ''), { artifactId: id, append: true, lastChunk: true })
    task.complete()
  },
})
`

interface Server {
  child: ChildProcess
  project: string
  port: number
  url: string
}

const temporaryDirs: string[] = []
const runs = new Set<ChildProcess>()
let open: Server
let locked: Server

function makeProject(source: string): string {
  const project = makeAgentProject('a2a-send-', source)
  temporaryDirs.push(project)
  return project
}

/** `a2a start` in a fixture project on a free port of 127.0.0.1; resolves once it listens. */
async function startAgent(source: string, env: Record<string, string> = {}): Promise<Server> {
  const project = makeProject(source)
  const port = await freePort()
  const child = spawn(process.execPath, [a2aBin, 'start'], {
    cwd: project,
    env: { ...cleanEnv, PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`a2a start did not listen within 15 s: ${output}`)), 15_000)
    const look = () => {
      if (!output.includes('listening on')) return
      clearTimeout(timer)
      resolve()
    }
    child.stdout!.on('data', look)
    child.stderr!.on('data', look)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`a2a start exited with ${code}: ${output}`))
    })
  })
  return { child, project, port, url: `http://127.0.0.1:${port}/` }
}

async function stop(server: Server | undefined): Promise<void> {
  const child = server?.child
  if (!child || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  process.kill(child.pid!, 'SIGKILL')
  await exited
}

beforeAll(async () => {
  ;[open, locked] = await Promise.all([
    startAgent(agentSource()),
    startAgent(agentSource("\n    authentication: { schemes: ['bearer'] },"), { A2A_BEARER_TOKEN: TOKEN }),
  ])
})

afterEach(() => {
  for (const child of runs)
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
  runs.clear()
})

afterAll(async () => {
  await Promise.all([stop(open), stop(locked)])
  for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true })
})

/** Runs `a2a send ...` without a TTY to its end (killed by PID past 10 s). */
const send = (
  args: string[],
  { cwd = open.project, env = {} }: { cwd?: string; env?: Record<string, string> } = {},
): Promise<CommandResult> => runA2a(['send', ...args], { cwd, env: { ...cleanEnv, ...env }, running: runs })

const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at /)

/**
 * An agent on 127.0.0.1 that streams one working status of task "cut-task" and then destroys the socket, as a
 * server that dies mid-stream does.
 */
async function cuttingAgent(): Promise<{ url: string; close(): Promise<void> }> {
  const server: HttpServer = createServer((request, response) => {
    if (request.method === 'GET') {
      response.setHeader('content-type', 'application/json')
      response.end(JSON.stringify({ name: 'Cut Fixture', capabilities: { streaming: true } }))
      return
    }
    request.resume()
    request.once('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      const status = { state: 'working', message: { role: 'agent', parts: [{ kind: 'text', text: 'Thinking' }] } }
      const event = {
        jsonrpc: '2.0',
        method: 'tasks/statusUpdate',
        params: { taskId: 'cut-task', contextId: 'cut-context', status, final: false },
      }
      response.write(`data: ${JSON.stringify(event)}\n\n`, () => setTimeout(() => response.socket?.destroy(), 50))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

describe('a2a send', () => {
  it('streams the answer to stdout as it arrives, with progress and the outcome on stderr, and exits 0', async () => {
    const { code, stdout, stderr } = await send(['Oslo', '--url', open.url])
    expect(stdout).toBe('Weather in Oslo: sunny\n')
    expect(stderr).toContain(`→ Send Fixture at ${open.url} (streaming)\n`)
    expect(stderr).toContain('… Looking up the forecast')
    expect(stderr).toMatch(/✓ completed \(task [\w-]+\)/)
    expect(stderr.indexOf('… Looking up the forecast')).toBeLessThan(stderr.indexOf('✓ completed'))
    expect(code).toBe(0)
  })

  it('keeps stdout exactly the answer when progress arrives between its pieces; progress waits for the line to end on stderr', async () => {
    const { code, stdout, stderr } = await send(['story', '--url', open.url])
    expect(stdout).toBe('Once upon a time, the end.\n')
    expect(stderr).toContain('… Choosing an ending\n')
    expect(stderr.indexOf('… Choosing an ending')).toBeLessThan(stderr.indexOf('✓ completed'))
    expect(code).toBe(0)
  })

  it('keeps each line whole when stdout and stderr go to the same file (2>&1)', async () => {
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(a2aBin)} send story --url ${open.url} 2>&1`
    const child = spawn('sh', ['-c', command], { cwd: open.project, env: cleanEnv, stdio: ['ignore', 'pipe', 'pipe'] })
    runs.add(child)
    let output = ''
    child.stdout!.on('data', (chunk) => (output += chunk))
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
    expect(output.split('\n')).toContain('Once upon a time, the end.')
    expect(code).toBe(0)
  })

  // tmux renders what a person sees: stdout and stderr on one terminal screen.
  it.skipIf(!existsSync('/usr/bin/tmux'))(
    'on a terminal shows the answer unbroken, with no progress left on the screen',
    async () => {
      const socket = `a2a-send-${process.pid}-${Date.now()}`
      const tmux = (...args: string[]) =>
        execFileSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { env: cleanEnv, encoding: 'utf8' })
      const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(a2aBin)} send story --url ${open.url}; echo "exit $?"; sleep 60`
      tmux('new-session', '-d', '-s', 'send', '-x', '100', '-y', '20', '-c', open.project, command)
      try {
        await expect.poll(() => tmux('capture-pane', '-p', '-t', 'send'), { timeout: 10_000 }).toMatch(/^exit \d+$/m)
        const screen = tmux('capture-pane', '-p', '-t', 'send')
          .split('\n')
          .map((line) => line.trimEnd())
        expect(screen).toContain('Once upon a time, the end.')
        expect(screen.join('\n')).not.toContain('Choosing')
        expect(screen).toContain('exit 0')
      } finally {
        tmux('kill-server')
      }
    },
  )

  it('with --no-stream waits for the whole answer via message/send and prints the same text', async () => {
    const { code, stdout, stderr } = await send(['Oslo', '--no-stream', '--url', open.url])
    expect(stdout).toBe('Weather in Oslo: sunny\n')
    expect(stderr).toContain(`→ Send Fixture at ${open.url}\n`)
    expect(stderr).not.toContain('(streaming)')
    expect(stderr).not.toContain('Looking up the forecast')
    expect(stderr).toMatch(/✓ completed \(task [\w-]+\)/)
    expect(code).toBe(0)

    // The raw result is the one Task message/send answers, not a stream of events.
    const raw = await send(['Oslo', '--no-stream', '--json', '--url', open.url])
    const lines = raw.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(1)
    const task = JSON.parse(lines[0]!)
    expect(task.kind).toBe('task')
    expect(task.status.state).toBe('completed')
    expect(task.artifacts[0].parts.map((p: { text: string }) => p.text).join('')).toBe('Weather in Oslo: sunny')
  })

  it('with --no-stream prints the reply of an agent that answers with a message (A2A v0.3 dialect: a Message, no task) and exits 0', async () => {
    const replier = await startAgent(
      `import { defineAgent } from 'a2a-runtime'
export default defineAgent({
  card: { name: 'Reply Fixture', description: 'Answers with a message' },
  messageReplies: true,
  execute: (ctx, task) => task.reply('Hello, ' + ctx.text),
})
`,
      { A2A_DIALECT: 'a2a-0.3' },
    )
    try {
      const { code, stdout, stderr } = await send(['Oslo', '--no-stream', '--url', replier.url])
      expect(stdout).toBe('Hello, Oslo\n')
      expect(stderr).toContain('✓ completed (a message, no task)')
      expect(code).toBe(0)
    } finally {
      await stop(replier)
    }
  })

  it('with --json prints the raw stream events as JSON lines, ending with the completed status', async () => {
    const { code, stdout, stderr } = await send(['Oslo', '--json', '--url', open.url])
    expect(code).toBe(0)
    expect(stderr).toBe('')
    expect(stdout.endsWith('\n')).toBe(true)
    const events = stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { method: string; params: any })
    const statuses = events.filter((event) => event.method === 'tasks/statusUpdate')
    expect(statuses.at(-1)!.params.status.state).toBe('completed')
    expect(statuses.at(-1)!.params.final).toBe(true)
    const chunks = events
      .filter((event) => event.method === 'tasks/artifactUpdate')
      .map((event) => event.params.artifact.parts[0].text)
    expect(chunks).toEqual(['Weather in ', 'Oslo', ': sunny'])
  })

  it('exits 1 and says "failed" on stderr when the task fails', async () => {
    const { code, stdout, stderr } = await send(['fail', '--url', open.url])
    expect(stderr).toMatch(/✗ failed: No forecast today \(task [\w-]+\)/)
    expect(stdout).toBe('')
    expect(code).toBe(1)
  })

  it('without a TTY prints the question and how to answer it, exits 0, and the follow-up with --task completes the same task', async () => {
    const asked = await send(['ask', '--url', open.url])
    expect(asked.code).toBe(0)
    expect(asked.stdout).toBe('')
    expect(asked.stderr).toContain('? Which city?')
    const hint = /a2a send "<answer>" --task (\S+)/.exec(asked.stderr)
    expect(hint).not.toBeNull()
    const taskId = hint![1]!

    const answered = await send(['Paris', '--task', taskId, '--url', open.url])
    expect(answered.stdout).toBe('You answered Paris: sunny\n')
    expect(answered.stderr).toContain(`✓ completed (task ${taskId})`)
    expect(answered.code).toBe(0)
  })

  // `script` gives the command a pseudo-terminal, as a person's shell would.
  it.skipIf(!existsSync('/usr/bin/script'))(
    'on a TTY asks the question, reads the answer and completes the same task',
    async () => {
      const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(a2aBin)} send ask --url ${open.url}`
      const child = spawn('script', ['-qec', command, '/dev/null'], {
        cwd: open.project,
        env: cleanEnv,
        stdio: ['pipe', 'pipe', 'pipe'],
      })
      runs.add(child)
      let output = ''
      child.stdout!.on('data', (chunk) => (output += chunk))
      await expect.poll(() => output, { timeout: 10_000 }).toContain('? Which city?')
      child.stdin!.write('Paris\n')
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
      runs.delete(child)
      expect(output).toContain('You answered Paris: sunny')
      expect(output).toMatch(/✓ completed \(task [\w-]+\)/)
      expect(output).not.toContain('answer with:')
      expect(code).toBe(0)
    },
  )

  it('with --skill puts metadata.skillId on the message', async () => {
    const { code, stdout } = await send(['Oslo', '--skill', 'alerts', '--url', open.url])
    expect(stdout).toBe('Weather in Oslo: sunny [skill alerts]\n')
    expect(code).toBe(0)
  })

  describe('against a bearer-protected agent', () => {
    it("without a token exits 1 with the agent's Unauthorized error in one line", async () => {
      const { code, stdout, stderr } = await send(['Oslo', '--url', locked.url])
      expect(code).toBe(1)
      expect(stdout).toBe('')
      expect(stderr).toMatch(/Unauthorized|401/)
      expect(stderr).not.toContain('✓')
      noStack(stderr)
    })

    it('with --token sends it as a bearer token and gets the answer', async () => {
      const { code, stdout, stderr } = await send(['Oslo', '--token', TOKEN, '--url', locked.url])
      expect(stdout).toBe('Weather in Oslo: sunny\n')
      expect(stderr).toContain('✓ completed')
      expect(code).toBe(0)
    })

    it('without a TTY suggests an answer command carrying the credential flags given, as placeholders, which completes the task once filled in', async () => {
      const asked = await send(['ask', '--token', TOKEN, '--api-key', 'key-9c1e', '--url', locked.url])
      expect(asked.code).toBe(0)
      expect(asked.stderr).not.toContain(TOKEN)
      expect(asked.stderr).not.toContain('key-9c1e')
      const hint = new RegExp(
        `answer with: a2a send "<answer>" --task (\\S+) --url ${locked.url} --token <your token> --api-key <your API key>\n`,
      ).exec(asked.stderr)
      expect(hint, asked.stderr).not.toBeNull()
      const taskId = hint![1]!

      const answered = await send([
        'Paris',
        '--task',
        taskId,
        '--url',
        locked.url,
        '--token',
        TOKEN,
        '--api-key',
        'key-9c1e',
      ])
      expect(answered.stdout).toBe('You answered Paris: sunny\n')
      expect(answered.code).toBe(0)
    })

    it("reads the token from the project's .env when it is nowhere else", async () => {
      const envFile = join(locked.project, '.env')
      writeFileSync(envFile, `A2A_BEARER_TOKEN=${TOKEN}\n`)
      try {
        const { code, stdout } = await send(['Oslo', '--url', locked.url], { cwd: locked.project })
        expect(stdout).toBe('Weather in Oslo: sunny\n')
        expect(code).toBe(0)
      } finally {
        rmSync(envFile, { force: true })
      }
    })
  })

  it('without --url reaches the local server on PORT', async () => {
    const { code, stdout, stderr } = await send(['Oslo'], { env: { PORT: String(open.port) } })
    expect(stdout).toBe('Weather in Oslo: sunny\n')
    expect(stderr).toContain(`→ Send Fixture at http://localhost:${open.port}/ (PORT=${open.port}, streaming)`)
    expect(code).toBe(0)
  })

  it('says in one line, without a stack trace, that the stream was cut, naming the task and how to go on, and exits 1', async () => {
    const agent = await cuttingAgent()
    try {
      const { code, stdout, stderr } = await send(['Oslo', '--url', agent.url])
      expect(code).toBe(1)
      expect(stdout).toBe('')
      noStack(stderr)
      const last = stderr.trimEnd().split('\n').at(-1)!
      expect(last).toMatch(/^a2a: The stream from .* was cut/)
      expect(last).toContain('task cut-task')
      expect(last).toContain(`a2a send "<message>" --task cut-task --url ${agent.url}`)
      expect(stderr.match(/^a2a: /gm)).toHaveLength(1)
    } finally {
      await agent.close()
    }
  })

  it('says in one line, without a stack trace, that the stream was cut when the agent process is killed mid-stream, and exits 1', async () => {
    const doomed = await startAgent(agentSource())
    try {
      const child = spawn(process.execPath, [a2aBin, 'send', 'hang', '--url', doomed.url], {
        cwd: doomed.project,
        env: cleanEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      runs.add(child)
      let stderr = ''
      child.stderr!.on('data', (chunk) => (stderr += chunk))
      const code = new Promise<number | null>((resolve) => child.once('close', resolve))
      await expect.poll(() => stderr, { timeout: 10_000 }).toContain('… Holding on')
      await stop(doomed)
      expect(await code).toBe(1)
      noStack(stderr)
      expect(stderr.trimEnd().split('\n').at(-1)).toMatch(
        new RegExp(
          `^a2a: The stream from .* was cut .*task ([\\w-]+) was working.*a2a send "<message>" --task \\1 --url ${doomed.url}$`,
        ),
      )
    } finally {
      await stop(doomed)
    }
  })

  it('says "Cannot reach …" in one line, without a stack trace, and exits 1 when nothing listens', async () => {
    const port = await freePort()
    const { code, stdout, stderr } = await send(['Oslo', '--url', `http://127.0.0.1:${port}/`])
    expect(code).toBe(1)
    expect(stdout).toBe('')
    expect(stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(stderr).toMatch(new RegExp(`^a2a: Cannot reach http://127\\.0\\.0\\.1:${port}/`))
    // Another agent, named by --url: starting this project's dev server would not bring it up.
    expect(stderr).not.toContain('npm run dev')
    noStack(stderr)
  })

  it('suggests starting the dev server when the local agent it chose does not answer', async () => {
    const port = await freePort()
    const { code, stderr } = await send(['Oslo'], { env: { PORT: String(port) } })
    expect(code).toBe(1)
    expect(stderr).toMatch(
      new RegExp(`^a2a: Cannot reach http://localhost:${port}/.*start it with \`npm run dev\``, 'm'),
    )
    noStack(stderr)
  })
})
