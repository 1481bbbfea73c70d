import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { get as httpGet } from 'node:http'
import { connect } from 'node:net'
import { fileURLToPath } from 'node:url'
import { type A2AServer, serveAgent } from 'a2a-runtime'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../_support.ts'
import { gatedAgent } from './_agents.ts'
import { captureLogger } from './_logger.ts'
import { eventReader } from './_sse.ts'

const FIXTURE = fileURLToPath(new URL('../fixtures/serve-agent.mjs', import.meta.url))
const DIST_INDEX = fileURLToPath(new URL('../../runtime/dist/index.js', import.meta.url))

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Rejects with `what` when `promise` takes longer than `ms`, so no wait in this suite is unbounded. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`Timed out after ${ms} ms: ${what}`)), ms)),
  )
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** Opens a TCP connection to the port and says whether it was accepted or refused. */
function tryConnect(port: number): Promise<'connected' | 'refused' | string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' })
    socket.once('connect', () => {
      socket.destroy()
      resolve('connected')
    })
    socket.once('error', (error: NodeJS.ErrnoException) =>
      resolve(error.code === 'ECONNREFUSED' ? 'refused' : `error ${error.code}`),
    )
  })
}

/** GETs a path with a Host header of our choosing (fetch will not send one), returning the parsed JSON. */
function getWithHost(url: string, path: string, host: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const request = httpGet(new URL(path, url), { headers: { host } }, (response) => {
      let body = ''
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
      response.on('end', () => {
        try {
          resolve(JSON.parse(body))
        } catch (error) {
          reject(error)
        }
      })
    })
    request.on('error', reject)
  })
}

const streamBody = (text: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 'stream',
    method: 'message/stream',
    params: { message: { role: 'user', messageId: `m-${Math.random()}`, parts: [{ kind: 'text', text }] } },
  })

const sendBody = (text: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 'send',
    method: 'message/send',
    params: { message: { role: 'user', messageId: `m-${Math.random()}`, parts: [{ kind: 'text', text }] } },
  })

const summary = (event: any): string =>
  event.method === 'tasks/statusUpdate'
    ? `status:${event.params.status.state}`
    : `artifact:${event.params.artifact.parts[0].text}`

/** Reads a live SSE body to its end; a connection cut midway is returned as `error`, not thrown. */
async function readRest(events: ReturnType<typeof eventReader>): Promise<{ events: any[]; error?: unknown }> {
  const got: any[] = []
  try {
    for (;;) {
      const event = await events.next()
      if (event === undefined) return { events: got }
      got.push(event)
    }
  } catch (error) {
    return { events: got, error }
  }
}

// --- the agent as a real process ------------------------------------------------------------------------

interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
  /** `Date.now()` when the test process saw the exit. */
  at: number
}

interface AgentProcess {
  child: ChildProcess
  pid: number
  url: string
  port: number
  exited: Promise<Exit>
  stdout(): string
  stderr(): string
  /** The `tasks <json>` line the fixture prints at exit: every task it ran and its final state. */
  finalStates(): Record<string, string> | undefined
  waitForStderr(pattern: RegExp, ms?: number): Promise<void>
}

const children: ChildProcess[] = []

/** Every child a test spawned is killed by its PID after that test if it is still alive. */
afterEach(async () => {
  await Promise.all(
    children.splice(0).map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
      const gone = new Promise((resolve) => child.once('exit', resolve))
      process.kill(child.pid, 'SIGKILL')
      await within(gone, 5_000, `child ${child.pid} to die after SIGKILL`)
    }),
  )
})

async function startAgentProcess(env: Record<string, string> = {}): Promise<AgentProcess> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ['PORT', 'HOST', 'GRACE', 'OMIT_PORT', 'A2A_LOG_LEVEL']) delete childEnv[name]
  const child = spawn(process.execPath, [FIXTURE], { env: { ...childEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  )
  // Wait for the stream to end too, so the `tasks` line printed at exit has been read.
  const closed = new Promise<Exit>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, at: Date.now() })),
  )
  let exitedEarly = false
  void exited.then(() => (exitedEarly = true))

  const deadline = Date.now() + 8_000
  const printedUrl = () => /^url (\S+)$/m.exec(stdout)
  while (!printedUrl()) {
    if (exitedEarly) throw new Error(`The fixture exited before listening.\nstdout: ${stdout}\nstderr: ${stderr}`)
    if (Date.now() > deadline) throw new Error(`The fixture did not print its url within 8 s.\nstderr: ${stderr}`)
    await sleep(10)
  }
  const url = printedUrl()![1]!
  return {
    child,
    pid: child.pid!,
    url,
    port: Number(new URL(url).port),
    exited: exited.then(async (exit) => {
      await within(closed, 5_000, 'the fixture stdio to close')
      return exit
    }),
    stdout: () => stdout,
    stderr: () => stderr,
    finalStates() {
      const line = /^tasks (.+)$/m.exec(stdout)
      return line ? JSON.parse(line[1]!) : undefined
    },
    async waitForStderr(pattern, ms = 8_000) {
      const until = Date.now() + ms
      while (!pattern.test(stderr)) {
        if (Date.now() > until) throw new Error(`stderr never matched ${pattern} within ${ms} ms:\n${stderr}`)
        await sleep(5)
      }
    },
  }
}

