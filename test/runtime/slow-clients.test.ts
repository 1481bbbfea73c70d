import { connect, type Socket } from 'node:net'
import { type A2AServer, type ServeOptions, serveAgent } from 'a2a-runtime'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ConfigurationError } from '../../runtime/src/errors.ts'
import { type StartedA2a, startA2a } from '../_support.ts'
import { agent, echoAgent } from './_agents.ts'
import { type CapturedLogger, captureLogger } from './_logger.ts'
import { readEvents } from './_sse.ts'

// Small timeouts so the suite runs in seconds; the server checks its connections every quarter of the
// shorter one (75 ms here), so a slow client is cut at most that long after its timeout.
const HEADERS_MS = 300
const REQUEST_MS = 500
const KEEP_ALIVE_MS = 300
/** Room for the check interval and a busy machine: a cut later than timeout + SLACK fails the test. */
const SLACK_MS = 1_000
/**
 * Timeouts ten times apart, for the tests that tell which of the two cut a client: a cut near one of them
 * cannot be the other's, however slow the machine (the checks leave seconds between the two).
 */
const APART = { headersTimeoutMs: 500, requestTimeoutMs: 5_000 } as const
/** Halfway between the two: a headers cut comes before it, a request cut after it. */
const APART_MIDDLE_MS = (APART.headersTimeoutMs + APART.requestTimeoutMs) / 2
/** Node closes an idle keep-alive socket up to this long after the keep-alive timeout it advertises. */
const NODE_KEEP_ALIVE_BUFFER_MS = 1_000

/** What Node writes to a client cut by the headers or request timeout, before it closes the connection. */
const REQUEST_TIMEOUT_RESPONSE = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n'

const TIMEOUT_ENV = ['A2A_HEADERS_TIMEOUT_MS', 'A2A_REQUEST_TIMEOUT_MS', 'A2A_KEEP_ALIVE_TIMEOUT_MS'] as const

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const rpcBody = (method: string, text: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: { message: { role: 'user', messageId: `m-${Math.random()}`, parts: [{ kind: 'text', text }] } },
  })

const servers: A2AServer[] = []
const sockets: Socket[] = []
// Each test decides the environment; whatever the shell had is put back afterwards.
const savedEnv: Partial<Record<(typeof TIMEOUT_ENV)[number], string>> = {}

beforeEach(() => {
  for (const name of TIMEOUT_ENV) {
    savedEnv[name] = process.env[name]
    delete process.env[name]
  }
})

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy()
  for (const server of servers.splice(0)) await server.close()
  for (const name of TIMEOUT_ENV) {
    if (savedEnv[name] === undefined) delete process.env[name]
    else process.env[name] = savedEnv[name]
  }
})

async function serve(options: ServeOptions = {}, served = echoAgent): Promise<A2AServer & { logger: CapturedLogger }> {
  const logger = captureLogger()
  const server = await serveAgent(served, {
    headersTimeoutMs: HEADERS_MS,
    requestTimeoutMs: REQUEST_MS,
    keepAliveTimeoutMs: KEEP_ALIVE_MS,
    ...options,
    logger,
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
  })
  servers.push(server)
  return Object.assign(server, { logger })
}

interface RawClient {
  socket: Socket
  /** Everything the server wrote, as latin1 text. */
  received(): string
  /** Resolves with ms since connecting when the server closes the connection. */
  closed: Promise<number>
  /** Writes `text` one byte every `everyMs` until the connection closes; resolves with the bytes written. */
  trickle(text: string, everyMs: number): Promise<number>
}

/** A raw TCP client, so the test controls every byte and its timing. */
function rawClient(port: number): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const socket = connect({ port, host: '127.0.0.1' })
    sockets.push(socket)
    let received = ''
    socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk))
    // A reset after the 408 is still a close; the test looks at what was received.
    socket.on('error', () => {})
    const closed = new Promise<number>((done) => socket.once('close', () => done(Date.now() - started)))
    socket.once('error', reject)
    socket.once('connect', () =>
      resolve({
        socket,
        received: () => received,
        closed,
        async trickle(text, everyMs) {
          let sent = 0
          while (sent < text.length && !socket.destroyed && socket.writable) {
            socket.write(text[sent++]!)
            await Promise.race([sleep(everyMs), closed])
          }
          return sent
        },
      }),
    )
  })
}

