import { request as httpRequest } from 'node:http'
import { type A2AServer, serveAgent } from 'a2a-runtime'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigurationError } from '../../runtime/src/errors.ts'
import { echoAgent, gatedAgent } from './_agents.ts'
import { captureLogger } from './_logger.ts'

const servers: A2AServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

async function serve(agent = echoAgent, options: Parameters<typeof serveAgent>[1] = {}): Promise<A2AServer> {
  const server = await serveAgent(agent, {
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
    logger: captureLogger(),
    ...options,
  })
  servers.push(server)
  return server
}

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** A request with the headers given as they are (fetch would set its own Host). */
function call(url: string, path: string, method = 'GET', headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(new URL(path, url), { method, headers }, (response) => {
      let body = ''
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }))
    })
    sent.on('error', reject).end()
  })
}

describe('health checks', () => {
  it('GET /healthz answers 200 {"status":"ok"}, never cached; HEAD the same without a body', async () => {
    const server = await serve()
    const alive = await call(server.url, '/healthz')
    expect(alive.status).toBe(200)
    expect(JSON.parse(alive.body)).toEqual({ status: 'ok' })
    expect(alive.headers['content-type']).toBe('application/json')
    expect(alive.headers['cache-control']).toBe('no-store')
    const head = await call(server.url, '/healthz', 'HEAD')
    expect(head.status).toBe(200)
    expect(head.body).toBe('')
  })

  it('GET /readyz answers 200 on a memory store, 503 with the reason once the server drains; /healthz stays 200', async () => {
    const gated = gatedAgent()
    const server = await serve(gated.agent, { shutdownTimeoutMs: 30_000 })
    const ready = await call(server.url, '/readyz')
    expect(ready.status).toBe(200)
    expect(JSON.parse(ready.body)).toEqual({ status: 'ready' })

    void fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hold' }] } },
      }),
    }).catch(() => undefined)
    await gated.started
    const closing = server.close()
    servers.splice(servers.indexOf(server), 1)
    try {
      const draining = await call(server.url, '/readyz')
      expect(draining.status).toBe(503)
      expect(JSON.parse(draining.body)).toEqual({
        status: 'unavailable',
        reason: 'draining: the server is shutting down',
      })
      expect((await call(server.url, '/healthz')).status).toBe(200)
    } finally {
      gated.release()
      await closing
    }
  })

  it("GET /ping answers AgentCore's Healthy, HealthyBusy while a task runs, with the time of the last change", async () => {
    const gated = gatedAgent()
    const server = await serve(gated.agent)
    const idle = JSON.parse((await call(server.url, '/ping')).body)
    expect(idle).toEqual({ status: 'Healthy', time_of_last_update: expect.any(Number) })
    expect(Math.abs(idle.time_of_last_update - Date.now() / 1000)).toBeLessThan(120)

    const sending = fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hold' }] } },
      }),
    })
    await gated.started
    const busy = JSON.parse((await call(server.url, '/ping')).body)
    expect(busy.status).toBe('HealthyBusy')
    expect(busy.time_of_last_update).toBeGreaterThanOrEqual(idle.time_of_last_update)
    gated.release()
    await sending
    await expect.poll(async () => JSON.parse((await call(server.url, '/ping')).body).status).toBe('Healthy')
  })

  it('answers probes whatever their Host: a pod IP, a name the agent was not told of (no 403 from the guard)', async () => {
    const server = await serve(echoAgent, { allowedHosts: ['agent.example.com'] })
    for (const host of [`10.12.0.7:${server.port}`, 'probe.internal:8080']) {
      for (const path of ['/healthz', '/readyz', '/ping'])
        expect((await call(server.url, path, 'GET', { host })).status).toBe(200)
    }
    // The agent's own routes still refuse a name it does not know.
    expect((await call(server.url, '/.well-known/agent.json', 'GET', { host: 'probe.internal:8080' })).status).toBe(403)
  })

  it('is not part of the card: none of the paths is listed', async () => {
    const server = await serve()
    const card = await (await fetch(`${server.url}.well-known/agent-card.json`)).text()
    expect(card).not.toMatch(/healthz|readyz|\/ping/)
  })
})

describe('A2A_SHUTDOWN_TIMEOUT_MS: how long a shutdown lets running tasks finish', () => {
  const holdOn = (url: string) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hold' }] } },
      }),
    })

  it('fails a task still running once the time the variable gives is over, well before the 10 s default', async () => {
    const gated = gatedAgent()
    const server = await serve(gated.agent, { env: { A2A_SHUTDOWN_TIMEOUT_MS: '300' } })
    const sending = holdOn(server.url)
    await gated.started
    const started = performance.now()
    servers.splice(servers.indexOf(server), 1)
    try {
      await server.close()
      const closedAfter = performance.now() - started
      const answer = (await (await sending).json()) as any
      expect(answer.result.status.state).toBe('failed')
      // 300 ms asked for; the default would have held the task 10 s (a wide margin for a busy machine).
      expect(closedAfter).toBeLessThan(5000)
    } finally {
      gated.release()
    }
  })

  it.each([
    ['soon', '"soon"'],
    ['-1', '"-1"'],
    ['2.5', '"2.5"'],
  ])('refuses %s in one line naming the option and the variable', async (value, shown) => {
    const attempt = serve(echoAgent, { env: { A2A_SHUTDOWN_TIMEOUT_MS: value } })
    const error = await attempt.then(
      () => undefined,
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(ConfigurationError)
    expect((error as Error).message).toBe(
      `shutdownTimeoutMs (A2A_SHUTDOWN_TIMEOUT_MS) must be a whole number of ms from 0 to 2147483647 (got ${shown})`,
    )
  })
})
