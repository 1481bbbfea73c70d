import { type A2AServer, createA2AApp, type ServeOptions, serveAgent } from 'a2a-runtime'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ConfigurationError } from '../../runtime/src/errors.ts'
import { echoAgent } from './_agents.ts'
import { captureLogger } from './_logger.ts'
import { call, MiB, message, mib, pollUntil, rpcBody, rssOf, sampleRss } from './_slow-readers.ts'
import {
  type CapsAgent,
  normalClient,
  outcomes,
  percentile,
  type RawConnection,
  rawConnection,
  send,
  stalledBodies,
  stalledBody,
  startCapsAgent,
} from './_stalled-bodies.ts'

/**
 * Connection caps (maxConnections, maxConnectionsPerAddress) and the budget of request bodies being received
 * (maxBodyBytesInFlight), against an agent process on 127.0.0.1 whose RSS is read from /proc; 127.0.0.2 stands
 * for a second client address. The full-strength attack with default settings is the soak
 * (`npm run soak -- stalled-bodies`).
 */

/** Short timeouts so the attack ends in seconds; every other cap keeps its default. */
const REQUEST_TIMEOUT_MS = 4_000
/** Room for a loaded machine on top of a timeout. */
const SLACK_MS = 6_000
/** What the 1,500 stalled bodies may add to the agent's RSS (over 1.3 GB without the budget). */
const STALLED_RSS_CEILING = 300 * MiB

const CAP_ENV = ['A2A_MAX_CONNECTIONS', 'A2A_MAX_CONNECTIONS_PER_ADDRESS', 'A2A_MAX_BODY_BYTES_IN_FLIGHT'] as const

let agent: CapsAgent | undefined
const connections: RawConnection[] = []
const servers: A2AServer[] = []
const savedEnv: Partial<Record<(typeof CAP_ENV)[number], string>> = {}

beforeEach(() => {
  for (const name of CAP_ENV) {
    savedEnv[name] = process.env[name]
    delete process.env[name]
  }
})

afterEach(async () => {
  for (const connection of connections.splice(0)) connection.socket.destroy()
  await agent?.kill()
  agent = undefined
  for (const server of servers.splice(0)) await server.close()
  for (const name of CAP_ENV) {
    if (savedEnv[name] === undefined) delete process.env[name]
    else process.env[name] = savedEnv[name]
  }
})

const held = <T extends RawConnection | RawConnection[]>(opened: T): T => {
  connections.push(...(Array.isArray(opened) ? opened : [opened]))
  return opened
}

describe('1,500 stalled request bodies from another address', () => {
  it(`hold off while a normal client is served: each declares 1 MiB and stalls one byte short; refused (503) or cut (408), RSS + under ${STALLED_RSS_CEILING / MiB} MiB, every connection closed`, {
    timeout: 90_000,
  }, async () => {
    agent = await startCapsAgent({ A2A_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) })
    expect((await send(agent.port)).status).toBe(200)
    await agent.probe({ gc: true })
    const before = rssOf(agent.pid)!.rss
    const rss = sampleRss(agent.pid)
    const normal = normalClient(agent.port, { maxMs: 60_000 })
    const started = performance.now()
    const stalled = held(await stalledBodies(agent.port, 1_500, { declared: MiB, localAddress: '127.0.0.2' }))
    const opened = performance.now() - started
    const allClosed = await pollUntil(
      () => stalled.every((connection) => connection.isClosed()),
      Boolean,
      REQUEST_TIMEOUT_MS + SLACK_MS + 10_000,
      100,
    )
    const closedAfter = performance.now() - started
    const traffic = await normal.stop()
    const peak = rss.stop()
    const ended = outcomes(stalled)
    const settled = await pollUntil(
      () => agent!.probe(),
      (probe) => probe.connections === 0,
      10_000,
      100,
    )
    const p50 = percentile(traffic.ms, 50)
    const p99 = percentile(traffic.ms, 99)
    console.log(
      [
        `1,500 stalled bodies of 1 MiB from 127.0.0.2 (request timeout ${REQUEST_TIMEOUT_MS} ms, other caps default):`,
        `  opened in ${(opened / 1000).toFixed(1)} s; ${ended.refused} refused 503, ${ended.cut} cut 408, ${ended.unanswered} closed unanswered, ${ended.other} other; all closed after ${(closedAfter / 1000).toFixed(1)} s`,
        `  agent RSS ${mib(before)} before, peak ${mib(peak)} (+${mib(peak - before)}; ceiling +${mib(STALLED_RSS_CEILING)})`,
        `  normal client on 127.0.0.1: ${traffic.ms.length} message/send, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...traffic.ms).toFixed(1)} ms`,
      ].join('\n'),
    )
    expect(stalled).toHaveLength(1_500)
    expect(allClosed).toBe(true)
    expect(ended.open + ended.other).toBe(0)
    // Half of the default 64 MiB budget holds at most 32 bodies of 1 MiB at once: every other one is refused at
    // once. When opening the 1,500 took longer than the request timeout (a loaded machine), the first 32 were cut
    // and let go meanwhile, and 32 later ones took their place: at most 32 more per timeout that opening took.
    const heldAtMost = 32 * (1 + Math.floor(opened / REQUEST_TIMEOUT_MS))
    expect(ended.cut).toBeLessThanOrEqual(heldAtMost)
    expect(ended.refused + ended.unanswered).toBeGreaterThanOrEqual(1_500 - heldAtMost)
    expect(closedAfter).toBeLessThan(REQUEST_TIMEOUT_MS + SLACK_MS + opened)
    expect(peak - before).toBeLessThan(STALLED_RSS_CEILING)
    expect(traffic.failures).toEqual([])
    expect(traffic.statuses.every((status) => status === 200)).toBe(true)
    expect(traffic.ms.length).toBeGreaterThan(10)
    expect(p99).toBeLessThan(5_000)
    expect(settled.connections).toBe(0)
    expect(settled.logged).toMatchObject({ warn: 0, error: 0 })
  })
})