/** The agent answers: the card and a blocking message/send, over fresh fetch connections. */
async function expectHealthy(server: A2AServer): Promise<void> {
  const card = await fetch(new URL('.well-known/agent.json', server.url))
  expect(card.status).toBe(200)
  await card.body?.cancel()
  const reply = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: rpcBody('message/send', 'still here'),
  })
  expect(reply.status).toBe(200)
  expect((await reply.json()).result.status.state).toBe('completed')
}

describe('slow clients are cut by timeouts', () => {
  it('cuts a connection that sends nothing after headersTimeoutMs (not the longer requestTimeoutMs), answering 408 Request Timeout with Connection: close', async () => {
    const server = await serve(APART)
    const client = await rawClient(server.port)
    const elapsed = await client.closed
    expect(elapsed).toBeGreaterThanOrEqual(APART.headersTimeoutMs - 20)
    expect(elapsed).toBeLessThan(APART_MIDDLE_MS)
    expect(client.received()).toBe(REQUEST_TIMEOUT_RESPONSE)
  })

  it('cuts a client trickling its headers one byte at a time (slowloris) after headersTimeoutMs (not the longer requestTimeoutMs), though bytes keep coming, with a 408', async () => {
    const server = await serve(APART)
    const client = await rawClient(server.port)
    // Never-ending headers: a byte every 20 ms would keep the connection forever without the timeout.
    const sent = await client.trickle(
      `GET /.well-known/agent.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'a'.repeat(10_000)}`,
      20,
    )
    const elapsed = await client.closed
    expect(sent).toBeGreaterThan(5)
    expect(elapsed).toBeGreaterThanOrEqual(APART.headersTimeoutMs - 20)
    expect(elapsed).toBeLessThan(APART_MIDDLE_MS)
    expect(client.received()).toBe(REQUEST_TIMEOUT_RESPONSE)
    await expectHealthy(server)
  })

  it('cuts a client that sends complete headers and trickles the JSON-RPC body after requestTimeoutMs (not the shorter headersTimeoutMs), with a 408, logging no error for it', async () => {
    const server = await serve(APART)
    const client = await rawClient(server.port)
    // Longer than the request timeout allows at a byte every 20 ms.
    const body = rpcBody('message/send', `slow body ${'x'.repeat(2_000)}`)
    client.socket.write(
      `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    )
    const sent = await client.trickle(body, 20)
    const elapsed = await client.closed
    expect(sent).toBeGreaterThan(5)
    expect(sent).toBeLessThan(body.length)
    // The headers came in time, so their timeout never applied; the whole request did not.
    expect(elapsed).toBeGreaterThanOrEqual(APART.requestTimeoutMs - 20)
    expect(elapsed).toBeLessThan(APART.requestTimeoutMs + 2 * SLACK_MS)
    expect(client.received()).toBe(REQUEST_TIMEOUT_RESPONSE)
    // No task came of the partial body.
    expect((await server.app.store.list({ limit: 10 })).total).toBe(0)
    await expectHealthy(server)
    // The handler was reading the body when the client was cut: a client that went away, not a fault.
    expect(server.logger.lines.filter((line) => line.level === 'error' || line.level === 'warn')).toEqual([])
  })

  it('answers a normal request after slow clients were cut, on the same server', async () => {
    const server = await serve()
    const idle = await rawClient(server.port)
    const trickling = await rawClient(server.port)
    const body = rpcBody('message/send', 'slow')
    trickling.socket.write(
      `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    )
    void trickling.trickle(body, 20)
    await Promise.all([idle.closed, trickling.closed])
    await expectHealthy(server)
  })

  it('closes an idle keep-alive connection after keepAliveTimeoutMs (Node adds up to 1 s), and times the next request from its first byte', async () => {
    const server = await serve()
    const client = await rawClient(server.port)
    client.socket.write('GET /.well-known/agent.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    while (!/\r\n\r\n\{.*\}$/s.test(client.received())) await sleep(5)
    const answeredAt = Date.now()
    expect(client.received()).toMatch(/^HTTP\/1\.1 200 /)
    expect(client.received()).toMatch(/\r\nConnection: keep-alive\r\n/i)
    await client.closed
    const idleFor = Date.now() - answeredAt
    expect(idleFor).toBeGreaterThanOrEqual(KEEP_ALIVE_MS - 20)
    expect(idleFor).toBeLessThan(KEEP_ALIVE_MS + NODE_KEEP_ALIVE_BUFFER_MS + SLACK_MS)
    // An idle keep-alive connection is closed quietly: no 408 after the 200.
    expect(client.received()).not.toContain('408')

    // On a kept connection, a second request's headers get headersTimeoutMs from their first byte.
    const second = await rawClient(server.port)
    second.socket.write('GET /.well-known/agent.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    while (!/\r\n\r\n\{.*\}$/s.test(second.received())) await sleep(5)
    const startedAt = Date.now()
    second.socket.write('GET /.well-known/agent.json HT')
    await second.closed
    expect(Date.now() - startedAt).toBeLessThan(HEADERS_MS + SLACK_MS)
    expect(second.received().endsWith(REQUEST_TIMEOUT_RESPONSE)).toBe(true)
  })

  it('keeps 200 idle and trickling connections bounded: all are cut with a 408 within the timeouts while the server keeps answering', async () => {
    const server = await serve()
    const started = Date.now()
    const clients = await Promise.all(Array.from({ length: 200 }, () => rawClient(server.port)))
    // Half say nothing; half send part of a request line and stop.
    for (const [i, client] of clients.entries())
      if (i % 2) client.socket.write('POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Wait: ')
    // While all 200 are held open, real requests are answered promptly.
    const before = Date.now()
    await expectHealthy(server)
    expect(Date.now() - before).toBeLessThan(HEADERS_MS + SLACK_MS)

    await Promise.all(clients.map((client) => client.closed))
    expect(Date.now() - started).toBeLessThan(HEADERS_MS + 2 * SLACK_MS)
    expect(clients.filter((client) => client.received() !== REQUEST_TIMEOUT_RESPONSE)).toEqual([])
    await expectHealthy(server)
    expect(server.logger.text('error')).toBe('')
  })
})

describe('answers that take long are not cut by the request timeout', () => {
  /** Answers after `ms`, reporting progress first. */
  const slowAgent = (ms: number) =>
    agent(async (_ctx, task) => {
      task.working('thinking')
      await sleep(ms)
      task.artifact('done')
      task.complete()
    })
  const LONG_MS = REQUEST_MS + KEEP_ALIVE_MS + 400

  it('keeps an SSE stream open longer than requestTimeoutMs and delivers every event up to completed', async () => {
    const server = await serve({}, slowAgent(LONG_MS))
    const started = Date.now()
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: rpcBody('message/stream', 'wait'),
    })
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    const { events } = await readEvents(response)
    expect(Date.now() - started).toBeGreaterThanOrEqual(LONG_MS - 20)
    expect(events.at(-1).params).toMatchObject({ final: true, status: { state: 'completed' } })
    expect(events.some((event) => event.params.artifact?.parts[0].text === 'done')).toBe(true)
  })

  it('answers a blocking message/send whose agent takes longer than requestTimeoutMs', async () => {
    const server = await serve({}, slowAgent(LONG_MS))
    const started = Date.now()
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: rpcBody('message/send', 'wait'),
    })
    expect(response.status).toBe(200)
    expect((await response.json()).result.status.state).toBe('completed')
    expect(Date.now() - started).toBeGreaterThanOrEqual(LONG_MS - 20)
  })
})

