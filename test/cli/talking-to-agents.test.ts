import { execFile } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { sdkTestAgent } from '../_sdk-v1.ts'
import { a2aBin, makeAgentProject } from '../_support.ts'
import {
  a2a as a2aCommand,
  emptyFolder,
  expectNoStack,
  field,
  oneDocument,
  startRuntimeAgent,
} from './_agent-commands.ts'
import { scriptedTask, startScriptedAgent } from './_scripted-agent.ts'

const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(PORT|HOST|A2A_)/.test(key)),
) as Record<string, string>

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
})

function a2a(
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [a2aBin, ...args],
      { cwd: options.cwd, env: { ...cleanEnv, ...options.env }, timeout: 15_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  )
}

const oneLine = (text: string) => {
  expect(text.trim().split('\n')).toHaveLength(1)
  expect(text).not.toMatch(/\n\s+at /)
}

/** A load error: its one line, then the failing line of the agent's file with a caret under the column. */
const oneLineAndFrame = (text: string, sourceLine: string) => {
  const [, shown, caret, ...rest] = text.trimEnd().split('\n')
  expect(shown).toMatch(new RegExp(`^ +\\d+ \\| ${sourceLine.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`))
  expect(caret).toMatch(/^ +\| +\^$/)
  expect(rest).toEqual([])
  expect(text).not.toMatch(/\n\s+at /)
}

