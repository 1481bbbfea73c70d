import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { freePort, startA2a } from '../_support.ts'

const runtimeDir = fileURLToPath(new URL('../../runtime', import.meta.url))
const a2aBin = join(runtimeDir, 'bin/a2a.mjs')

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
})

function validateLive(url: string, extra: string[] = []): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [a2aBin, 'card', 'validate', url, '--live', ...extra],
      { timeout: 30_000 },
      (error, stdout) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout })
      },
    )
  })
}

const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(PORT|HOST|A2A_)/.test(key)),
) as Record<string, string>

function cardValidate(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [a2aBin, 'card', 'validate', ...args],
      { cwd, env: cleanEnv, timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  )
}

const goodCard = (url: string, extra: Record<string, unknown> = {}) => ({
  name: 'Probe Target',
  description: 'A fixture server for the live probes of a2a card validate',
  url,
  version: '1.0.0',
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 's', name: 'S', description: 'Does s', tags: ['t'], examples: ['e'] }],
  ...extra,
})

/** A hand-written agent server with one defect chosen by the test. */
async function brokenServer(
  defect: 'json-stream' | 'never-ends' | 'auth-not-enforced' | 'auth-not-declared',
): Promise<string> {
  let url = ''
  const server: Server = createServer(async (req, res) => {
    if (req.method === 'GET') {
      const card =
        defect === 'auth-not-enforced' ? goodCard(url, { authentication: { schemes: ['bearer'] } }) : goodCard(url)
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card))
    }
    let body = ''
    for await (const chunk of req) body += chunk
    const { id, method } = JSON.parse(body)
    if (defect === 'auth-not-declared' && !req.headers.authorization)
      return void res.writeHead(401, { 'content-type': 'application/json' }).end('{}')
    const json = (payload: unknown) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id, ...(payload as object) }))
    const task = (state: string) => ({
      result: { kind: 'task', id: 't', contextId: 'c', status: { state }, artifacts: [] },
    })
    if (method === 'message/send') return void json(task(defect === 'never-ends' ? 'working' : 'completed'))
    if (method === 'message/stream') {
      if (defect === 'json-stream') return void json(task('completed'))
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      return void res.end(
        `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'tasks/statusUpdate', params: { taskId: 't', contextId: 'c', status: { state: 'completed' } } })}\n\n`,
      )
    }
    json({ error: { code: -32602, message: 'Task not found' } })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  cleanups.push(() => server.close())
  return url
}

