import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { runA2a } from '../_support.ts'

/** The environment without anything that would pick the agent or credentials for the CLI. */
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(PORT|HOST|A2A_)/.test(key)),
) as Record<string, string>

const servers: Server[] = []
const runs = new Set<ChildProcess>()
const folders: string[] = []

afterEach(async () => {
  for (const child of runs)
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL')
  runs.clear()
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))))
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true })
})

function listen(handler: (req: IncomingMessage, res: import('node:http').ServerResponse) => void): Promise<string> {
  const server = createServer(handler)
  servers.push(server)
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)),
  )
}

/**
 * An agent whose card is served where asked but whose JSON-RPC endpoint answers 307 to `elsewhere`, and the
 * server at `elsewhere`, which notes every request it gets (with the credentials it was sent).
 */
async function redirectingAgent(): Promise<{ url: string; elsewhere: string; received: string[] }> {
  const received: string[] = []
  const elsewhere = await listen((req, res) => {
    received.push(
      `${req.method} ${req.url} authorization=${req.headers.authorization} x-api-key=${req.headers['x-api-key']}`,
    )
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"result":{}}')
  })
  const url = await listen((req, res) => {
    if (req.method === 'GET') {
      const card = {
        name: 'Redirecting',
        description: 'Sends its JSON-RPC requests elsewhere',
        url,
        supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
        version: '1.0.0',
        capabilities: { streaming: false },
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
        skills: [{ id: 's', name: 'S', description: 'Does s', tags: ['t'], examples: ['e'] }],
      }
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card))
    }
    req.resume()
    res.writeHead(307, { location: elsewhere }).end()
  })
  return { url, elsewhere, received }
}

const a2a = (args: string[]) => {
  const cwd = mkdtempSync(join(tmpdir(), 'a2a-redirect-'))
  folders.push(cwd)
  return runA2a(args, { cwd, env: cleanEnv, running: runs })
}

describe('a request carrying credentials is never redirected', () => {
  it('a2a send says where the agent redirected it, in one error, and sends nothing there', async () => {
    const { url, elsewhere, received } = await redirectingAgent()
    const { code, stdout, stderr } = await a2a([
      'send',
      'hello',
      '--agent-card',
      url,
      '--bearer',
      'secret-token',
      '--api-key',
      'secret-key',
    ])
    expect(stderr.match(/^Error: /gm)).toHaveLength(1)
    expect(stderr).toContain(`${url} redirected (HTTP 307) to ${elsewhere}; requests with credentials do not follow`)
    expect(stderr).not.toContain('secret-')
    expect(stderr).not.toMatch(/^\s+at /m)
    expect(stdout).toBe('')
    expect(code).toBe(1)
    // The command has ended: whatever it was going to send, it has sent.
    expect(received).toEqual([])
  })

  it('a2a card validate --live reports the redirect as a finding and probes nothing there', async () => {
    const { url, elsewhere, received } = await redirectingAgent()
    const { code, stdout } = await a2a([
      'card',
      'validate',
      url,
      '--live',
      '--token',
      'secret-token',
      '--api-key',
      'secret-key',
    ])
    expect(stdout).toContain(`${url} redirects JSON-RPC requests to ${elsewhere} (HTTP 307); not followed`)
    expect(code).toBe(1)
    expect(received).toEqual([])
  })
})
