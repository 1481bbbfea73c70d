import { type ChildProcess, spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { Agent as HttpAgent, request } from 'node:http'
import { createA2AApp, defineAgent } from 'a2a-runtime'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigurationError } from '../../runtime/src/errors.ts'
import { defaultAllowedHosts } from '../../runtime/src/http/_allowed-hosts.ts'
import { a2aBin, freePort, makeAgentProject, type StartedA2a, startA2a } from '../_support.ts'
import { type FixtureProbe, startFixtureAgent } from './_fixture-process.ts'
import { rawRequest } from './_raw-request.ts'

/**
 * Web pages cannot drive the agent: against `a2a start` and `a2a dev` as processes on 127.0.0.1, with requests
 * shaped as a browser sends them (a header a page's fetch cannot choose, such as Host, is set over node:http).
 */

const AGENT = `import { defineAgent } from 'a2a-runtime'

export default defineAgent({
  card: { name: 'Origin Fixture', description: 'Echoes', capabilities: { streaming: true }, skills: [{ id: 'echo', name: 'Echo', description: 'Echoes', tags: ['test'], examples: ['hi'] }] },
  execute(ctx, task) {
    task.artifact('echo ' + ctx.text)
    task.complete()
  },
})
`

const started: StartedA2a[] = []
let devChild: ChildProcess | undefined
let devProject: string | undefined
afterEach(async () => {
  for (const server of started.splice(0)) await server.dispose()
  if (devChild && devChild.exitCode === null && devChild.signalCode === null) {
    const exited = new Promise((resolve) => devChild!.once('exit', resolve))
    process.kill(devChild.pid!, 'SIGKILL')
    await exited
  }
  devChild = undefined
  if (devProject) rmSync(devProject, { recursive: true, force: true })
  devProject = undefined
})

async function start(
  env: Record<string, string> = {},
): Promise<{ url: string; port: number; pid: number; output(): string }> {
  const server = await startA2a('a2a-web-origin-', AGENT, {
    A2A_ALLOWED_HOSTS: '',
    A2A_CORS_ORIGINS: '',
    A2A_PUBLIC_URL: '',
    ...env,
  })
  started.push(server)
  return { url: server.url, port: Number(new URL(server.url).port), pid: server.child.pid!, output: server.output }
}

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  json(): any
}

/** One request over node:http, which sends the Host, Origin and Content-Type given (or none) as they are. */
function send(
  port: number,
  init: {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string | Uint8Array
    agent?: HttpAgent
  },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: init.method ?? 'GET',
        path: init.path ?? '/',
        headers: init.headers,
        agent: init.agent ?? false,
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
        res.once('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, text, json: () => JSON.parse(text) }),
        )
      },
    )
    req.once('error', reject)
    req.end(init.body)
  })
}

const JSON_TYPE = { 'content-type': 'application/json' }
const V1 = { 'a2a-version': '1.0' }
const rpc = (method: string, params: unknown, id: string | number = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params })
const sendMessage = (text: string) =>
  rpc(
    'message/send',
    { message: { kind: 'message', role: 'user', messageId: `m-${text}`, parts: [{ kind: 'text', text }] } },
    text,
  )
const listTasks = rpc('ListTasks', {})

/** The tasks the agent holds, read as an allowed client. */
async function taskCount(port: number): Promise<number> {
  const answer = await send(port, {
    method: 'POST',
    headers: { host: `127.0.0.1:${port}`, ...JSON_TYPE, ...V1 },
    body: listTasks,
  })
  expect(answer.status).toBe(200)
  return answer.json().result.totalSize
}