async function openStream(url: string, text: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: streamBody(text),
  })
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toBe('text/event-stream')
  return eventReader(response)
}

describe('serveAgent as a process', () => {
  beforeAll(() => {
    if (!existsSync(DIST_INDEX)) {
      throw new Error(
        `${DIST_INDEX} is missing: the fixture process imports the built a2a-runtime. Run \`npm run build\` (npm test does) first.`,
      )
    }
  })

  it('on SIGTERM lets a running streamed task finish: the stream gets its remaining events up to completed, new connections are refused, and the process exits 0', async () => {
    // A grace far longer than the task, so a slow machine never turns the task's finish into a failure.
    const agent = await startAgentProcess({ GRACE: '60000' })
    const events = await openStream(agent.url, 'slow:1200')
    const first = await within(events.next(), 8_000, 'the first stream event')
    expect(summary(first)).toBe('status:working')
    const taskId = first.params.taskId

    const signalAt = Date.now()
    process.kill(agent.pid, 'SIGTERM')
    await agent.waitForStderr(/SIGTERM: shutting down/)
    // The listening socket stays open while the task drains (it needs 1.2 s, and its stream goes on below), then
    // closes (health-shutdown.test.ts checks what is answered meanwhile).
    await expect.poll(() => tryConnect(agent.port), { interval: 20, timeout: 5_000 }).toBe('refused')

    const rest = await within(readRest(events), 10_000, 'the rest of the stream')
    expect(rest.error).toBeUndefined()
    const all = [first, ...rest.events]
    expect(all.map(summary)).toEqual([
      'status:working',
      'status:working',
      'artifact:done slow:1200',
      'status:completed',
    ])
    const last = all.at(-1)
    expect(last.params).toMatchObject({ taskId, final: true })
    // The answer was produced after the signal: the task really ran through the shutdown.
    expect(Date.parse(last.params.status.timestamp)).toBeGreaterThanOrEqual(signalAt - 50)

    const exit = await within(agent.exited, 10_000, 'the process to exit after SIGTERM')
    expect(exit).toMatchObject({ code: 0, signal: null })
    // What the process held when it exited: the task had completed before the exit.
    expect(agent.finalStates()).toEqual({ [taskId]: 'completed' })
  })

  it('on SIGTERM fails a task that outlives the grace period: the stream ends with failed "server shut down" and the process exits 0 soon after', async () => {
    const agent = await startAgentProcess({ GRACE: '300' })
    const events = await openStream(agent.url, 'never')
    const first = await within(events.next(), 8_000, 'the first stream event')
    expect(summary(first)).toBe('status:working')
    const taskId = first.params.taskId

    const signalAt = Date.now()
    process.kill(agent.pid, 'SIGTERM')
    const rest = await within(readRest(events), 10_000, 'the rest of the stream')
    expect(rest.error).toBeUndefined()
    const last = rest.events.at(-1)
    expect(last?.method).toBe('tasks/statusUpdate')
    expect(last.params).toMatchObject({ taskId, final: true, status: { state: 'failed' } })
    expect(last.params.status.message.parts[0].text).toMatch(/server shut down/i)
    // Nothing but progress came before the final status.
    expect(
      rest.events
        .slice(0, -1)
        .map(summary)
        .every((s) => s === 'status:working'),
    ).toBe(true)

    const exit = await within(agent.exited, 10_000, 'the process to exit after SIGTERM')
    expect(exit).toMatchObject({ code: 0, signal: null })
    const elapsed = exit.at - signalAt
    // The task had its grace period before it was failed.
    expect(elapsed).toBeGreaterThanOrEqual(250)
    expect(agent.finalStates()).toEqual({ [taskId]: 'failed' })
  })

  it('on SIGINT shuts down like SIGTERM: an idle server exits 0 promptly', async () => {
    // Promptly: without waiting out a grace period (a minute here) that only running tasks would need.
    const agent = await startAgentProcess({ GRACE: '60000' })
    expect((await fetch(new URL('.well-known/agent.json', agent.url))).status).toBe(200)
    process.kill(agent.pid, 'SIGINT')
    const exit = await within(agent.exited, 10_000, 'the process to exit after SIGINT')
    expect(exit).toMatchObject({ code: 0, signal: null })
    expect(agent.stderr()).toMatch(/SIGINT: shutting down/)
    expect(agent.finalStates()).toEqual({})
  })

  it('listens on the PORT environment variable when the port option is absent', async () => {
    const port = await freePort()
    const agent = await startAgentProcess({ PORT: String(port), OMIT_PORT: '1' })
    expect(agent.url).toBe(`http://127.0.0.1:${port}/`)
    const card = await (await fetch(`http://127.0.0.1:${port}/.well-known/agent.json`)).json()
    expect(card.url).toBe(`http://127.0.0.1:${port}/`)
    const reply = await (
      await fetch(agent.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: sendBody('hi') })
    ).json()
    expect(reply.result.status.state).toBe('completed')
  })
})