/** A `recordingServer` answer: an A2A v1.0 card of one JSON-RPC interface, at `interfaceUrl`. */
const cardAnswer = (name: string, description: string, interfaceUrl: string, capabilities = {}) => ({
  status: 200,
  type: 'application/json',
  body: JSON.stringify({
    name,
    description,
    version: '1.0.0',
    supportedInterfaces: [{ url: interfaceUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities,
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
  }),
})

/** A server that records every request and answers with `answer`. */
async function recordingServer(answer: (path: string) => { status: number; type: string; body: string }) {
  const seen: Array<{ method: string; path: string; authorization?: string }> = []
  const server: Server = createServer((req, res) => {
    seen.push({
      method: req.method!,
      path: req.url!,
      ...(req.headers.authorization && { authorization: req.headers.authorization }),
    })
    req.resume()
    req.on('end', () => {
      const { status, type, body } = answer(req.url!)
      res.writeHead(status, { 'content-type': type }).end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => server.close())
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

describe('credentials', () => {
  const LOCAL = 'project-secret-5d1f'
  /** This runtime's agent taking the bearer token LOCAL, as the project's .env would have it accept. */
  const lockedAgent = () =>
    startRuntimeAgent(
      sdkTestAgent({ name: 'Locked', description: 'Takes a bearer token', authentication: { schemes: ['bearer'] } }),
      { auth: { bearerTokens: [LOCAL] } },
    )

  it("offers the project's own A2A_BEARER_TOKEN to an agent on this machine", async () => {
    const url = await lockedAgent()
    const { code, stdout } = await a2aCommand(['send', '-a', url, 'hi'], { env: { A2A_BEARER_TOKEN: LOCAL } })
    expect(field(stdout, 'State')).toBe('COMPLETED')
    expect(code).toBe(0)
  })

  it("never offers it to a card read from elsewhere (a card file), even one naming this machine's agent", async () => {
    const url = await lockedAgent()
    const folder = emptyFolder()
    const card = await (await fetch(`${url}.well-known/agent-card.json`)).text()
    writeFileSync(join(folder, 'card.json'), card)
    const { code, stdout } = await a2aCommand(['send', '-a', 'card.json', 'hi', '-o', 'json'], {
      cwd: folder,
      env: { A2A_BEARER_TOKEN: LOCAL },
    })
    expect(oneDocument(stdout).error.code).toBe('A2ACLI_ERR_CREDENTIALS_MISSING')
    expect(code).toBe(4)
  })

  it('never offers it to an interface elsewhere that a card on this machine names (its public address)', async () => {
    // The card is served here, but its one interface is another host's (TEST-NET-1: nothing answers there).
    const server = await recordingServer(() => ({
      status: 200,
      type: 'application/json',
      body: JSON.stringify({
        name: 'Published',
        description: 'Served locally, answering at its public address',
        version: '1.0.0',
        supportedInterfaces: [{ url: 'http://192.0.2.1/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
        capabilities: {},
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
        skills: [],
      }),
    }))
    const { stderr } = await a2aCommand(['send', '-a', `${server.url}/`, 'hi', '--debug', '--timeout', '3s'], {
      env: { A2A_BEARER_TOKEN: LOCAL, A2A_API_KEY: 'project-key-77e0' },
    })
    const request = stderr.split('\n').find((line) => line.startsWith('debug: → POST http://192.0.2.1/rpc'))
    expect(request, stderr).toBeDefined()
    expect(request).not.toMatch(/authorization|x-api-key/i)
  })
})

describe('credentials the card does not take, and refusals', () => {
  it('says that --bearer was not sent to an agent whose card takes only an API key', async () => {
    const agent = await startScriptedAgent(() => ({ result: { task: scriptedTask('t1', 'TASK_STATE_COMPLETED') } }), {
      card: {
        securitySchemes: { key: { apiKeySecurityScheme: { location: 'header', name: 'x-api-key' } } },
        securityRequirements: [{ schemes: { key: { list: [] } } }],
      },
    })
    const { code, stderr } = await a2aCommand(['send', '-a', agent.url, 'hi', '--bearer', 'flag-token-3b7e'])
    expect(code).toBe(0)
    expect(stderr).toMatch(/^Warning: --bearer \(A2ACLI_BEARER\) was not sent: .*no scheme that takes a bearer token/m)
    expect(agent.calls[0]!.headers.authorization).toBeUndefined()
  })

  it('to a card that declares no scheme: --bearer goes with a warning, A2ACLI_BEARER does not go', async () => {
    const agent = await startScriptedAgent(() => ({ result: { task: scriptedTask('t1', 'TASK_STATE_COMPLETED') } }))
    const flag = await a2aCommand(['send', '-a', agent.url, 'hi', '--bearer', 'flag-token-51aa'])
    expect(flag.code).toBe(0)
    expect(flag.stderr).toMatch(/^Warning: the agent's card declares no security scheme: --bearer was sent/m)
    expect(agent.calls[0]!.headers.authorization).toBe('Bearer flag-token-51aa')
    const configured = await a2aCommand(['send', '-a', agent.url, 'hi'], { env: { A2ACLI_BEARER: 'env-token-c3d0' } })
    expect(configured.code).toBe(0)
    expect(configured.stderr).toMatch(/^Warning: --bearer \(A2ACLI_BEARER\) was not sent/m)
    expect(agent.calls[1]!.headers.authorization).toBeUndefined()
  })

  it("a refused project credential points at the project's .env, not at --bearer", async () => {
    const url = await startRuntimeAgent(
      sdkTestAgent({ name: 'Locked', description: 'Takes a bearer token', authentication: { schemes: ['bearer'] } }),
      { auth: { bearerTokens: ['the-right-token-0c4e'] } },
    )
    const { code, stdout } = await a2aCommand(['send', '-a', url, 'hi', '-o', 'json'], {
      env: { A2A_BEARER_TOKEN: 'a-stale-token-9d21' },
    })
    const { error } = oneDocument(stdout)
    expect(error.code).toBe('A2ACLI_ERR_AUTH_FAILED')
    expect(error.hint).toContain("this project's own credential")
    expect(error.hint).not.toContain('--bearer')
    expect(code).toBe(4)
  })
})

describe('addresses with a path', () => {
  it("a2a send reads the card under the base path of --agent-card and posts where the card's interface says", async () => {
    let base = ''
    const server = await recordingServer((path) =>
      path.endsWith('agent-card.json')
        ? cardAnswer('Pathy', 'An agent under a path', `${base}/agents/pathy/rpc`, { streaming: false })
        : {
            status: 200,
            type: 'application/json',
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              result: {
                task: {
                  id: 't',
                  contextId: 'c',
                  status: { state: 'TASK_STATE_COMPLETED' },
                  artifacts: [{ artifactId: 'a', parts: [{ text: 'under a path' }] }],
                },
              },
            }),
          },
    )
    base = server.url
    const { code, stdout } = await a2aCommand(['send', 'hi', '-a', `${server.url}/agents/pathy/`])
    expect(stdout).toContain('under a path')
    expect(code).toBe(0)
    expect(server.seen.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /agents/pathy/.well-known/agent-card.json',
      'POST /agents/pathy/rpc',
    ])
  })

  it('a2a card validate <url> reads the card under the path', async () => {
    const server = await recordingServer(() => ({ status: 404, type: 'text/plain', body: 'no' }))
    const { code } = await a2a(['card', 'validate', `${server.url}/agents/pathy/`])
    expect(code).toBe(1)
    expect(server.seen.map((r) => r.path)).toEqual([
      '/agents/pathy/.well-known/agent.json',
      '/agents/pathy/.well-known/agent-card.json',
    ])
  })
})

describe('one-line errors', () => {
  it('a2a card validate http:// says it is not a URL', async () => {
    const { code, stderr } = await a2a(['card', 'validate', 'http://'])
    expect(code).toBe(1)
    expect(stderr).toMatch(/a2a: "http:\/\/" is not a URL/)
    oneLine(stderr)
  })

  it('a2a send -a http:// is a card reference it cannot read: the envelope, exit 3, no stack', async () => {
    const { code, stdout, stderr } = await a2aCommand(['send', 'hi', '-a', 'http://'])
    expect(code).toBe(3)
    expect(stdout).toBe('')
    expect(stderr).toMatch(
      /^Error: http:\/\/ is neither a URL, a host nor a file path\nCode: A2ACLI_ERR_CARD_NOT_FOUND\n/,
    )
    expectNoStack(stderr)
  })

  it('a2a send to a server that answers HTML says its card is not JSON, in one error line', async () => {
    const server = await recordingServer(() => ({ status: 200, type: 'text/html', body: '<html>hello</html>' }))
    const { code, stdout, stderr } = await a2aCommand(['send', 'hi', '-a', server.url])
    expect(code).toBe(1)
    expect(stdout).toBe('')
    expect(stderr).toMatch(/^Error: The agent card at .* is not JSON\nCode: A2ACLI_ERR_CARD_INVALID\n/)
    expectNoStack(stderr)
  })

  it('a2a send to an agent whose interface answers HTML: InvalidAgentResponseError, exit 1, no stack', async () => {
    let base = ''
    const server = await recordingServer((path) =>
      path.endsWith('agent-card.json')
        ? cardAnswer('Webby', 'Its endpoint is a web page', `${base}/rpc`)
        : { status: 200, type: 'text/html', body: '<html>hello</html>' },
    )
    base = server.url
    const json = await a2aCommand(['send', 'hi', '-a', server.url, '-o', 'json'])
    expect(json.code).toBe(1)
    expect(oneDocument(json.stdout).error.code).toBe('InvalidAgentResponseError')
    const text = await a2aCommand(['send', 'hi', '-a', server.url])
    expect(text.stderr.match(/^Error: /gm)).toHaveLength(1)
    expectNoStack(text.stderr)
  })

  // A project path with a space or a non-ASCII letter is printed as is in stacks and percent-encoded in file URLs.
  it.each(['a2a-syntax-', 'a2a syntax é-'])(
    'a2a start and a2a card validate name the file, line and cause of a syntax error (project in %j)',
    async (prefix) => {
      const project = makeAgentProject(
        prefix,
        "import { defineAgent } from 'a2a-runtime'\nexport default defineAgent({\n  card: { name: 'x' description: 'y' },\n})\n",
      )
      cleanups.push(() => rmSync(project, { recursive: true, force: true }))
      for (const args of [['start'], ['card', 'validate']]) {
        const { code, stderr } = await a2a(args, { cwd: project, env: { PORT: '0', HOST: '127.0.0.1' } })
        expect(code).toBe(1)
        expect(stderr).toMatch(/^a2a: src\/agent\.ts:3:\d+ .*Error/)
        oneLineAndFrame(stderr, "  card: { name: 'x' description: 'y' },")
      }
    },
  )

  it.each(['a2a-throws-', 'a2a throws é-'])(
    'a2a start names the file and line of an error thrown at import (project in %j)',
    async (prefix) => {
      const project = makeAgentProject(
        prefix,
        "import { defineAgent } from 'a2a-runtime'\n\nthrow new Error('config missing at import')\n",
      )
      cleanups.push(() => rmSync(project, { recursive: true, force: true }))
      const { code, stderr } = await a2a(['start'], { cwd: project, env: { PORT: '0', HOST: '127.0.0.1' } })
      expect(code).toBe(1)
      expect(stderr).toMatch(/^a2a: src\/agent\.ts:3:\d+ Error: config missing at import/)
      oneLineAndFrame(stderr, "throw new Error('config missing at import')")
    },
  )
})