describe('per-address connection cap (maxConnectionsPerAddress)', () => {
  it('refuses a connection past the cap from one address with a short 503 and Connection: close, reading none of its request, while another address and the same address under the cap are served', async () => {
    agent = await startCapsAgent({ A2A_MAX_CONNECTIONS_PER_ADDRESS: '20' })
    // 20 idle connections from 127.0.0.2 fill its share.
    const idle = held(await Promise.all(Array.from({ length: 20 }, () => rawConnection(agent!.port, '127.0.0.2'))))
    await pollUntil(
      () => agent!.probe(),
      (probe) => probe.connections >= 20,
      10_000,
    )

    const past = held(await rawConnection(agent.port, '127.0.0.2'))
    const started = performance.now()
    past.socket.write(
      `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    )
    await past.closed
    const refusedIn = performance.now() - started
    expect(past.received()).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/)
    expect(past.received()).toMatch(/\r\nConnection: close\r\n/)
    expect(past.received()).toMatch(/\r\nRetry-After: 1\r\n/)
    // Its request was never answered: the 503 is the server's only answer.
    expect(past.received().match(/HTTP\/1\.1/g)).toHaveLength(1)
    console.log(
      `per-address cap 20: the 21st connection from 127.0.0.2 refused (503, closed) in ${refusedIn.toFixed(1)} ms`,
    )

    // Another address is served meanwhile.
    expect((await send(agent.port)).status).toBe(200)
    // The idle ones are still open and usable: one of them is served.
    const answered = idle[0]!
    // One body, declared and sent: each build draws a new messageId.
    const body = rpcBody('message/send', message('hi'))
    answered.socket.write(
      `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    )
    await answered.closed
    expect(answered.status()).toBe(200)
    // Its place is free again: the next connection from 127.0.0.2 is served.
    const next = await pollUntil(
      async () => {
        const connection = held(await rawConnection(agent!.port, '127.0.0.2'))
        connection.socket.write(`GET /.well-known/agent.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
        await connection.closed
        return connection
      },
      (connection) => connection.status() !== 503,
      8_000,
    )
    expect(next.status()).toBe(200)
    expect((await agent.probe()).logged).toMatchObject({ warn: 0, error: 0 })
  })

  it('defaults to half of maxConnections per address', async () => {
    agent = await startCapsAgent({ A2A_MAX_CONNECTIONS: '20' })
    held(await Promise.all(Array.from({ length: 10 }, () => rawConnection(agent!.port, '127.0.0.2'))))
    await pollUntil(
      () => agent!.probe(),
      (probe) => probe.connections >= 10,
      10_000,
    )
    const past = held(await rawConnection(agent.port, '127.0.0.2'))
    await past.closed
    expect(past.status()).toBe(503)
    expect((await send(agent.port)).status).toBe(200)
  })

  it('with 0 has no per-address cap', async () => {
    agent = await startCapsAgent({ A2A_MAX_CONNECTIONS_PER_ADDRESS: '0', A2A_MAX_CONNECTIONS: '40' })
    held(await Promise.all(Array.from({ length: 30 }, () => rawConnection(agent!.port, '127.0.0.2'))))
    await pollUntil(
      () => agent!.probe(),
      (probe) => probe.connections >= 30,
      10_000,
    )
    const more = held(await rawConnection(agent.port, '127.0.0.2'))
    more.socket.write(`GET /.well-known/agent.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
    await more.closed
    expect(more.status()).toBe(200)
  })
})

describe('most concurrent connections (maxConnections)', () => {
  it('closes a connection past maxConnections as soon as it is accepted, unanswered, and serves again once one closes', async () => {
    agent = await startCapsAgent({ A2A_MAX_CONNECTIONS: '10', A2A_MAX_CONNECTIONS_PER_ADDRESS: '0' })
    const idle = held(await Promise.all(Array.from({ length: 10 }, () => rawConnection(agent!.port))))
    await pollUntil(
      () => agent!.probe(),
      (probe) => probe.connections >= 10,
      10_000,
    )

    const past = held(await rawConnection(agent.port))
    const started = performance.now()
    past.socket.write(`GET /.well-known/agent.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
    await past.closed
    const closedIn = performance.now() - started
    expect(past.received()).toBe('')
    console.log(`maxConnections 10: the 11th connection closed unanswered in ${closedIn.toFixed(1)} ms`)
    expect((await agent.probe()).connections).toBe(10)

    // Under the cap again, a request is served.
    idle[0]!.socket.destroy()
    const answer = await pollUntil(
      () => send(agent!.port).catch(() => ({ status: 0 })),
      (reply) => reply.status === 200,
      8_000,
    )
    expect(answer.status).toBe(200)
  })
})

describe('request bodies being received (maxBodyBytesInFlight)', () => {
  // 4 MiB: bodies over 64 KiB may take half, 2 MiB, i.e. two stalled bodies of 1 MiB.
  const BUDGET = 4 * MiB
  const largeText = 'y'.repeat(MiB - 1024)

  it('refuses a large body that does not fit with a fast 503, Retry-After, a JSON-RPC error and Connection: close, unread; still reads small ones; frees the room of abandoned bodies', async () => {
    agent = await startCapsAgent({ A2A_MAX_BODY_BYTES_IN_FLIGHT: String(BUDGET) })
    const large = rpcBody('message/send', message(largeText))
    // One declared body and one chunked one (counted as it arrives), each stalled one byte short of 1 MiB.
    const stalled = held([
      await stalledBody(agent.port, { declared: MiB, localAddress: '127.0.0.2' }),
      await stalledBody(agent.port, { declared: MiB - 1, localAddress: '127.0.0.2', chunked: true }),
    ])
    // Once the server has taken both, a third large body does not fit.
    const refused = await pollUntil(
      () => call(agent!.port, large),
      (reply) => reply.status === 503,
      8_000,
      50,
    )
    expect(refused.status).toBe(503)
    expect(refused.headers['retry-after']).toBe('1')
    expect(refused.headers.connection).toBe('close')
    expect(JSON.parse(refused.text).error).toMatchObject({
      code: -32603,
      message: `Too many request bodies being received at once (maxBodyBytesInFlight: ${BUDGET} bytes); retry shortly`,
    })
    console.log(
      `maxBodyBytesInFlight ${BUDGET}: a third 1 MiB body refused in ${refused.ms.toFixed(1)} ms while two stall`,
    )
    // An ordinary message is read and answered meanwhile.
    const small = await send(agent.port, 'small')
    expect(small.status).toBe(200)
    expect(JSON.parse(small.text).result.status.state).toBe('completed')
    expect(stalled.every((connection) => !connection.isClosed())).toBe(true)

    // The stalled clients leave: their room is free again.
    for (const connection of stalled) connection.socket.destroy()
    const accepted = await pollUntil(
      () => call(agent!.port, large),
      (reply) => reply.status === 200,
      8_000,
      50,
    )
    expect(accepted.status).toBe(200)
    expect(JSON.parse(accepted.text).result.artifacts[0].parts[0].text).toBe(`echo ${largeText.length}`)
    expect((await agent.probe()).logged).toMatchObject({ warn: 0, error: 0 })
  })

  it('frees the room of bodies cut by the request timeout', async () => {
    agent = await startCapsAgent({ A2A_MAX_BODY_BYTES_IN_FLIGHT: String(BUDGET), A2A_REQUEST_TIMEOUT_MS: '1000' })
    const stalled = held([
      await stalledBody(agent.port, { declared: MiB }),
      await stalledBody(agent.port, { declared: MiB }),
    ])
    await Promise.all(stalled.map((connection) => connection.closed))
    expect(stalled.map((connection) => connection.status())).toEqual([408, 408])
    const accepted = await send(agent.port, largeText)
    expect(accepted.status).toBe(200)
  })
})

describe('cap settings', () => {
  async function expectRefused(options: ServeOptions, expected: string): Promise<void> {
    const outcome = await serveAgent(echoAgent, {
      logger: captureLogger(),
      port: 0,
      hostname: '127.0.0.1',
      handleSignals: false,
      ...options,
    }).then(
      (server) => {
        servers.push(server)
        return server
      },
      (error: unknown) => error,
    )
    expect(outcome).toBeInstanceOf(ConfigurationError)
    expect((outcome as Error).message).toBe(expected)
  }

  it('defaults to 4,096 connections', async () => {
    const server = await serveAgent(echoAgent, {
      logger: captureLogger(),
      port: 0,
      hostname: '127.0.0.1',
      handleSignals: false,
    })
    servers.push(server)
    expect(server.server!.maxConnections).toBe(4096)
  })

  it.each([
    [{ maxConnections: 0 }, 'maxConnections (A2A_MAX_CONNECTIONS) must be a whole number from 1 (got 0)'],
    [{ maxConnections: 1.5 }, 'maxConnections (A2A_MAX_CONNECTIONS) must be a whole number from 1 (got 1.5)'],
    [
      { maxConnectionsPerAddress: -1 },
      'maxConnectionsPerAddress (A2A_MAX_CONNECTIONS_PER_ADDRESS) must be a whole number from 0 (0: no cap) (got -1)',
    ],
    [
      { maxBodyBytesInFlight: MiB },
      'maxBodyBytesInFlight (A2A_MAX_BODY_BYTES_IN_FLIGHT) must be a whole number of bytes, at least twice maxBodySize (2097152), so the largest body fits (got 1048576)',
    ],
  ] as const)(
    'refuses %o with a ConfigurationError naming the option, its variable and the value',
    async (options, expected) => {
      await expectRefused(options, expected)
    },
  )

  it('reads A2A_MAX_CONNECTIONS, A2A_MAX_CONNECTIONS_PER_ADDRESS and A2A_MAX_BODY_BYTES_IN_FLIGHT; a bad one is named with its value; the options win', async () => {
    process.env.A2A_MAX_CONNECTIONS = '12'
    const fromEnv = await serveAgent(echoAgent, {
      logger: captureLogger(),
      port: 0,
      hostname: '127.0.0.1',
      handleSignals: false,
    })
    servers.push(fromEnv)
    expect(fromEnv.server!.maxConnections).toBe(12)
    const fromOption = await serveAgent(echoAgent, {
      logger: captureLogger(),
      port: 0,
      hostname: '127.0.0.1',
      handleSignals: false,
      maxConnections: 30,
    })
    servers.push(fromOption)
    expect(fromOption.server!.maxConnections).toBe(30)
    process.env.A2A_MAX_CONNECTIONS_PER_ADDRESS = 'lots'
    await expectRefused(
      {},
      'maxConnectionsPerAddress (A2A_MAX_CONNECTIONS_PER_ADDRESS) must be a whole number from 0 (0: no cap) (got "lots")',
    )
    delete process.env.A2A_MAX_CONNECTIONS_PER_ADDRESS
    process.env.A2A_MAX_BODY_BYTES_IN_FLIGHT = '64MiB'
    expect(() => createA2AApp(echoAgent, { logger: captureLogger() })).toThrow(
      'maxBodyBytesInFlight (A2A_MAX_BODY_BYTES_IN_FLIGHT) must be a whole number of bytes, at least twice maxBodySize (2097152), so the largest body fits (got "64MiB")',
    )
    // A larger maxBodySize raises the default so two of its bodies fit.
    process.env.A2A_MAX_BODY_BYTES_IN_FLIGHT = ''
    expect(() => createA2AApp(echoAgent, { logger: captureLogger(), maxBodySize: 40 * MiB })).not.toThrow()
  })
})

describe('in-process app (any runtime)', () => {
  it('counts a streamed body as it arrives and refuses it past the budget with a 503', async () => {
    const app = createA2AApp(echoAgent, { logger: captureLogger(), maxBodyBytesInFlight: 2 * MiB })
    // A body that sends 1 MiB - 1 and never ends holds its bytes; a second such body does not fit half the budget.
    const stalling = () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new Uint8Array(MiB - 1).fill(0x20))
        },
      })
    const post = (body: ReadableStream<Uint8Array> | string) =>
      app.fetch(
        new Request('http://localhost/', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          duplex: 'half',
        } as RequestInit),
      )
    const first = post(stalling())
    const second = await post(stalling())
    expect(second.status).toBe(503)
    expect((await second.json()).error.message).toMatch(/maxBodyBytesInFlight: 2097152 bytes/)
    expect((await post(rpcBody('message/send', message('small')))).status).toBe(200)
    void first
    await app.close()
  })
})
