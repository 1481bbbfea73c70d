import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readdirSync, readlinkSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { connect } from 'node:net'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, expect, it } from 'vitest'

const demo = fileURLToPath(new URL('../examples/demo.mjs', import.meta.url))

interface DemoRun {
  child: ChildProcess
  stdout(): string
  stderr(): string
  /** Resolves with the matching stdout once it appears; rejects at once if the demo exits first, or past `ms`. */
  waitFor(pattern: RegExp, ms: number): Promise<RegExpMatchArray>
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

const running = new Set<ChildProcess>()
const holders: Array<() => Promise<void>> = []

afterEach(async () => {
  // Only for a test that failed midway: a SIGTERM lets the demo stop what it started and remove its folder.
  for (const child of running) {
    if (child.exitCode !== null || child.signalCode !== null) continue
    const gone = new Promise((resolve) => child.once('exit', resolve))
    process.kill(child.pid!, 'SIGTERM')
    const timer = setTimeout(() => process.kill(child.pid!, 'SIGKILL'), 30_000)
    await gone
    clearTimeout(timer)
  }
  running.clear()
  for (const close of holders.splice(0)) await close()
})

function runDemo(args: string[], env: Record<string, string>): DemoRun {
  const child = spawn(process.execPath, [demo, ...args], {
    env: { ...process.env, HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  let stdout = ''
  let stderr = ''
  const listeners = new Set<() => void>()
  child.stdout!.on('data', (chunk) => {
    stdout += chunk
    for (const listener of listeners) listener()
  })
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  )
  const waitFor = (pattern: RegExp, ms: number) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = stdout.match(pattern)
        if (match) done(() => resolve(match))
      }
      const done = (settle: () => void) => {
        clearTimeout(timer)
        listeners.delete(check)
        settle()
      }
      const timer = setTimeout(
        () =>
          done(() => reject(new Error(`no ${pattern} in the demo's output within ${ms} ms:\n${stdout}\n${stderr}`))),
        ms,
      )
      listeners.add(check)
      void exited.then(() =>
        done(() => reject(new Error(`the demo exited before printing ${pattern}:\n${stdout}\n${stderr}`))),
      )
      check()
    })
  return { child, stdout: () => stdout, stderr: () => stderr, waitFor, exited }
}

/** Another program on a port of 127.0.0.1, answering every request with `answer`; counts the requests. */
async function holdPort(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ port: number; requests: () => number }> {
  let requests = 0
  const server = createServer((req, res) => {
    requests++
    answer(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  holders.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return { port: (server.address() as { port: number }).port, requests: () => requests }
}

/** The temporary folder the demo says it generates into (the first thing it prints). */
const workspaceOf = (stdout: string): string => dirname(stdout.match(/^\$ npx create-a2a-agent (\S+) /m)![1]!)
const nameOf = (stdout: string): string => stdout.match(/--name '([^']+)'/)![1]!

/** Processes whose working directory is inside `folder` (the generator's npm install, the agent). */
function processesIn(folder: string): string[] {
  const found: string[] = []
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      if (readlinkSync(`/proc/${pid}/cwd`).startsWith(folder)) found.push(pid)
    } catch {}
  }
  return found
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })

const STACK_LINE = /^\s+at /m

it("runs the README's main job on a port another agent holds: its own agent on a free port answers message/send and message/stream; the folder goes", {
  timeout: 240_000,
}, async () => {
  const otherAgent = await holdPort((_req, res) =>
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ name: 'Someone Else', url: 'http://127.0.0.1/' })),
  )
  const run = runDemo(['--once'], { PORT: String(otherAgent.port) })
  const { code } = await run.exited
  const stdout = run.stdout()
  expect(code, run.stderr()).toBe(0)
  expect(stdout).toMatch(/create-a2a-agent .* --template streaming --name 'Demo Agent [0-9a-f]{6}' --yes/)
  const moved = stdout.match(
    new RegExp(`Port ${otherAgent.port} is in use by another program; the demo uses port (\\d+) instead`),
  )
  expect(moved).not.toBeNull()
  expect(stdout).toContain(`GET http://127.0.0.1:${moved![1]}/.well-known/agent.json`)
  expect(stdout).toContain(`name: '${nameOf(stdout)}'`)
  expect(stdout).not.toContain('Someone Else')
  expect(otherAgent.requests()).toBe(0)
  expect(stdout).toMatch(/state: 'completed'/)
  const frames = stdout
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)))
  expect(frames[0].params.status.state).toBe('working')
  expect(frames.at(-1).params.status.state).toBe('completed')
  const streamed = frames
    .filter((f) => f.method === 'tasks/artifactUpdate')
    .map((f) => f.params.artifact.parts[0].text)
    .join('')
  expect(streamed).toBe('Stream heard: streams arrive word by word')
  expect(run.stderr()).not.toMatch(STACK_LINE)
  expect(existsSync(workspaceOf(stdout))).toBe(false)
})