describe('a2a card validate --live', () => {
  it('finds nothing wrong with an agent served by a2a start', async () => {
    const project = mkdtempSync(join(tmpdir(), 'a2a-live-'))
    mkdirSync(join(project, 'src'))
    mkdirSync(join(project, 'node_modules'))
    symlinkSync(runtimeDir, join(project, 'node_modules/a2a-runtime'), 'dir')
    writeFileSync(
      join(project, 'src/agent.ts'),
      `import { defineAgent } from 'a2a-runtime'
export default defineAgent({
  card: { name: 'Healthy', description: 'A healthy agent for the live probes', skills: [{ id: 'h', name: 'H', description: 'Says hi', tags: ['t'], examples: ['hi'] }] },
  execute(ctx, task) { task.artifact('hi ' + ctx.text); task.complete() },
})
`,
    )
    const child: ChildProcess = spawn(process.execPath, [a2aBin, 'start', '--request-log', 'info'], {
      cwd: project,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1' },
    })
    cleanups.push(() => {
      if (child.exitCode === null) child.kill('SIGKILL')
      rmSync(project, { recursive: true, force: true })
    })
    let output = ''
    child.stderr!.on('data', (chunk) => (output += chunk))
    child.stdout!.on('data', (chunk) => (output += chunk))
    await expect.poll(() => /listening on (\S+)/.exec(output)?.[1], { timeout: 10_000 }).toBeTruthy()
    const url = /listening on (\S+)/.exec(output)![1]!
    const { code, stdout } = await validateLive(url)
    expect(stdout).not.toMatch(/^error/m)
    expect(code).toBe(0)
    // One line per request, at the level asked for.
    expect(output).toMatch(/POST \/ 200 [\d.]+ ms/)
    expect(output).toMatch(/GET \/\.well-known\/agent\.json 200/)
    // Each interface of the A2A v1.0 card was asked in its binding: v0.3 at its own address.
    expect(output).toMatch(/GET \/\.well-known\/agent-card\.json 200/)
    expect(output).toMatch(/POST \/v0\.3 200/)
  })

  it.each([
    ['json-stream', 'capabilities.streaming', /not text\/event-stream/],
    ['never-ends', 'message/send', /came back working/],
    ['auth-not-enforced', 'authentication', /declares bearer but a request without credentials got HTTP 200/],
    ['auth-not-declared', 'authentication', /answers 401 but the card declares no authentication/],
  ] as const)('reports %s at %s and exits 1', async (defect, path, message) => {
    const url = await brokenServer(defect)
    const { code, stdout } = await validateLive(url)
    expect(code).toBe(1)
    const line = stdout.split('\n').find((l) => l.startsWith(`error   ${path}:`))
    expect(line).toMatch(message)
  })

  it("against an agent that needs credentials says so and how to pass them, and passes with --token or the project's .env", async () => {
    const agent = await startA2a(
      'a2a-live-auth-',
      `import { defineAgent } from 'a2a-runtime'
export default defineAgent({
  card: { name: 'Locked', description: 'An agent behind a bearer token, for the live probes', capabilities: { streaming: true }, authentication: { schemes: ['bearer'] }, skills: [{ id: 'h', name: 'H', description: 'Says hi', tags: ['t'], examples: ['hi'] }] },
  execute(ctx, task) { task.artifact('hi'); task.complete() },
})
`,
      { A2A_BEARER_TOKEN: 'live-probe-token-5b1e' },
    )
    cleanups.push(() => void agent.dispose())
    const elsewhere = mkdtempSync(join(tmpdir(), 'a2a-live-cwd-'))
    cleanups.push(() => rmSync(elsewhere, { recursive: true, force: true }))

    const without = await cardValidate([agent.url, '--live'], elsewhere)
    expect(without.code).toBe(1)
    const errors = without.stdout.split('\n').filter((line) => line.startsWith('error'))
    expect(errors).toEqual([
      expect.stringMatching(
        /^error {3}authentication: HTTP 401: the agent needs credentials, so nothing else was probed → pass --token <token> or --api-key <key>, or set A2A_BEARER_TOKEN \/ A2A_API_KEY in the project's \.env/,
      ),
    ])
    expect(without.stdout).not.toMatch(/plain text message|application\/json/)

    const wrong = await cardValidate([agent.url, '--live', '--token', 'not-the-token'], elsewhere)
    expect(wrong.code).toBe(1)
    expect(wrong.stdout).toMatch(/^error {3}authentication: HTTP 401: the agent did not accept the credentials given/m)

    const given = await cardValidate([agent.url, '--live', '--token', 'live-probe-token-5b1e'], elsewhere)
    expect(given.stdout).not.toMatch(/^error/m)
    expect(given.code).toBe(0)

    writeFileSync(join(elsewhere, '.env'), 'A2A_BEARER_TOKEN=live-probe-token-5b1e\n')
    const fromEnv = await cardValidate([agent.url, '--live'], elsewhere)
    expect(fromEnv.stdout).not.toMatch(/^error/m)
    expect(fromEnv.code).toBe(0)
  })

  it('without a URL and no dev server running says which address it tried, in one line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'a2a-live-none-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const port = await freePort()
    writeFileSync(join(dir, '.env'), `PORT=${port}\n`)
    const { code, stderr } = await cardValidate(['--live'], dir)
    expect(code).toBe(1)
    expect(stderr).toContain(`→ http://localhost:${port}/ (PORT from .env)`)
    expect(stderr).toMatch(new RegExp(`^a2a: Cannot reach http://localhost:${port}/\\.well-known/agent\\.json`, 'm'))
    expect(stderr).not.toMatch(/\n\s+at /)
  })

  it('refuses --live with a card file', async () => {
    const { code, stderr } = await cardValidate(['card.json', '--live'], tmpdir())
    expect(code).toBe(1)
    expect(stderr).toContain(
      "a2a: --live probes a running agent: give its URL, or no argument for this project's a2a dev",
    )
  })
})

/**
 * An agent whose A2A v1.0 card declares JSON-RPC 1.0 and 0.3 at its root, where the 0.3 client's stream gets
 * the platform dialect's notifications (the defect a default agent had), and one more interface where nobody listens.
 */
async function agentWithInterfaces(deadUrl: string): Promise<string> {
  let url = ''
  const server: Server = createServer(async (req, res) => {
    if (req.method === 'GET') {
      const card = {
        ...goodCard(url),
        supportedInterfaces: [
          { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
          { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
          { url: deadUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        ],
      }
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card))
    }
    let body = ''
    for await (const chunk of req) body += chunk
    const { id, method } = JSON.parse(body)
    const v1 = req.headers['a2a-version'] === '1.0'
    const json = (payload: unknown) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id, ...payload! }))
    const task = { id: 't', contextId: 'c', status: { state: v1 ? 'TASK_STATE_COMPLETED' : 'completed' } }
    const stream = (frames: unknown[]) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      res.end(frames.map((frame) => `data: ${JSON.stringify(frame)}\n\n`).join(''))
    }
    if (method === 'message/send') return void json({ result: { kind: 'task', ...task } })
    if (method === 'SendMessage') return void json({ result: { task } })
    if (method === 'SendStreamingMessage') return void stream([{ jsonrpc: '2.0', id, result: { task } }])
    if (method === 'message/stream')
      return void stream([
        { jsonrpc: '2.0', method: 'tasks/statusUpdate', params: { taskId: 't', status: task.status } },
      ])
    json({ error: v1 || method === 'tasks/get' ? { code: -32001, message: 'Task not found' } : { code: -32601 } })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  cleanups.push(() => server.close())
  return url
}

