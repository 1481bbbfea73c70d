import { connect } from 'node:net'
import { type A2AServer, defineAgent, type ServeOptions, serveAgent } from 'a2a-runtime'
import { afterEach, describe, expect, it } from 'vitest'
import { captureLogger } from './_logger.ts'

/**
 * Chunked request bodies whose chunk headers declare absurd sizes, written as bytes on a raw socket to serveAgent.
 * Node's parser (llhttp) reads a chunk-size line itself and hands JavaScript only the chunk's bytes, never its
 * declared size (`on_chunk_header` in Node's node_http_parser.cc only resets counters; no server option bounds
 * it), so the runtime judges a chunked body by the bytes that arrive: a size past 2^64 − 1 is Node's 400 at once,
 * bytes past `maxBodySize` are a 413 at once, whatever was declared, and a declaration that is never sent is
 * a stalled body like any other, closed by the request timeout.
 */

const MiB = 1024 * 1024
const agent = defineAgent({
  card: { name: 'Chunks', description: 'Echoes' },
  execute(ctx, task) {
    task.artifact(`echo ${ctx.text}`)
    task.complete()
  },
})

const servers: A2AServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

/** serveAgent on 127.0.0.1 with a free port and these slow-client timeouts. */
async function serve(options: ServeOptions): Promise<A2AServer> {
  const server = await serveAgent(agent, {
    logger: captureLogger(),
    ...options,
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
  })
  servers.push(server)
  return server
}

/** Writes a chunked POST / (its chunk lines as given) and resolves once the server has closed, with its answer. */
function chunkedPost(port: number, chunks: string): Promise<{ status: number; body: string; ms: number }> {
  return new Promise((resolve) => {
    const started = performance.now()
    const socket = connect({ port, host: '127.0.0.1' })
    let received = ''
    socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk))
    // A server that refuses a body before reading it all may reset the connection under the rest of it.
    socket.on('error', () => {})
    socket.on('close', () =>
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0),
        body: received.slice(received.indexOf('\r\n\r\n') + 4),
        ms: performance.now() - started,
      }),
    )
    socket.write(
      `POST / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunks}`,
    )
  })
}

const hex = (bytes: number) => bytes.toString(16)
const SEND = JSON.stringify({
  jsonrpc: '2.0',
  id: 'chunks',
  method: 'message/send',
  params: {
    message: { kind: 'message', role: 'user', messageId: 'm-chunks', parts: [{ kind: 'text', text: 'in chunks' }] },
  },
})
const TOO_LARGE = 'Invalid Request: the body exceeds the limit of 1048576 bytes'

describe('a chunked body whose chunk header declares an absurd size', () => {
  it('is refused at once, well before a 30 s request timeout, as soon as it is malformed (past 2^64 − 1) or its bytes pass maxBodySize', async () => {
    const { port } = await serve({ requestTimeoutMs: 30_000 })
    // 2^64: llhttp's "Chunk size overflow", Node's 400.
    const overflow = await chunkedPost(port, '10000000000000000\r\n{"a":')
    expect(overflow.status).toBe(400)
    expect(overflow.ms).toBeLessThan(5_000)
    // 2^64 − 1, and maxBodySize + 1, declared, then that many bytes sent: 413 once the limit is passed.
    for (const declared of ['ffffffffffffffff', hex(MiB + 1)]) {
      const refused = await chunkedPost(port, `${declared}\r\n${'x'.repeat(MiB + 1)}`)
      expect(refused.status, declared).toBe(413)
      expect(JSON.parse(refused.body).error.message, declared).toBe(TOO_LARGE)
      expect(refused.ms, declared).toBeLessThan(5_000)
    }
    // A chunked body within the limit, in several chunks, is served.
    const pieces = [SEND.slice(0, 10), SEND.slice(10, 50), SEND.slice(50)]
    const served = await chunkedPost(
      port,
      `${pieces.map((piece) => `${hex(piece.length)}\r\n${piece}\r\n`).join('')}0\r\n\r\n`,
    )
    expect(served.status).toBe(200)
    expect(served.body).toContain('"text":"echo in chunks"')
  })

  it('that sends a few bytes and stalls is closed by the request timeout like any stalled body (408), its declared size unread by Node', async () => {
    const { port } = await serve({ requestTimeoutMs: 2_000, headersTimeoutMs: 2_000 })
    const [absurd, overLimit] = await Promise.all([
      chunkedPost(port, 'ffffffffffffffff\r\n{"a":'),
      chunkedPost(port, `${hex(MiB + 1)}\r\n{"a":`),
    ])
    for (const stalled of [absurd, overLimit]) {
      expect(stalled.status).toBe(408)
      expect(stalled.ms).toBeLessThan(15_000)
    }
    // The server answers normally afterwards.
    const after = await chunkedPost(port, `${hex(SEND.length)}\r\n${SEND}\r\n0\r\n\r\n`)
    expect(after.status).toBe(200)
  })
})
