import { request } from 'node:http'
import { defineAgent } from 'a2a-runtime'
import { describe, expect, it } from 'vitest'
import { nodeServer } from './_transports.ts'

/**
 * Behind a reverse proxy the agent sees the Host the proxy forwards, which is often not the public name: nginx's
 * default sends the `proxy_pass` address (`127.0.0.1:<port>`), and `proxy_set_header Host $host` drops the public
 * port. A page served from the agent's public URL sends `Origin: <publicUrl's origin>`, which then equals neither
 * `http://<Host>` nor `https://<Host>`: it is served because it is the origin of `publicUrl` (A2A_PUBLIC_URL), the
 * agent's own, without listing it in corsOrigins. Over HTTP on a real port, Host and Origin set as a proxy and a
 * browser send them.
 */

const agent = defineAgent({
  card: {
    name: 'Proxied',
    description: 'Echoes',
    skills: [{ id: 'echo', name: 'Echo', description: 'Echoes', tags: ['test'] }],
  },
  execute(ctx, task) {
    task.artifact(`echo ${ctx.text}`)
    task.complete()
  },
})

function post(
  port: number,
  headers: Record<string, string>,
  text: string,
): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: text,
    method: 'message/send',
    params: { message: { kind: 'message', role: 'user', messageId: `m-${text}`, parts: [{ kind: 'text', text }] } },
  })
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
        let received = ''
        res.setEncoding('utf8').on('data', (chunk: string) => (received += chunk))
        res.once('end', () => resolve({ status: res.statusCode!, body: JSON.parse(received), headers: res.headers }))
      },
    )
    req.once('error', reject)
    req.end(body)
  })
}

describe('an Origin equal to the public URL, behind a proxy that forwards another Host', () => {
  it('is served as the agent own origin, and the same request from any other origin is refused with 403', async () => {
    const target = await nodeServer.start(agent, {
      publicUrl: 'https://agents.example.com/echo/',
      allowedHosts: [],
      corsOrigins: [],
    })
    const port = Number(new URL(target.url).port)
    // nginx's default: the Host is the upstream address it connects to (an IP address, always allowed).
    const upstream = { host: `127.0.0.1:${port}` }
    const own = await post(port, { ...upstream, origin: 'https://agents.example.com' }, 'from-public-page')
    expect(own.status).toBe(200)
    expect(own.body.result.artifacts[0].parts[0].text).toBe('echo from-public-page')
    // Its own origin gets no CORS headers (none are needed).
    expect(own.headers['access-control-allow-origin']).toBeUndefined()
    for (const origin of [
      'https://evil.example',
      'http://agents.example.com',
      'https://agents.example.com:8443',
      'https://sub.agents.example.com',
    ]) {
      const refused = await post(port, { ...upstream, origin }, 'from-elsewhere')
      expect(refused.status, origin).toBe(403)
      expect(refused.body, origin).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: expect.stringContaining(`Origin ${JSON.stringify(origin)} is not allowed`) },
      })
    }
  })

  it('is served with its port when the proxy forwards the public name without it (nginx Host $host), another port is refused', async () => {
    const target = await nodeServer.start(agent, {
      publicUrl: 'https://agents.example.com:8443/',
      allowedHosts: [],
      corsOrigins: [],
    })
    const port = Number(new URL(target.url).port)
    const forwarded = { host: 'agents.example.com' }
    const own = await post(port, { ...forwarded, origin: 'https://agents.example.com:8443' }, 'public-port')
    expect(own.status).toBe(200)
    expect(own.body.result.status.state).toBe('completed')
    const refused = await post(port, { ...forwarded, origin: 'https://agents.example.com:9443' }, 'other-port')
    expect(refused.status).toBe(403)
    expect(refused.body.error.message).toContain('Origin "https://agents.example.com:9443" is not allowed')
  })
})