it('shows the card whole, a skill\'s tags joined; takes the "npm start" step itself and ends on a next step that fits', {
  timeout: 240_000,
}, async () => {
  const run = runDemo(['--once'], { PORT: '0' })
  const { code } = await run.exited
  const stdout = run.stdout()
  expect(code, run.stderr()).toBe(0)
  const card = stdout.split(/^GET .*\/\.well-known\/agent\.json$/m)[1]!.split(/^message\/send /m)[0]!
  expect(card).toMatch(/^\s+tags: streaming,?$/m)
  expect(card).not.toMatch(/\[(Array|Object)\]/)
  // The generator's own "Next:" (cd, npm install, npm run dev) is not what the demo does: it runs npm start.
  const [generated, served] = stdout.split(/^\$ cd \S+ && PORT=\d+ npm start$/m)
  expect(served).toBeDefined()
  expect(generated).toMatch(/^Created demo-agent in /m)
  expect(generated).not.toMatch(/^Next:|npm run dev|localhost:3000/m)
  expect(served!.trimEnd().split('\n').at(-1)).toBe(
    'Next, an agent of your own: npx create-a2a-agent my-agent, then npm run dev in it (it reloads as you edit src/agent.ts).',
  )
})

it('stopped with Ctrl-C once its agent serves, on a port a non-A2A server holds: no stack, the agent stopped, the folder gone', {
  timeout: 240_000,
}, async () => {
  const webServer = await holdPort((_req, res) =>
    res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not here</h1>'),
  )
  const run = runDemo([], { PORT: String(webServer.port) })
  const [, port] = await run.waitFor(/^GET http:\/\/127\.0\.0\.1:(\d+)\/\.well-known\/agent\.json$/m, 200_000)
  const workspace = workspaceOf(run.stdout())
  expect(existsSync(workspace)).toBe(true)
  process.kill(run.child.pid!, 'SIGINT')
  const { code } = await run.exited
  expect([0, 130], run.stderr()).toContain(code)
  expect(run.stderr()).not.toMatch(STACK_LINE)
  expect(run.stdout()).not.toContain('Not here')
  expect(webServer.requests()).toBe(0)
  expect(existsSync(workspace)).toBe(false)
  expect(processesIn(workspace)).toEqual([])
  expect(await accepts(Number(port))).toBe(false)
})

for (const [signal, code] of [
  ['SIGTERM', 143],
  ['SIGHUP', 129],
] as const) {
  it(`stopped by ${signal} while it installs the agent: the install is stopped and the folder gone`, {
    timeout: 60_000,
  }, async () => {
    const run = runDemo(['--once'], { PORT: '0' })
    await run.waitFor(/^Installing dependencies/m, 45_000)
    const workspace = workspaceOf(run.stdout())
    process.kill(run.child.pid!, signal)
    expect((await run.exited).code).toBe(code)
    expect(run.stderr()).toContain(`demo: stopped by ${signal}; cleaning up`)
    expect(run.stderr()).not.toMatch(STACK_LINE)
    expect(existsSync(workspace)).toBe(false)
    expect(processesIn(workspace)).toEqual([])
  })
}

it('refuses a PORT that is not a port number in one line, before creating anything', async () => {
  const run = runDemo(['--once'], { PORT: 'eighty' })
  const { code } = await run.exited
  expect(code).toBe(1)
  expect(run.stderr().trim()).toBe('demo: PORT must be a port number (got "eighty")')
  expect(run.stdout()).toBe('')
})
