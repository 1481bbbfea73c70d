import { STATUS_CODES } from 'node:http'
import { type A2AServer, defineAgent, serveAgent } from 'a2a-runtime'
import { afterEach, describe, expect, it } from 'vitest'
import { rawRequest } from './_raw-request.ts'

/**
 * Every status the runtime answers on Node carries its standard reason phrase (`HTTP/1.1 401 Unauthorized`, not
 * `HTTP/1.1 401 `): clients and proxies print it, and some log nothing else. (`a2a dev`:
 * test/cli/dev-reason-phrase.test.ts.)
 */

const servers: A2AServer[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
})

let release: () => void = () => {}
const agent = defineAgent({
  card: { name: 'Phrases', description: 'Answers every status', authentication: { schemes: ['bearer'] } },
  async execute(ctx, task) {
    // "hold" runs until the test lets it go, so a second task finds no room (429).
    if (ctx.text === 'hold') await new Promise<void>((resolve) => (release = resolve))
    task.complete()
  },
})

const HOST = 'Host: 127.0.0.1\r\nConnection: close\r\n'
const AUTH = 'Authorization: Bearer phrase-token\r\n'
const post = (body: string, headers = `${AUTH}Content-Type: application/json\r\n`) =>
  `POST / HTTP/1.1\r\n${HOST}${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
const send = (text: string, blocking = true) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: { message: { parts: [{ kind: 'text', text }] }, configuration: { blocking } },
  })

describe('reason phrases on Node', () => {
  it('every status serveAgent answers has its standard reason phrase', async () => {
    const server = await serveAgent(agent, {
      port: 0,
      hostname: '127.0.0.1',
      auth: { bearerTokens: ['phrase-token'] },
      corsOrigins: ['http://page.example'],
      maxBodySize: 1024,
      maxRunningTasks: 1,
      handleSignals: false,
    })
    servers.push(server)
    const etag = (await fetch(`${server.url}.well-known/agent.json`)).headers.get('etag')
    const requests: Array<[number, string]> = [
      [200, `GET /.well-known/agent.json HTTP/1.1\r\n${HOST}\r\n`],
      [200, post(send('hi'))],
      [204, `OPTIONS / HTTP/1.1\r\n${HOST}Origin: http://page.example\r\nAccess-Control-Request-Method: POST\r\n\r\n`],
      [304, `GET /.well-known/agent-card.json HTTP/1.1\r\n${HOST}If-None-Match: *\r\n\r\n`],
      [304, `GET /.well-known/agent.json HTTP/1.1\r\n${HOST}If-None-Match: ${etag}\r\n\r\n`],
      [401, post(send('hi'), 'Content-Type: application/json\r\n')],
      [403, `GET /.well-known/agent.json HTTP/1.1\r\nHost: elsewhere.example\r\nConnection: close\r\n\r\n`],
      [404, `GET /nothing-here HTTP/1.1\r\n${HOST}\r\n`],
      [413, post(JSON.stringify({ padding: 'x'.repeat(2048) }))],
      [415, post(send('hi'), `${AUTH}Content-Type: text/plain\r\n`)],
    ]
    for (const [status, request] of requests) {
      expect(await rawRequest(server.port, request)).toBe(`HTTP/1.1 ${status} ${STATUS_CODES[status]}`)
    }
    expect(await rawRequest(server.port, post(send('hold', false)))).toBe('HTTP/1.1 200 OK')
    expect(await rawRequest(server.port, post(send('one too many')))).toBe('HTTP/1.1 429 Too Many Requests')
    release()
  })
})