describe('a POST whose body is not typed as JSON (what a page may send anywhere without a preflight)', () => {
  it('is refused with 415 naming Content-Type, and creates no task, even from an origin CORS lets in', async () => {
    // Every origin let in, so this is the content-type check alone (a foreign Origin is refused before it).
    const { port } = await start({ A2A_CORS_ORIGINS: '*' })
    const browserShaped = { host: `127.0.0.1:${port}`, origin: 'http://evil.example' }
    // fetch(url, { method: 'POST', mode: 'no-cors', body: string }) sends text/plain; a Blob without type sends none.
    const plain = await send(port, {
      method: 'POST',
      headers: { ...browserShaped, 'content-type': 'text/plain;charset=UTF-8' },
      body: sendMessage('plain'),
    })
    expect(plain.status).toBe(415)
    expect(plain.json()).toEqual({
      jsonrpc: '2.0',
      id: 'plain',
      error: { code: -32600, message: 'Invalid Request: Content-Type must be application/json (got "text/plain")' },
    })
    const typeless = await send(port, {
      method: 'POST',
      headers: browserShaped,
      body: new TextEncoder().encode(sendMessage('typeless')),
    })
    expect(typeless.status).toBe(415)
    expect(typeless.json().error).toEqual({
      code: -32600,
      message: 'Invalid Request: Content-Type must be application/json (got none)',
    })
    const form = await send(port, {
      method: 'POST',
      path: '/jsonrpc',
      headers: { ...browserShaped, 'content-type': 'application/x-www-form-urlencoded' },
      body: sendMessage('form'),
    })
    expect(form.status).toBe(415)
    // A v1.0 request gets its binding's code.
    const v1 = await send(port, {
      method: 'POST',
      headers: { ...browserShaped, ...V1 },
      body: rpc('SendMessage', { message: { messageId: 'v', role: 'ROLE_USER', parts: [{ text: 'v1' }] } }, 'v1'),
    })
    expect(v1.status).toBe(415)
    expect(v1.json().error).toMatchObject({ code: -32005, data: [{ reason: 'CONTENT_TYPE_NOT_SUPPORTED' }] })
    expect(await taskCount(port)).toBe(0)
    // The same message typed as JSON is served: the refusals above were about the type alone.
    const typed = await send(port, {
      method: 'POST',
      headers: { ...browserShaped, ...JSON_TYPE },
      body: sendMessage('typed'),
    })
    expect(typed.json().result.status.state).toBe('completed')
    expect(await taskCount(port)).toBe(1)
  })

  it('from a foreign page (Origin: http://evil.example, no-cors shape) is refused with 403 before anything is read', async () => {
    const { port } = await start()
    const answer = await send(port, {
      method: 'POST',
      headers: { host: `127.0.0.1:${port}`, origin: 'http://evil.example', 'content-type': 'text/plain' },
      body: sendMessage('cross-site'),
    })
    expect(answer.status).toBe(403)
    expect(answer.headers['access-control-allow-origin']).toBeUndefined()
    expect(answer.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.stringContaining('Origin "http://evil.example" is not allowed') },
    })
    expect(answer.json().error.message).toContain('A2A_CORS_ORIGINS')
    expect(await taskCount(port)).toBe(0)
  })
})

