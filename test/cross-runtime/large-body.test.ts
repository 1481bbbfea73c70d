import { connect } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type AgentProcess, API_KEY, startAgentProcess } from './_agent-process.ts'
import { rpc } from './_rpc.ts'
import { RUNTIMES } from './_runtimes.ts'

/**
 * A body over the agent's limit (1 MiB by default) is refused with 413 and a JSON-RPC error on every runtime, and
 * the client, which is still sending it, can read that answer: on Bun the connection was reset under it (EPIPE),
 * under `wrangler dev` the Worker answered HTTP 500 "Network connection lost".
 */

const SIXTEEN_MIB = 16 * 1024 * 1024
const LIMIT = 1024 * 1024

interface Exchange {
  /** The answer, once it had come whole; undefined when the connection ended before. */
  status?: number
  body?: string
  /** Bytes of the request's body sent before the answer came (or the connection ended). */
  sent: number
  /** How the connection ended when no whole answer came: the error, or the server's close. */
  ended?: string
}

/** How a client sends a body: its framing, and whether it reads the connection while it sends. */
interface Sending {
  framing: 'content-length' | 'chunked'
  /**
   * `while-sending`: as curl does, it reads while it writes and stops sending once an answer has come whole (a
   * server may answer before the body ends). `after-sending`: as most clients do (fetch among them), it reads only
   * once it has sent the whole body.
   */
  reads: 'while-sending' | 'after-sending'
}

/** POSTs a JSON-RPC message/send of `size` bytes to `url` over a socket of its own, and tells what came back. */
function sendLargeBody(url: string, size: number, { framing, reads }: Sending): Promise<Exchange> {
  const { hostname, port } = new URL(url)
  const head =
    '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","messageId":"m-large","parts":[{"kind":"text","text":"'
  const tail = '"}]}}}'
  const filler = Buffer.alloc(64 * 1024, 'x')
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname)
    // Not read until the body is sent: what comes meanwhile waits in the socket's buffer.
    if (reads === 'after-sending') socket.pause()
    let sent = 0
    let received = Buffer.alloc(0)
    let answer: { status: number; body: string } | undefined
    const finish = (ended?: string) => {
      socket.destroy()
      resolve({ ...answer, sent, ...(!answer && { ended }) })
    }
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data])
      const headEnd = received.indexOf('\r\n\r\n')
      if (headEnd < 0 || answer) return
      const headers = received.subarray(0, headEnd).toString('latin1')
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headers)?.[1] ?? Number.NaN)
      if (!(received.length >= headEnd + 4 + length)) return
      answer = {
        status: Number(headers.split(' ')[1]),
        body: received.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8'),
      }
      finish()
    })
    socket.on('error', (error: NodeJS.ErrnoException) => finish(`${error.code ?? error.message} (socket error)`))
    socket.on('close', () => finish('closed by the server'))
    socket.on('connect', async () => {
      const lengthHeader = framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${size}`
      socket.write(
        `POST / HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nX-API-Key: ${API_KEY}\r\n${lengthHeader}\r\n\r\n`,
      )
      const write = async (part: Buffer) => {
        sent += part.length
        const framed =
          framing === 'chunked' ? [Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')] : [part]
        let flushed = true
        for (const piece of framed) flushed = socket.write(piece)
        if (!flushed)
          await new Promise((drained) => {
            socket.once('drain', drained)
            socket.once('close', drained)
          })
      }
      await write(Buffer.from(head))
      const fill = size - head.length - tail.length
      for (let filled = 0; filled < fill && !answer && !socket.destroyed; filled += filler.length) {
        await write(filler.subarray(0, Math.min(filler.length, fill - filled)))
      }
      if (answer || socket.destroyed) return
      await write(Buffer.from(tail))
      if (framing === 'chunked') socket.write('0\r\n\r\n')
      socket.resume()
    })
  })
}

describe.each(RUNTIMES)('a body over the limit, on $name', (runtime) => {
  let agent: AgentProcess
  beforeAll(async () => {
    agent = await startAgentProcess(runtime)
  }, 60_000)
  afterAll(() => agent?.stop())
  beforeEach(({ onTestFailed }) =>
    onTestFailed(() => console.error(`[agent on ${runtime.name}, stderr]\n${agent?.stderr() ?? '(not started)'}`)),
  )

  /** Sends 16 MiB as `sending` says; expects the 413, then an ordinary message answered. */
  async function refusedReadably(sending: Sending): Promise<Exchange> {
    const exchange = await sendLargeBody(agent.url, SIXTEEN_MIB, sending)
    const sent = `${(exchange.sent / 1024 / 1024).toFixed(1)} MiB of 16 sent`
    console.info(
      `${runtime.name}, ${sending.framing}, read ${sending.reads}: ${exchange.status ?? exchange.ended} after ${sent}`,
    )
    expect(exchange, 'what came back for the body').toMatchObject({ status: 413 })
    expect(JSON.parse(exchange.body!)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: `Invalid Request: the body exceeds the limit of ${LIMIT} bytes` },
    })
    const message = { role: 'user', messageId: `m-${Math.random()}`, parts: [{ kind: 'text', text: 'after' }] }
    const next = await rpc(agent.url, 'message/send', { message })
    expect(next.body.result).toMatchObject({
      status: { state: 'completed' },
      artifacts: [{ parts: [{ text: 'echo after' }] }],
    })
    return exchange
  }

  for (const framing of ['content-length', 'chunked'] as const) {
    const framed = framing === 'chunked' ? 'chunked' : 'with its Content-Length'
    it(`answers 16 MiB sent ${framed} with a 413 JSON-RPC error that a client reading while it sends gets`, async () => {
      const exchange = await refusedReadably({ framing, reads: 'while-sending' })
      // Node's server answers at once and closes the connection: the client stops sending there.
      if (runtime.server === 'node') expect(exchange.sent).toBeLessThan(SIXTEEN_MIB)
    })

    // Node answers at once and then closes the connection; the other servers read the body to its end first.
    it.skipIf(runtime.server === 'node')(
      `answers 16 MiB sent ${framed} with a 413 JSON-RPC error that a client reading only once it has sent the body gets`,
      async () => {
        const exchange = await refusedReadably({ framing, reads: 'after-sending' })
        expect(exchange.sent).toBe(SIXTEEN_MIB)
      },
    )
  }
})