// --- the in-process API ---------------------------------------------------------------------------------

describe('serveAgent in process', () => {
  const cleanups: Array<() => Promise<void> | void> = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  async function serveGated() {
    const gated = gatedAgent({ cancelable: false })
    const logger = captureLogger()
    const server: A2AServer = await serveAgent(gated.agent, {
      port: 0,
      hostname: '127.0.0.1',
      handleSignals: false,
      logger,
      shutdownTimeoutMs: 60_000,
    })
    // Release before closing, so a failed test never waits out the grace period.
    cleanups.push(() => server.close())
    cleanups.push(() => gated.release())
    return { ...gated, server, logger }
  }

  it('resolves with the listening url http://127.0.0.1:<port>/, which the card advertises, and installs no signal handlers', async () => {
    const sigterm = process.listenerCount('SIGTERM')
    const sigint = process.listenerCount('SIGINT')
    const { server } = await serveGated()
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
    expect(server.port).toBeGreaterThan(0)
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/`)
    const response = await fetch(new URL('.well-known/agent.json', server.url))
    expect(response.status).toBe(200)
    const card = await response.json()
    expect(card.url).toBe(server.url)
    // The listening address, not whatever origin the request named (another name of this machine: a foreign one is
    // refused).
    expect((await getWithHost(server.url, '/.well-known/agent.json', 'localhost:9999')).url).toBe(server.url)
    expect(process.listenerCount('SIGTERM')).toBe(sigterm)
    expect(process.listenerCount('SIGINT')).toBe(sigint)
  })

  it('close() turns /readyz to 503 at once, keeps the listener open while the task drains, resolves after it finished and then refuses connections', async () => {
    const { server, started, release, seen } = await serveGated()
    const sending = fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: sendBody('hold'),
    }).catch((error: unknown) => error)
    const taskId = await within(started, 8_000, 'the agent to start')

    let closed = false
    const closing = server.close().then(() => (closed = true))
    // Out of rotation, yet still answering while the task drains (a platform may route here a moment longer).
    const readiness = await fetch(`${server.url}readyz`)
    expect(readiness.status).toBe(503)

    // A later answer from the app itself: it refuses a new task, as it does only while close() waits.
    const late = await server.app.fetch(
      new Request(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: sendBody('late'),
      }),
    )
    expect(late.status).toBe(503)
    expect(closed).toBe(false)
    expect((await server.app.store.get(taskId))?.status.state).toBe('working')

    release()
    await within(closing, 8_000, 'close() to resolve after the task finished')
    expect(closed).toBe(true)
    expect(await tryConnect(server.port)).toBe('refused')
    // Finished by the agent, not failed or aborted by the shutdown.
    expect(seen.aborted).toBe(false)
    const task = await server.app.store.get(taskId)
    expect(task?.status.state).toBe('completed')
    expect(task?.artifacts[0]?.parts).toEqual([{ kind: 'text', text: 'finished' }])
    await sending
  })

  it('close() still delivers the answer of a blocking send whose task finishes during the grace period', async () => {
    const { server, started, release } = await serveGated()
    const sending = fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: sendBody('hold'),
    }).then(
      async (response) => ({ status: response.status, body: await response.json() }),
      (error: unknown) => ({ error }),
    )
    await within(started, 8_000, 'the agent to start')
    const closing = server.close()
    // close() has begun: the server is out of rotation.
    expect((await fetch(`${server.url}readyz`)).status).toBe(503)
    release()
    await within(closing, 8_000, 'close() to resolve')
    const reply = await within(sending, 8_000, 'the blocking send to answer')
    expect(reply).not.toHaveProperty('error')
    expect(reply).toMatchObject({ status: 200, body: { result: { status: { state: 'completed' } } } })
  })
})