describe('a Host the agent is not known by (DNS rebinding)', () => {
  it('is refused with 403 on both cards, any other path and JSON-RPC, so ListTasks is not readable; the names of this machine are served', async () => {
    const { port, output } = await start()
    const sent = await send(port, {
      method: 'POST',
      headers: { host: `localhost:${port}`, ...JSON_TYPE },
      body: sendMessage('secret'),
    })
    expect(sent.json().result.status.state).toBe('completed')
    // A page at http://evil.example:<port> whose name now resolves to 127.0.0.1: to the browser, same-origin.
    const rebound = { host: `evil.example:${port}` }
    for (const path of ['/.well-known/agent.json', '/.well-known/agent-card.json', '/no-such-path']) {
      const card = await send(port, { path, headers: rebound })
      expect(card.status).toBe(403)
      expect(card.json()).toEqual({ error: expect.stringContaining(`Host "evil.example:${port}" is not allowed`) })
      expect(card.text).toContain('A2A_ALLOWED_HOSTS')
      expect(card.text).not.toContain('Origin Fixture')
    }
    for (const path of ['/', '/jsonrpc']) {
      const list = await send(port, {
        method: 'POST',
        path,
        headers: { ...rebound, origin: `http://evil.example:${port}`, ...JSON_TYPE, ...V1 },
        body: listTasks,
      })
      expect(list.status).toBe(403)
      expect(list.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: expect.stringContaining('Host "evil.example') },
      })
      expect(list.text).not.toContain('secret')
    }
    // The same requests under this machine's names and addresses are answered.
    for (const host of [
      `localhost:${port}`,
      `127.0.0.1:${port}`,
      `[::1]:${port}`,
      `app.localhost:${port}`,
      `LOCALHOST:${port}`,
      'localhost',
      `10.1.2.3:${port}`,
    ]) {
      const list = await send(port, { method: 'POST', headers: { host, ...JSON_TYPE, ...V1 }, body: listTasks })
      expect(list.status, host).toBe(200)
      expect(list.json().result.totalSize, host).toBe(1)
    }
    // The operator learns which name was refused and how to allow it: one line a minute, however many refusals.
    await expect.poll(output).toContain(`Refused a request with 403: Host "evil.example:${port}" is not allowed`)
    expect(output().match(/Refused a request/g)).toHaveLength(1)
    // Look-alikes are not this machine.
    for (const host of [
      'localhost.evil.example',
      'evil-localhost',
      '127.0.0.1.evil.example',
      `localhost:${port}:1`,
      'localhost:http',
      '[::1',
      '[evil.example]',
    ]) {
      const card = await send(port, { path: '/.well-known/agent.json', headers: { host } })
      expect(card.status, host).toBe(403)
    }
  })

  it('is judged by the first of repeated Host lines, as Node reads the request: a foreign first one is refused with 403', async () => {
    const { port } = await start()
    const card = (hosts: string[]) =>
      rawRequest(
        port,
        `GET /.well-known/agent.json HTTP/1.1\r\n${hosts.map((host) => `Host: ${host}\r\n`).join('')}Connection: close\r\n\r\n`,
      )
    expect(await card([`evil.example:${port}`, `localhost:${port}`])).toMatch(/^HTTP\/1\.1 403 /)
    expect(await card([`localhost:${port}`])).toMatch(/^HTTP\/1\.1 200 /)
    // Repeated Content-Type lines: the first decides too (a page's fetch can send only one, joined).
    const body = sendMessage('x')
    const post = (types: string[]) =>
      rawRequest(
        port,
        `POST / HTTP/1.1\r\nHost: localhost:${port}\r\n${types.map((type) => `Content-Type: ${type}\r\n`).join('')}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      )
    expect(await post(['text/plain', 'application/json'])).toMatch(/^HTTP\/1\.1 415 /)
    expect(await taskCount(port)).toBe(0)
  })

  it('is served once listed in A2A_ALLOWED_HOSTS (a name, or .domain for its subdomains), and the public URL host is always served', async () => {
    const { port } = await start({
      A2A_ALLOWED_HOSTS: 'agent.example, .corp.example',
      A2A_PUBLIC_URL: 'https://agents.example.com/echo/',
    })
    const status = async (host: string) =>
      (await send(port, { path: '/.well-known/agent.json', headers: { host } })).status
    expect(await status('agent.example')).toBe(200)
    expect(await status(`AGENT.example:${port}`)).toBe(200)
    expect(await status('corp.example')).toBe(200)
    expect(await status('a.b.corp.example:443')).toBe(200)
    expect(await status('agents.example.com')).toBe(200)
    expect(await status('evilcorp.example')).toBe(403)
    expect(await status('agent.example.evil')).toBe(403)
    expect(await status('evil.example')).toBe(403)
  })

  // Allowed names are remembered so a request pays one Set lookup; the memory is 64 names at most. 4,000 distinct
  // 8 KiB names under a listed domain would hold 31 MiB if each were kept. The heap is read after two garbage
  // collections (RSS also carries garbage not yet returned, which a busy machine leaves longer). Measured on a
  // 2-core machine: +0.5 MiB; with every name kept, +31.6 MiB.
  it('remembers a bounded number of allowed names: 4,000 distinct 8 KiB Hosts under a listed domain add under 8 MiB to the heap', async () => {
    const fixture = await startFixtureAgent<FixtureProbe>('caps-agent.mjs', { A2A_ALLOWED_HOSTS: '.example.org' })
    const agent = new HttpAgent({ keepAlive: true, maxSockets: 8 })
    const label = 'a'.repeat(8 * 1024 - 40)
    const burst = async (count: number, name: (i: number) => string) => {
      for (let i = 0; i < count; i += 8) {
        const answers = await Promise.all(
          Array.from({ length: 8 }, (_, j) =>
            send(fixture.port, { path: '/.well-known/agent.json', headers: { host: name(i + j) }, agent }),
          ),
        )
        for (const answer of answers) expect(answer.status).toBe(200)
      }
    }
    try {
      // The same traffic first, so everything serving it allocates once is there before the measure.
      await burst(1000, (i) => `${label}${i % 8}.example.org`)
      const before = (await fixture.probe({ gc: true })).memory.heapUsed
      await burst(4000, (i) => `${label}${i}.example.org`)
      const grown = ((await fixture.probe({ gc: true })).memory.heapUsed - before) / 2 ** 20
      console.log(
        `4,000 distinct 8 KiB Hosts: heap used ${(before / 2 ** 20).toFixed(1)} MiB, then ${grown >= 0 ? '+' : ''}${grown.toFixed(2)} MiB after a GC`,
      )
      expect(grown, `heap +${grown.toFixed(1)} MiB`).toBeLessThan(8)
      // Still refused when not under the listed domain: the memory is of allowed names only.
      expect(
        (
          await send(fixture.port, {
            path: '/.well-known/agent.json',
            headers: { host: `${label}.evil.example` },
            agent,
          })
        ).status,
      ).toBe(403)
    } finally {
      agent.destroy()
      await fixture.kill()
    }
  })

  it('is served with A2A_ALLOWED_HOSTS=* (any host, as serveAgent answers on every interface without a public URL)', async () => {
    const { port } = await start({ A2A_ALLOWED_HOSTS: '*' })
    expect(
      (await send(port, { path: '/.well-known/agent.json', headers: { host: `evil.example:${port}` } })).status,
    ).toBe(200)
    // Listening on every interface, the agent cannot know the names it is reached by (a container's, a proxy's).
    expect(defaultAllowedHosts('0.0.0.0', undefined, {})).toBe(true)
    expect(defaultAllowedHosts('::', undefined, {})).toBe(true)
    // A public URL, a list, or a specific address keeps it strict.
    expect(defaultAllowedHosts('0.0.0.0', 'https://agents.example.com/', {})).toBeUndefined()
    expect(defaultAllowedHosts('0.0.0.0', undefined, { A2A_ALLOWED_HOSTS: 'agent.example' })).toBeUndefined()
    expect(defaultAllowedHosts('127.0.0.1', undefined, {})).toBeUndefined()
    expect(defaultAllowedHosts('192.168.1.20', undefined, {})).toBeUndefined()
  })
})

describe('CORS', () => {
  const APP = 'http://app.example:5173'

  it('lets a listed origin call the agent: preflight answered, its requests and the card carry its Access-Control-Allow-Origin', async () => {
    const { port } = await start({ A2A_CORS_ORIGINS: `${APP}, https://other.example` })
    const host = `127.0.0.1:${port}`
    const preflight = await send(port, {
      method: 'OPTIONS',
      headers: {
        host,
        origin: APP,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, authorization, a2a-version',
      },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers['access-control-allow-origin']).toBe(APP)
    expect(preflight.headers['access-control-allow-methods']).toBe('GET, POST, OPTIONS')
    const allowed = String(preflight.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/)
    expect(allowed).toEqual(
      expect.arrayContaining([
        'content-type',
        'authorization',
        'x-api-key',
        'a2a-version',
        'a2a-extensions',
        'last-event-id',
      ]),
    )
    expect(Number(preflight.headers['access-control-max-age'])).toBeGreaterThan(0)
    expect(preflight.headers.vary).toMatch(/\bOrigin\b/)

    const sent = await send(port, {
      method: 'POST',
      headers: { host, origin: APP, ...JSON_TYPE },
      body: sendMessage('from the app'),
    })
    expect(sent.status).toBe(200)
    expect(sent.json().result.artifacts[0].parts[0].text).toBe('echo from the app')
    expect(sent.headers['access-control-allow-origin']).toBe(APP)
    expect(sent.headers.vary).toMatch(/\bOrigin\b/)
    expect(String(sent.headers['access-control-expose-headers'])).toContain('Retry-After')
    const streamed = await send(port, {
      method: 'POST',
      headers: { host, origin: APP, ...JSON_TYPE },
      body: sendMessage('streamed').replace('message/send', 'message/stream'),
    })
    expect(streamed.headers['content-type']).toMatch(/^text\/event-stream/)
    expect(streamed.headers['access-control-allow-origin']).toBe(APP)
    expect(streamed.text).toContain('echo streamed')
    expect(streamed.text).toContain('"final":true')
    // A refusal is readable by the page too.
    const missing = await send(port, {
      method: 'POST',
      headers: { host, origin: APP, ...JSON_TYPE },
      body: rpc('tasks/get', { id: 'nope' }),
    })
    expect(missing.json().error.code).toBe(-32602)
    expect(missing.headers['access-control-allow-origin']).toBe(APP)
    const untyped = await send(port, {
      method: 'POST',
      headers: { host, origin: APP, 'content-type': 'text/plain' },
      body: sendMessage('untyped'),
    })
    expect(untyped.status).toBe(415)
    expect(untyped.headers['access-control-allow-origin']).toBe(APP)

    for (const path of ['/.well-known/agent.json', '/.well-known/agent-card.json']) {
      const card = await send(port, { path, headers: { host, origin: 'https://other.example' } })
      expect(card.status).toBe(200)
      expect(card.json().name).toBe('Origin Fixture')
      expect(card.headers['access-control-allow-origin']).toBe('https://other.example')
      expect(card.headers.vary).toMatch(/\bOrigin\b/)
      expect(card.headers.vary).toMatch(/\bA2A-Version\b/)
    }
    // Without Origin the card says it varies by it, so a cache never hands this answer to a listed page.
    const plainCard = await send(port, { path: '/.well-known/agent.json', headers: { host } })
    expect(plainCard.headers['access-control-allow-origin']).toBeUndefined()
    expect(plainCard.headers.vary).toMatch(/\bOrigin\b/)
  })

  it('refuses any other origin with 403, its preflight too, and serves the agent own origin without listing', async () => {
    const { port } = await start({ A2A_CORS_ORIGINS: APP })
    const host = `127.0.0.1:${port}`
    for (const origin of [
      'http://evil.example',
      'http://app.example:5174',
      'https://app.example:5173',
      'null',
      `http://localhost:${port}`,
    ]) {
      const preflight = await send(port, {
        method: 'OPTIONS',
        headers: { host, origin, 'access-control-request-method': 'POST' },
      })
      expect(preflight.status, origin).toBe(403)
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined()
      const card = await send(port, { path: '/.well-known/agent.json', headers: { host, origin } })
      expect(card.status, origin).toBe(403)
      expect(card.json().error).toContain('A2A_CORS_ORIGINS')
      const sent = await send(port, {
        method: 'POST',
        headers: { host, origin, ...JSON_TYPE },
        body: sendMessage('nope'),
      })
      expect(sent.status, origin).toBe(403)
    }
    expect(await taskCount(port)).toBe(0)
    // Browsers send Origin on same-origin POSTs too: the agent's own origin (its Host, its listening address).
    const own = await send(port, {
      method: 'POST',
      headers: { host, origin: `http://${host}`, ...JSON_TYPE },
      body: sendMessage('own'),
    })
    expect(own.status).toBe(200)
    expect(own.headers['access-control-allow-origin']).toBeUndefined()
    const viaLocalhost = await send(port, {
      method: 'POST',
      headers: { host: `localhost:${port}`, origin: `http://localhost:${port}`, ...JSON_TYPE },
      body: sendMessage('own-localhost'),
    })
    expect(viaLocalhost.status).toBe(200)
    // OPTIONS without Origin is no preflight: the methods, nothing more.
    const options = await send(port, { method: 'OPTIONS', path: '/jsonrpc', headers: { host } })
    expect(options.status).toBe(204)
    expect(options.headers.allow).toBe('GET, POST, OPTIONS')
    expect(options.headers['access-control-allow-origin']).toBeUndefined()
  })
})

