import { type ChildProcess, spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { a2aBin, freePort, makeAgentProject } from '../_support.ts'

/**
 * `a2a dev` serves through listhen's own server: it gets the slow-client timeouts and connection caps of
 * `a2a start` (A2A_HEADERS_TIMEOUT_MS, A2A_REQUEST_TIMEOUT_MS, A2A_MAX_CONNECTIONS_PER_ADDRESS…), enforced on time.
 */

const source = `import { defineAgent } from 'a2a-runtime'
export default defineAgent({ card: { name: 'Dev Caps', description: 'Answers at once' }, execute(ctx, task) { task.artifact('ok'); task.complete() } })
`

/** Timeouts ten times apart: a cut near the first cannot be the second's, however slow the machine. */
const HEADERS_MS = 500
const REQUEST_MS = 5_000
const MIDDLE_MS = (HEADERS_MS + REQUEST_MS) / 2
const REQUEST_TIMEOUT_RESPONSE = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n'

let project: string
let child: ChildProcess | undefined
const sockets: Socket[] = []

beforeEach(() => {
  project = makeAgentProject('a2a-dev-caps-', source)
})

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy()
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve))
    process.kill(child.pid!, 'SIGKILL')
    await exited
  }
  child = undefined
  rmSync(project, { recursive: true, force: true })
})

async function startDev(env: Record<string, string>): Promise<{ port: number; output: () => string }> {
  const port = await freePort()
  child = spawn(process.execPath, [a2aBin, 'dev'], {
    cwd: project,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env },
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  await expect.poll(() => output, { timeout: 15_000 }).toContain('Dev server at')
  return { port, output: () => output }
}

interface Raw {
  socket: Socket
  received(): string
  /** ms from connecting to the close. */
  closed: Promise<number>
}

function raw(port: number, localAddress = '127.0.0.1'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const socket = connect({ host: '127.0.0.1', port, localAddress })
    sockets.push(socket)
    let received = ''
    socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk))
    const closed = new Promise<number>((done) => socket.once('close', () => done(performance.now() - started)))
    socket.once('error', reject)
    socket.once('connect', () => {
      socket.on('error', () => {})
      resolve({ socket, received: () => received, closed })
    })
  })
}

const cardRequest = 'GET /.well-known/agent.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'

describe('a2a dev bounds its connections like a2a start', () => {
  it('cuts a silent connection and a slowloris client after A2A_HEADERS_TIMEOUT_MS (not the longer request timeout), with a 408, and keeps serving', async () => {
    const { port } = await startDev({
      A2A_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
      A2A_REQUEST_TIMEOUT_MS: String(REQUEST_MS),
    })
    const silent = await raw(port)
    const trickling = await raw(port)
    let sent = 0
    const headers = `GET /.well-known/agent.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'a'.repeat(10_000)}`
    const trickle = setInterval(() => !trickling.socket.destroyed && trickling.socket.write(headers[sent++]!), 20)
    try {
      // Bounded: listhen's server alone (60 s headers timeout, checked every 30 s) would cut neither in time.
      const within = (closed: Promise<number>) =>
        Promise.race([closed, new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), 20_000))])
      const [silentMs, tricklingMs] = await Promise.all([within(silent.closed), within(trickling.closed)])
      console.log(
        `a2a dev, headers timeout ${HEADERS_MS} ms: silent connection cut after ${silentMs.toFixed(0)} ms, slowloris after ${tricklingMs.toFixed(0)} ms (${sent} bytes sent)`,
      )
      for (const elapsed of [silentMs, tricklingMs]) {
        expect(elapsed).toBeGreaterThanOrEqual(HEADERS_MS - 20)
        expect(elapsed).toBeLessThan(MIDDLE_MS)
      }
      expect(sent).toBeGreaterThan(5)
      expect(silent.received()).toBe(REQUEST_TIMEOUT_RESPONSE)
      expect(trickling.received()).toBe(REQUEST_TIMEOUT_RESPONSE)
    } finally {
      clearInterval(trickle)
    }
    const card = await raw(port)
    card.socket.write(cardRequest)
    await card.closed
    expect(card.received()).toMatch(/^HTTP\/1\.1 200 /)
  })

  it('refuses a connection past A2A_MAX_CONNECTIONS_PER_ADDRESS with a 503, serving another address meanwhile', async () => {
    const { port } = await startDev({ A2A_MAX_CONNECTIONS_PER_ADDRESS: '3' })
    await Promise.all([raw(port, '127.0.0.2'), raw(port, '127.0.0.2'), raw(port, '127.0.0.2')])
    // The three are counted once the server has accepted them: a fourth is refused by then.
    let past: Raw | undefined
    await expect
      .poll(async () => {
        past = await raw(port, '127.0.0.2')
        past.socket.write(cardRequest)
        await past.closed
        return past.received().split('\r\n', 1)[0]
      })
      .toBe('HTTP/1.1 503 Service Unavailable')
    expect(past!.received()).toMatch(/\r\nConnection: close\r\n/)
    const other = await raw(port, '127.0.0.1')
    other.socket.write(cardRequest)
    await other.closed
    expect(other.received()).toMatch(/^HTTP\/1\.1 200 /)
  })

  it('stops at start with the line a2a start prints for a bad cap', async () => {
    const port = await freePort()
    child = spawn(process.execPath, [a2aBin, 'dev'], {
      cwd: project,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', A2A_MAX_CONNECTIONS: 'many' },
    })
    let output = ''
    child.stdout!.on('data', (chunk) => (output += chunk))
    child.stderr!.on('data', (chunk) => (output += chunk))
    const code = await new Promise((resolve) => child!.once('exit', resolve))
    expect(code).toBe(1)
    expect(output).toContain('maxConnections (A2A_MAX_CONNECTIONS) must be a whole number from 1 (got "many")')
  })
})
