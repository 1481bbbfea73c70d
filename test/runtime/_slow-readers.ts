import { request } from 'node:http'
import { connect, type Socket } from 'node:net'
import { type FixtureAgent, type FixtureProbe, startFixtureAgent } from './_fixture-process.ts'
import { fdsOf, pollUntil, rssOf } from './_load-process.ts'

/**
 * Clients that stop reading, against test/fixtures/slow-readers-agent.mjs as its own process (its memory read
 * from /proc), for test/runtime/backpressure.test.ts and test/soak/slow-readers.soak.ts.
 */

export interface SlowReadersProbe extends FixtureProbe {
  /** SSE subscribers the runtime dropped (backlog or budget) and responses it cut (write timeout), from its log. */
  dropped: number
  cut: number
  connections: number
}

export type SlowReadersAgent = FixtureAgent<SlowReadersProbe>

/** Starts the fixture with `env` (the runtime's A2A_* budgets) and resolves once it listens. */
export const startSlowReadersAgent = (env: Record<string, string> = {}) =>
  startFixtureAgent<SlowReadersProbe>('slow-readers-agent.mjs', env)

export const rpcBody = (method: string, params: unknown, id: string | number = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params })
export const message = (text: string) => ({
  message: { role: 'user', messageId: `m-${Math.random().toString(36).slice(2)}`, parts: [{ kind: 'text', text }] },
})

/** A JSON-RPC call whose answer is read whole (a client that keeps up). */
export function call(
  port: number,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; text: string; ms: number }> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/',
        agent: false,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, text, ms: performance.now() - started }),
        )
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

export interface StalledClient {
  /** The status line's code, from the first bytes of the answer. */
  status: number
  /** From writing the request to the first bytes of the answer. */
  ms: number
  /** The first bytes of the answer (latin1): the status line, the headers, maybe some of the body. */
  head: string
  socket: Socket
}

/**
 * A client that sends its request, takes the first bytes of the answer (its status and headers) and then reads
 * nothing more: its socket is paused, so the kernel's buffers fill and the server is left holding the rest.
 */
export function stalledClient(port: number, body: string): Promise<StalledClient> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port })
    const started = performance.now()
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error('no answer began within 30 s'))
    }, 30_000)
    socket.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    socket.once('connect', () =>
      socket.write(
        `POST / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      ),
    )
    socket.once('data', (chunk: Buffer) => {
      clearTimeout(timer)
      socket.pause()
      // A reset from the server later (a cut) must not surface as an unhandled error in the test.
      socket.on('error', () => {})
      const head = chunk.toString('latin1')
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0),
        ms: performance.now() - started,
        head,
        socket,
      })
    })
  })
}

/** Reads the rest of a stalled client's answer to its end (or until the server closes the connection). */
export function readRest(client: StalledClient): Promise<string> {
  return new Promise((resolve) => {
    let text = client.head
    client.socket.setEncoding('latin1')
    client.socket.on('data', (chunk: string) => (text += chunk))
    client.socket.once('close', () => resolve(text))
    // The answer is chunked: its last chunk ends it (the server keeps the connection alive).
    client.socket.on('data', () => text.endsWith('\r\n0\r\n\r\n') && client.socket.destroy())
    client.socket.resume()
  })
}

/** A subscriber that reads the whole stream: its events' JSON, in order. */
export function readingSubscriber(
  port: number,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; events: any[] }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/',
        agent: false,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
        res.on('end', () => {
          const events = text
            .split('\n\n')
            .filter((frame) => frame.includes('data: '))
            .map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)))
          resolve({ status: res.statusCode!, events })
        })
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** The highest RSS of `pid` seen from now until `stop()`, sampled every 50 ms. */
export function sampleRss(pid: number): { stop(): number; peak(): number } {
  let peak = rssOf(pid)?.rss ?? 0
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid)?.rss ?? 0)), 50)
  return {
    peak: () => peak,
    stop() {
      clearInterval(timer)
      peak = Math.max(peak, rssOf(pid)?.rss ?? 0)
      return peak
    },
  }
}

export const MiB = 1024 * 1024
export const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`

/** Sockets of the agent process, read from /proc (its connections, listening socket and IPC channel). */
export const socketsOf = (pid: number) => fdsOf(pid)?.sockets ?? -1

export { pollUntil, rssOf }

/** Opens `count` stalled clients, at most `parallel` connecting at once. */
export async function stalledClients(
  port: number,
  body: string | ((i: number) => string),
  count: number,
  parallel = 50,
): Promise<StalledClient[]> {
  const clients: StalledClient[] = []
  for (let i = 0; i < count; i += parallel) {
    const batch = Array.from({ length: Math.min(parallel, count - i) }, (_, j) =>
      stalledClient(port, typeof body === 'string' ? body : body(i + j)),
    )
    clients.push(...(await Promise.all(batch)))
  }
  return clients
}