describe('a2a dev', () => {
  async function startDev(source: string, env: Record<string, string> = {}) {
    devProject = makeAgentProject('a2a-dev-origin-', source)
    const port = await freePort()
    devChild = spawn(process.execPath, [a2aBin, 'dev'], {
      cwd: devProject,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        A2A_ALLOWED_HOSTS: '',
        A2A_CORS_ORIGINS: '',
        ...env,
      },
    })
    let output = ''
    devChild.stdout!.on('data', (chunk) => (output += chunk))
    devChild.stderr!.on('data', (chunk) => (output += chunk))
    await expect.poll(() => output, { timeout: 15_000 }).toContain('Dev server at')
    return port
  }

  it('answers only this machine names: a rebound Host gets 403 on the card and on JSON-RPC, a listed one is served', async () => {
    const port = await startDev(AGENT, { A2A_ALLOWED_HOSTS: 'dev.example' })
    const rebound = { host: `evil.example:${port}` }
    expect((await send(port, { path: '/.well-known/agent.json', headers: rebound })).status).toBe(403)
    const list = await send(port, { method: 'POST', headers: { ...rebound, ...JSON_TYPE, ...V1 }, body: listTasks })
    expect(list.status).toBe(403)
    expect(list.json().error.message).toContain('A2A_ALLOWED_HOSTS')
    const posted = await send(port, {
      method: 'POST',
      headers: { host: `localhost:${port}`, origin: 'http://evil.example', ...JSON_TYPE },
      body: sendMessage('x'),
    })
    expect(posted.status).toBe(403)
    expect((await send(port, { path: '/.well-known/agent.json', headers: { host: `localhost:${port}` } })).status).toBe(
      200,
    )
    expect(
      (await send(port, { path: '/.well-known/agent.json', headers: { host: `dev.example:${port}` } })).status,
    ).toBe(200)
    expect(await taskCount(port)).toBe(0)
  })

  it('refuses a rebound Host while the agent does not load, without showing why it fails', async () => {
    const port = await startDev(`${AGENT}\nthrow new Error('SECRET load failure')\n`)
    const refused = await send(port, { path: '/.well-known/agent.json', headers: { host: `evil.example:${port}` } })
    expect(refused.status).toBe(403)
    expect(refused.text).not.toContain('SECRET')
    const local = await send(port, { path: '/.well-known/agent.json', headers: { host: `127.0.0.1:${port}` } })
    expect(local.status).toBe(503)
    expect(local.text).toContain('SECRET')
  })
})