describe('a2a card validate --live, every interface of the A2A v1.0 card', () => {
  it('reports the interface whose stream is not framed as its binding says, and the one nobody serves, by index', async () => {
    const dead = `http://127.0.0.1:${await freePort()}/`
    const url = await agentWithInterfaces(dead)
    const { code, stdout } = await validateLive(url)
    expect(code).toBe(1)
    const errors = stdout.split('\n').filter((line) => line.startsWith('error'))
    expect(errors).toEqual([
      expect.stringMatching(
        new RegExp(
          `^error {3}supportedInterfaces\\[1\\]: JSONRPC 0\\.3 at ${url}: a stream event is not a JSON-RPC response carrying a result`,
        ),
      ),
      expect.stringMatching(
        new RegExp(`^error {3}supportedInterfaces\\[2\\]: JSONRPC 1\\.0 at ${dead}: no answer .*or no connection`),
      ),
    ])
  })
})

describe('a2a card validate --live, a gRPC interface', () => {
  it('calls it in gRPC (the optional packages installed) and finds nothing wrong with a2a start serving it', async () => {
    const agent = await startA2a(
      'a2a-live-grpc-',
      `import { defineAgent } from 'a2a-runtime'
export default defineAgent({
  card: { name: 'Over gRPC', description: 'Served over gRPC too, for the live probes', capabilities: { streaming: true }, skills: [{ id: 'h', name: 'H', description: 'Says hi', tags: ['t'], examples: ['hi'] }] },
  execute(ctx, task) { task.artifact('hi ' + ctx.text); task.complete() },
})
`,
      { A2A_GRPC_PORT: '0' },
    )
    cleanups.push(() => void agent.dispose())
    const card = await (
      await fetch(`${agent.url}.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })
    ).json()
    expect(card.supportedInterfaces.map((entry: { protocolBinding: string }) => entry.protocolBinding)).toContain(
      'GRPC',
    )
    const { code, stdout } = await validateLive(agent.url)
    // Every interface answered in its binding: no finding names one (a gRPC interface only connected to would warn).
    expect(stdout).not.toMatch(/supportedInterfaces/)
    expect(code).toBe(0)
  })
})

describe('a2a card validate --live, an interface the card puts elsewhere', () => {
  it('never sends the credentials to another origin: probed without them, and says why no more was checked', async () => {
    // Where the card sends clients: it records every Authorization header it is sent, and refuses as a locked agent.
    const seen: string[] = []
    const elsewhere: Server = createServer((req, res) => {
      seen.push(req.headers.authorization ?? '(none)')
      req.resume()
      res.writeHead(401, { 'content-type': 'application/json' }).end('{}')
    })
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => elsewhere.close())
    const other = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/`

    let url = ''
    const agent: Server = createServer(async (req, res) => {
      if (req.method === 'GET') {
        const card = {
          ...goodCard(url, { capabilities: { streaming: false } }),
          authentication: { schemes: ['bearer'] },
          securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
          securityRequirements: [{ schemes: { bearer: { list: [] } } }],
          supportedInterfaces: [{ url: other, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
        }
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card))
      }
      let body = ''
      for await (const chunk of req) body += chunk
      const { id, method } = JSON.parse(body)
      if (req.headers.authorization !== 'Bearer live-probe-secret-7c2d')
        return void res.writeHead(401, { 'content-type': 'application/json' }).end('{}')
      const reply =
        method === 'message/send'
          ? { result: { kind: 'task', id: 't', contextId: 'c', status: { state: 'completed' } } }
          : { error: { code: -32602, message: 'Task not found' } }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, ...reply }))
    })
    await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => agent.close())
    url = `http://127.0.0.1:${(agent.address() as AddressInfo).port}/`

    const { code, stdout } = await validateLive(url, ['--token', 'live-probe-secret-7c2d'])
    expect(seen.length).toBeGreaterThan(0)
    expect(seen.every((header) => header === '(none)')).toBe(true)
    expect(stdout).toMatch(
      new RegExp(
        `^warning supportedInterfaces\\[0\\]: JSONRPC 1\\.0 at ${other}: on another host than ${url.slice(0, -1)}`,
        'm',
      ),
    )
    expect(stdout).not.toMatch(/^error/m)
    expect(code).toBe(0)
  })
})
