import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../_support.ts'
import { startSdkV1Agent } from '../fixtures/sdk-v1-server.ts'

// `a2a conformance` as a process against real agents on 127.0.0.1: this runtime's (serveAgent, every binding,
// streaming, push notifications, credentials, an extended card), a bare node:http agent that breaks four
// requirements on purpose (test/fixtures/broken-agent.mjs; also as one that wants an API key in a query parameter or
// a cookie, and one whose streams never end), and the official SDK's server.

const root = fileURLToPath(new URL('../..', import.meta.url))
const runtimeDir = join(root, 'runtime')
const a2aBin = join(runtimeDir, 'bin/a2a.mjs')

const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(PORT|HOST|A2A_|A2ACLI_)/.test(key)),
) as Record<string, string>

interface Run {
  code: number
  stdout: string
  stderr: string
}

function conformance(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [a2aBin, 'conformance', ...args],
      { cwd: tmpdir(), env: { ...cleanEnv, ...env }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  )
}

interface Report {
  transports: Array<{ transport: string; run: boolean; reason?: string }>
  checks: Array<{
    id: string
    level: string
    transport: string
    status: string
    what: string
    expected?: string
    actual?: string
  }>
  totals: { passed: number; failed: number; skipped: number }
}

/** Starts a process that prints `url <address>` once listening; stopped after the file's tests, by its PID. */
async function serve(command: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const child: ChildProcess = spawn(process.execPath, command, {
    cwd: options.cwd ?? root,
    env: { ...cleanEnv, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let output = ''
  child.stderr!.on('data', (chunk) => {
    output += chunk
  })
  const url = await new Promise<string>((resolve, reject) => {
    let seen = ''
    child.stdout!.on('data', (chunk) => {
      seen += chunk
      const found = /^url (\S+)$/m.exec(seen)
      if (found) resolve(found[1]!)
    })
    child.once('exit', (code) => reject(new Error(`the agent exited (${code}): ${output}`)))
  })
  return url
}

const children: ChildProcess[] = []
const folders: string[] = []
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

const AGENT = `import { defineAgent, serveAgent } from 'a2a-runtime'
const agent = defineAgent({
  card: {
    name: 'Conformant',
    description: 'Answers every message at once',
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: true },
    authentication: { schemes: ['bearer'] },
    extendedCard: { skills: [{ id: 'more', name: 'More', description: 'For callers it knows', tags: ['more'] }] },
    skills: [{ id: 'echo', name: 'Echo', description: 'Says it back', tags: ['echo'] }],
  },
  execute(ctx, task) {
    task.artifact('echo ' + ctx.text)
    task.complete()
  },
})
const server = await serveAgent(agent, {
  port: 0,
  hostname: '127.0.0.1',
  grpcPort: Number(process.env.GRPC_PORT),
  auth: { bearerTokens: ['conformance-secret'] },
  // Webhooks on loopback over http: the push config checks register one there (never called: the task has ended).
  push: { allow: ['127.0.0.1'], allowHttp: true },
})
console.log('url ' + server.url)
`

describe('a2a conformance', () => {
  let runtimeAgent = ''
  let brokenAgent = ''
  let queryKeyAgent = ''
  let cookieKeyAgent = ''
  let floodAgent = ''
  beforeAll(async () => {
    const project = mkdtempSync(join(tmpdir(), 'a2a-conformance-'))
    folders.push(project)
    mkdirSync(join(project, 'node_modules'))
    symlinkSync(runtimeDir, join(project, 'node_modules/a2a-runtime'), 'dir')
    writeFileSync(join(project, 'agent.mjs'), AGENT)
    const grpcPort = await freePort()
    const broken = [join(root, 'test/fixtures/broken-agent.mjs')]
    ;[runtimeAgent, brokenAgent, queryKeyAgent, cookieKeyAgent, floodAgent] = await Promise.all([
      serve([join(project, 'agent.mjs')], { cwd: project, env: { GRPC_PORT: String(grpcPort) } }),
      serve(broken),
      serve(broken, { env: { API_KEY: 'key-secret-42', API_KEY_IN: 'query' } }),
      serve(broken, { env: { API_KEY: 'key-secret-42', API_KEY_IN: 'cookie' } }),
      serve(broken, { env: { STREAM: 'flood' } }),
    ])
  })

  it("passes this runtime's agent over JSON-RPC, HTTP+JSON and gRPC, with its credentials: exit 0", async () => {
    const run = await conformance([runtimeAgent, '-o', 'json', '--webhook', 'http://127.0.0.1:9/conformance-hook'], {
      A2ACLI_BEARER: 'conformance-secret',
    })
    const report = JSON.parse(run.stdout) as Report
    expect(report.checks.filter((check) => check.status === 'fail')).toEqual([])
    expect(run.code).toBe(0)
    expect(report.transports.map(({ transport, run }) => [transport, run])).toEqual([
      ['jsonrpc', true],
      ['http_json', true],
      ['grpc', true],
    ])
    // The checks that need credentials, push notifications and streams ran on every transport, and passed.
    for (const id of ['AUTH-SERVER-002', 'PUSH-CREATE-001', 'PUSH-DEL-001', 'CORE-STREAM-003', 'CORE-CANCEL-002'])
      expect(
        report.checks.filter((check) => check.id === id && check.status === 'pass').map((check) => check.transport),
        id,
      ).toEqual(['jsonrpc', 'http_json', 'grpc'])
    expect(report.totals.failed).toBe(0)
    expect(report.checks.every((check) => check.level === 'MUST')).toBe(true)
  })

  it('names each requirement a broken agent breaks, and only those: exit 1', async () => {
    const json = await conformance([brokenAgent, '-o', 'json'])
    expect(json.code).toBe(1)
    const report = JSON.parse(json.stdout) as Report
    const failed = report.checks
      .filter((check) => check.status === 'fail')
      .map((check) => `${check.id} ${check.transport}`)
    expect(failed.sort()).toEqual(
      [
        'CARD-STRUCT-001 card',
        'CORE-GET-002 jsonrpc',
        'CORE-STREAM-003 jsonrpc',
        'CORE-STREAM-003 http_json',
        'HTTP_JSON-ERR-002 http_json',
      ].sort(),
    )
    expect(report.checks.find((check) => check.id === 'CORE-GET-002' && check.transport === 'jsonrpc')).toMatchObject({
      expected: 'TaskNotFoundError: JSON-RPC error -32001',
      actual: expect.stringContaining('-32602'),
    })

    const text = await conformance([brokenAgent])
    expect(text.code).toBe(1)
    expect(text.stdout).toMatch(/^FAIL {2}CARD-STRUCT-001 +MUST +card /m)
    expect(text.stdout).toMatch(/^FAIL {2}HTTP_JSON-ERR-002 +MUST +http_json /m)
    expect(text.stdout).toContain('Summary: ')
    expect(text.stdout).toContain('Actual: missing or malformed: version')
  })

  it('stops where credentials are missing or refused: exit 4 with the error envelope every a2a command gives', async () => {
    const missing = await conformance([runtimeAgent, '-o', 'json', '--transport', 'http_json'])
    expect(missing.code).toBe(4)
    const { error } = JSON.parse(missing.stdout.trim().split('\n').at(-1)!)
    expect(error).toMatchObject({ code: 'A2ACLI_ERR_CREDENTIALS_MISSING', a2aCode: null })
    // The hint names the credential the card's scheme asks for.
    expect(error.hint).toContain('--bearer')

    const refused = await conformance([runtimeAgent, '-o', 'json', '--transport', 'jsonrpc', '--bearer', 'wrong'])
    expect(refused.code).toBe(4)
    expect(JSON.parse(refused.stdout.trim().split('\n').at(-1)!).error).toMatchObject({
      code: 'A2ACLI_ERR_AUTH_FAILED',
      a2aCode: null,
    })
    expect(refused.stdout + refused.stderr).not.toContain('wrong')
  })

  it("sends the project's own A2A_BEARER_TOKEN as its agent reads it (name:secret), to an agent on this machine", async () => {
    const run = await conformance([runtimeAgent, '-o', 'json', '--transport', 'jsonrpc'], {
      A2A_BEARER_TOKEN: 'alice:conformance-secret',
    })
    expect(run.code).toBe(0)
    expect((JSON.parse(run.stdout) as Report).totals.failed).toBe(0)

    // Refused, the hint names the project's own credential, not a flag never given.
    const refused = await conformance([runtimeAgent, '-o', 'json', '--transport', 'jsonrpc'], {
      A2A_BEARER_TOKEN: 'alice:not-the-secret',
    })
    expect(refused.code).toBe(4)
    expect(JSON.parse(refused.stdout.trim().split('\n').at(-1)!).error).toMatchObject({
      code: 'A2ACLI_ERR_AUTH_FAILED',
      hint: expect.stringContaining("this project's own credential"),
    })
  })

  it("places an API key where the card's scheme says (a query parameter, a cookie), and no bearer token it takes not", async () => {
    for (const agent of [queryKeyAgent, cookieKeyAgent]) {
      const run = await conformance([agent, '-o', 'json', '--api-key', 'key-secret-42', '--bearer', 'not-for-this'])
      expect(run.code, run.stdout + run.stderr).toBe(1)
      const report = JSON.parse(run.stdout) as Report
      // Reached with the key (the agent refuses every call without it), and refused without it.
      expect(report.checks.filter((check) => check.id === 'AUTH-SERVER-002').map((check) => check.status)).toEqual([
        'pass',
        'pass',
      ])
      expect(report.checks.filter((check) => check.status === 'fail').map((check) => check.id)).not.toContain(
        'CARD-PROTO-002',
      )
      expect(run.stderr).toMatch(
        /^Warning: --bearer is not sent: the card declares no scheme that takes a bearer token$/m,
      )
    }
  })

  it('sends a card that declares no security scheme a credential given as a flag, saying so, and no configured one', async () => {
    const flag = await conformance([brokenAgent, '-o', 'json', '--bearer', 'flag-token'])
    expect(flag.code).toBe(1)
    expect(flag.stderr).toMatch(/^Warning: --bearer is sent, though the card declares no security scheme$/m)
    const configured = await conformance([brokenAgent, '-o', 'json'], { A2ACLI_BEARER: 'configured-token' })
    expect(configured.code).toBe(1)
    expect(configured.stderr).toMatch(/^Warning: A2ACLI_BEARER is not sent: the card declares no security scheme/m)
  })

  it('reads the agent as every a2a command reads --agent-card: a card URL as it is, no card file', async () => {
    const cardUrl = new URL('agents/broken', brokenAgent).href
    const run = await conformance([cardUrl, '-o', 'json'])
    const report = JSON.parse(run.stdout) as Report & { card: string }
    expect(report.card).toBe(cardUrl)
    expect(report.checks.find((check) => check.id === 'CARD-DISC-001')).toMatchObject({
      status: 'pass',
      what: 'the card is served at the card URL given (not at /.well-known/agent-card.json)',
    })
    const file = await conformance(['./agent-card.json', '-o', 'json'])
    expect(file.code).toBe(2)
    expect(JSON.parse(file.stdout).error).toMatchObject({ code: 'A2ACLI_ERR_USAGE', a2aCode: null })
  })

  it('stops reading a stream that never ends, and says why', async () => {
    const run = await conformance([floodAgent, '-o', 'json', '--timeout', '60'])
    expect(run.code, run.stderr).toBe(1)
    const report = JSON.parse(run.stdout) as Report
    for (const [id, transport] of [
      ['JSONRPC-SSE-001', 'jsonrpc'],
      ['HTTP_JSON-SSE-001', 'http_json'],
    ])
      expect(report.checks.find((check) => check.id === id && check.transport === transport)).toMatchObject({
        status: 'fail',
        actual: expect.stringContaining('larger than'),
      })
  })

  it('exits 3 when nothing answers at the address, and 2 for a bad flag', async () => {
    const unreachable = await conformance([`http://127.0.0.1:${await freePort()}/`])
    expect(unreachable.code).toBe(3)
    expect(unreachable.stderr).toMatch(/^Code: A2ACLI_ERR_UNREACHABLE$/m)
    const usage = await conformance([brokenAgent, '--level', 'sometimes'])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain('--level sometimes')
    const json = await conformance([brokenAgent, '--level', 'sometimes', '-o', 'json'])
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout)).toEqual({
      error: {
        code: 'A2ACLI_ERR_USAGE',
        message: '--level sometimes: expected must, should or may',
        hint: 'see a2a conformance --help',
        a2aCode: null,
      },
    })
    expect((await conformance([brokenAgent, '--transport', 'smtp'])).code).toBe(2)
    expect((await conformance([brokenAgent, '--no-such-flag'])).code).toBe(2)
  })

  it("checks the official SDK's own server (test/fixtures/sdk-v1-server.ts) over both its bindings", async () => {
    const sdk = await startSdkV1Agent()
    try {
      const run = await conformance([sdk.url, '-o', 'json', '--webhook', 'http://127.0.0.1:9/conformance-hook'])
      const report = JSON.parse(run.stdout) as Report
      expect(report.checks.filter((check) => check.status === 'fail')).toEqual([])
      expect(run.code).toBe(0)
    } finally {
      await sdk.close()
    }
  })
})