describe('settings', () => {
  const agent = defineAgent({ card: { name: 'Settings', description: 'x' }, execute: (_ctx, task) => task.complete() })
  const refusal = (options: Parameters<typeof createA2AApp>[1], env: Record<string, string | undefined> = {}) => {
    const saved = { A2A_ALLOWED_HOSTS: process.env.A2A_ALLOWED_HOSTS, A2A_CORS_ORIGINS: process.env.A2A_CORS_ORIGINS }
    Object.assign(process.env, { A2A_ALLOWED_HOSTS: '', A2A_CORS_ORIGINS: '' }, env)
    try {
      const app = createA2AApp(agent, options)
      void app.close()
      return undefined
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError)
      return (error as Error).message
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name]
        else process.env[name] = value
      }
    }
  }

  it('refuses a bad allowedHosts or A2A_ALLOWED_HOSTS with a ConfigurationError naming it and the value', () => {
    for (const bad of ['http://agent.example', 'agent.example:8080', 'agent.example/path', 'a b', '*.example.com']) {
      expect(refusal({ allowedHosts: [bad] })).toMatch(
        new RegExp(`^allowedHosts .*\\(got ${JSON.stringify(bad).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\)$`),
      )
      expect(refusal({}, { A2A_ALLOWED_HOSTS: `ok.example,${bad}` })).toMatch(/^A2A_ALLOWED_HOSTS /)
    }
    expect(refusal({ allowedHosts: 'agent.example' as unknown as string[] })).toMatch(/^allowedHosts must be an array/)
    expect(refusal({ allowedHosts: [42 as unknown as string] })).toContain('(got 42)')
    // The option wins over the variable; good values pass.
    expect(refusal({ allowedHosts: ['agent.example'] }, { A2A_ALLOWED_HOSTS: 'http://bad' })).toBeUndefined()
    expect(refusal({ allowedHosts: true })).toBeUndefined()
    expect(refusal({}, { A2A_ALLOWED_HOSTS: 'agent.example, .example.org, 10.0.0.1, [::1], *' })).toBeUndefined()
  })

  it('refuses a bad corsOrigins or A2A_CORS_ORIGINS with a ConfigurationError naming it and the value', () => {
    for (const bad of [
      'app.example',
      'https://app.example/path',
      'ftp://app.example',
      'https://user@app.example',
      'https://app.example?x=1',
    ]) {
      expect(refusal({ corsOrigins: [bad] })).toMatch(/^corsOrigins must list origins/)
      expect(refusal({ corsOrigins: [bad] })).toContain(`(got ${JSON.stringify(bad)})`)
      expect(refusal({}, { A2A_CORS_ORIGINS: `https://ok.example,${bad}` })).toMatch(
        /^A2A_CORS_ORIGINS must list origins/,
      )
    }
    expect(refusal({ corsOrigins: 'https://app.example' as unknown as string[] })).toMatch(
      /^corsOrigins must be an array/,
    )
    expect(refusal({ corsOrigins: ['https://app.example'] }, { A2A_CORS_ORIGINS: 'bad' })).toBeUndefined()
    expect(refusal({}, { A2A_CORS_ORIGINS: 'https://app.example/, http://localhost:5173, *' })).toBeUndefined()
  })

  it('refuses a publicUrl that is not an absolute http(s) URL (its host would be allowed), naming it and A2A_PUBLIC_URL', () => {
    for (const bad of ['agents.example.com', '/echo/', 'ftp://agents.example.com/']) {
      expect(refusal({ publicUrl: bad })).toBe(
        `publicUrl (A2A_PUBLIC_URL) must be an absolute http(s) URL (got ${JSON.stringify(bad)})`,
      )
    }
    expect(refusal({ publicUrl: 'https://agents.example.com/echo/' })).toBeUndefined()
  })

  it('stops a2a start with one line naming A2A_ALLOWED_HOSTS when it is bad', async () => {
    await expect(startA2a('a2a-web-origin-', AGENT, { A2A_ALLOWED_HOSTS: 'https://agent.example' })).rejects.toThrow(
      /A2A_ALLOWED_HOSTS must list host names .*\(got "https:\/\/agent\.example"\)/,
    )
  })
})