describe('timeout settings', () => {
  /** Starts a server that must be refused; one that starts anyway is closed before the test fails. */
  async function expectRefused(options: ServeOptions, message: string | RegExp): Promise<void> {
    const outcome = await serve(options).then(
      async (server) => server,
      (error: unknown) => error,
    )
    expect(outcome).toBeInstanceOf(ConfigurationError)
    expect((outcome as Error).message).toMatch(message)
  }

  it('defaults to a 15 s headers timeout, a 30 s request timeout and a 5 s keep-alive timeout, advertised as Keep-Alive: timeout=5', async () => {
    const server = await serve({
      headersTimeoutMs: undefined,
      requestTimeoutMs: undefined,
      keepAliveTimeoutMs: undefined,
    })
    expect(server.server!.headersTimeout).toBe(15_000)
    expect(server.server!.requestTimeout).toBe(30_000)
    expect(server.server!.keepAliveTimeout).toBe(5_000)
    const response = await fetch(new URL('.well-known/agent.json', server.url))
    expect(response.headers.get('keep-alive')).toBe('timeout=5')
    await response.body?.cancel()
  })

  it('lowers the default headers timeout to a requestTimeoutMs below it', async () => {
    const server = await serve({ headersTimeoutMs: undefined, requestTimeoutMs: 8_000 })
    expect(server.server!.headersTimeout).toBe(8_000)
    expect(server.server!.requestTimeout).toBe(8_000)
  })

  it('reads A2A_HEADERS_TIMEOUT_MS, A2A_REQUEST_TIMEOUT_MS and A2A_KEEP_ALIVE_TIMEOUT_MS when the options are absent; the options win', async () => {
    process.env.A2A_HEADERS_TIMEOUT_MS = '12000'
    process.env.A2A_REQUEST_TIMEOUT_MS = '20000'
    process.env.A2A_KEEP_ALIVE_TIMEOUT_MS = '65000'
    const fromEnv = await serve({
      headersTimeoutMs: undefined,
      requestTimeoutMs: undefined,
      keepAliveTimeoutMs: undefined,
    })
    expect([fromEnv.server!.headersTimeout, fromEnv.server!.requestTimeout, fromEnv.server!.keepAliveTimeout]).toEqual([
      12_000, 20_000, 65_000,
    ])
    const fromOptions = await serve({ headersTimeoutMs: 1_000, requestTimeoutMs: 2_000, keepAliveTimeoutMs: 3_000 })
    expect([
      fromOptions.server!.headersTimeout,
      fromOptions.server!.requestTimeout,
      fromOptions.server!.keepAliveTimeout,
    ]).toEqual([1_000, 2_000, 3_000])
  })

  it.each([
    ['headersTimeoutMs', 0],
    ['headersTimeoutMs', -1],
    ['requestTimeoutMs', 1.5],
    ['requestTimeoutMs', Number.NaN],
    ['keepAliveTimeoutMs', Number.POSITIVE_INFINITY],
    // Past 2^31 - 1 ms Node's timers fire after 1 ms: a typo would close every keep-alive connection at once.
    ['keepAliveTimeoutMs', 2 ** 31],
  ] as const)('refuses %s = %s with a ConfigurationError naming the option', async (name, value) => {
    await expectRefused(
      { [name]: value },
      new RegExp(`^${name} \\(A2A_\\w+\\) must be a whole number of ms from 1 to 2147483647 \\(got ${value}\\)$`),
    )
  })

  it('refuses a non-numeric A2A_KEEP_ALIVE_TIMEOUT_MS, naming the variable and echoing the value', async () => {
    process.env.A2A_KEEP_ALIVE_TIMEOUT_MS = '5s'
    await expectRefused(
      { keepAliveTimeoutMs: undefined },
      'keepAliveTimeoutMs (A2A_KEEP_ALIVE_TIMEOUT_MS) must be a whole number of ms from 1 to 2147483647 (got "5s")',
    )
  })

  it('refuses a headersTimeoutMs longer than requestTimeoutMs, naming both', async () => {
    await expectRefused(
      { headersTimeoutMs: 2_000, requestTimeoutMs: 1_000 },
      'headersTimeoutMs (2000) must not exceed requestTimeoutMs (1000)',
    )
  })
})

describe('a2a start', () => {
  let started: StartedA2a | undefined
  afterEach(async () => {
    await started?.dispose()
    started = undefined
  })

  it('takes the timeouts from A2A_HEADERS_TIMEOUT_MS and A2A_REQUEST_TIMEOUT_MS: a silent connection gets its 408 in time', async () => {
    const source = `import { defineAgent } from 'a2a-runtime'
export default defineAgent({ card: { name: 'Slow', description: 'Times out slow clients' }, execute(ctx, task) { task.complete() } })
`
    started = await startA2a('a2a-slow-', source, {
      A2A_HEADERS_TIMEOUT_MS: String(APART.headersTimeoutMs),
      A2A_REQUEST_TIMEOUT_MS: String(APART.requestTimeoutMs),
    })
    const port = Number(new URL(started.url).port)
    const client = await rawClient(port)
    const elapsed = await client.closed
    expect(elapsed).toBeGreaterThanOrEqual(APART.headersTimeoutMs - 20)
    expect(elapsed).toBeLessThan(APART_MIDDLE_MS)
    expect(client.received()).toBe(REQUEST_TIMEOUT_RESPONSE)
  })
})
