import { connect, type Socket } from 'node:net'
import { type FixtureAgent, type FixtureProbe, startFixtureAgent } from './_fixture-process.ts'
import { call, message, rpcBody } from './_slow-readers.ts'

/**
 * Clients that hold connections and request bodies, against test/fixtures/caps-agent.mjs as its own process (its
 * memory read from /proc), for test/runtime/connection-caps.test.ts and test/soak/stalled-bodies.soak.ts.
 */

export interface CapsProbe extends FixtureProbe {
  /** Connections the HTTP server holds (server.getConnections). */
  connections: number
}

/** The caps fixture holds no tasks: there is nothing to release. */
export type CapsAgent = Omit<FixtureAgent<CapsProbe>, 'release'>

/** Starts the fixture with `env` (the runtime's A2A_* caps and timeouts) and resolves once it listens. */
export const startCapsAgent = (env: Record<string, string> = {}): Promise<CapsAgent> =>
  startFixtureAgent<CapsProbe>('caps-agent.mjs', env)

/** A TCP client whose every byte the test writes; it reads what the server answers and notes when it closes. */
export interface RawConnection {
  socket: Socket
  /** Everything the server wrote, as latin1 text. */
  received(): string
  /** The status of the server's answer, 0 while (or when) there is none. */
  status(): number
  /** Resolves with ms since connecting once the connection closed (the server closed it, or it was reset). */
  closed: Promise<number>
  isClosed(): boolean
}

/** Connects from `localAddress` (another loopback address stands for another client) and resolves once connected. */
export function rawConnection(port: number, localAddress = '127.0.0.1'): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const socket = connect({ host: '127.0.0.1', port, localAddress })
    let received = ''
    let closed = false
    socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk))
    const whenClosed = new Promise<number>((done) =>
      socket.once('close', () => {
        closed = true
        done(performance.now() - started)
      }),
    )
    socket.once('error', reject)
    socket.once('connect', () => {
      socket.off('error', reject)
      // A reset or a write after the server closed is how a refusal may look: the test reads the outcome.
      socket.on('error', () => {})
      resolve({
        socket,
        received: () => received,
        status: () => Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0),
        closed: whenClosed,
        isClosed: () => closed,
      })
    })
  })
}

const FILLER = Buffer.alloc(4 * 1024 * 1024, 'x')

/**
 * A request that declares a body of `declared` bytes (or sends one chunk of that size, `chunked`) and stops one
 * byte (chunked: the last chunk) short, so the server waits for the rest until it refuses it or times it out.
 */
export async function stalledBody(
  port: number,
  options: { declared: number; localAddress?: string; chunked?: boolean },
): Promise<RawConnection> {
  const connection = await rawConnection(port, options.localAddress)
  const head = `POST / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n`
  if (options.chunked) {
    connection.socket.write(`${head}Transfer-Encoding: chunked\r\n\r\n${options.declared.toString(16)}\r\n`)
    connection.socket.write(FILLER.subarray(0, options.declared))
    connection.socket.write('\r\n')
  } else {
    connection.socket.write(`${head}Content-Length: ${options.declared}\r\n\r\n`)
    connection.socket.write(FILLER.subarray(0, options.declared - 1))
  }
  return connection
}

/** `count` stalled bodies from `localAddress`, at most `parallel` connecting at once. */
export async function stalledBodies(
  port: number,
  count: number,
  options: { declared: number; localAddress: string; parallel?: number },
): Promise<RawConnection[]> {
  const parallel = options.parallel ?? 100
  const all: RawConnection[] = []
  for (let i = 0; i < count; i += parallel) {
    const batch = await Promise.allSettled(
      Array.from({ length: Math.min(parallel, count - i) }, () => stalledBody(port, options)),
    )
    for (const outcome of batch) if (outcome.status === 'fulfilled') all.push(outcome.value)
  }
  return all
}

/** A JSON-RPC message/send of `bytes` characters of text, sent whole from 127.0.0.1 on a new connection. */
export const send = (port: number, text = 'hello') => call(port, rpcBody('message/send', message(text)))

export interface Traffic {
  /** Latency of every request, in ms, in order. */
  ms: number[]
  statuses: number[]
  failures: string[]
}

/**
 * A client that keeps sending message/send, one at a time and `gapMs` apart, until `stop()` (or `maxMs`, or
 * `maxRequests`).
 */
export function normalClient(
  port: number,
  { maxMs = 60_000, maxRequests = 5_000, gapMs = 10 } = {},
): { stop(): Promise<Traffic> } {
  const traffic: Traffic = { ms: [], statuses: [], failures: [] }
  let stopped = false
  const until = performance.now() + maxMs
  const loop = (async () => {
    while (!stopped && performance.now() < until && traffic.ms.length < maxRequests) {
      const started = performance.now()
      try {
        const answer = await send(port, 'normal')
        traffic.statuses.push(answer.status)
      } catch (error) {
        traffic.failures.push((error as Error).message)
        traffic.statuses.push(0)
      }
      traffic.ms.push(performance.now() - started)
      await new Promise((resolve) => setTimeout(resolve, gapMs))
    }
  })()
  return {
    async stop() {
      stopped = true
      await loop
      return traffic
    },
  }
}

/** The `p`th percentile (0–100) of `values`. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
}

/** How the stalled connections ended: refused with a 503, cut with a 408, or closed with no answer. */
export function outcomes(connections: RawConnection[]): {
  refused: number
  cut: number
  unanswered: number
  open: number
  other: number
} {
  const counts = { refused: 0, cut: 0, unanswered: 0, open: 0, other: 0 }
  for (const connection of connections) {
    const status = connection.status()
    if (!connection.isClosed()) counts.open++
    else if (status === 503) counts.refused++
    else if (status === 408) counts.cut++
    else if (status === 0) counts.unanswered++
    else counts.other++
  }
  return counts
}
