import { execFile } from 'node:child_process'
import { rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { agentBase, clientHeaders } from '../../runtime/src/cli/_client.ts'
import { a2aBin, makeAgentProject } from '../_support.ts'

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
  it("offers the project's own A2A_BEARER_TOKEN and A2A_API_KEY only to an agent on this machine", () => {
    const saved = { ...process.env }
    process.env.A2A_BEARER_TOKEN = 'local-secret'
    process.env.A2A_API_KEY = 'local-key'
    try {
      expect(clientHeaders(agentBase('http://127.0.0.1:3000/'), {})).toEqual({
        authorization: 'Bearer local-secret',
        'x-api-key': 'local-key',
      })
      expect(clientHeaders(agentBase('http://localhost:3000/'), {})).toEqual({
        authorization: 'Bearer local-secret',
        'x-api-key': 'local-key',
      })
      expect(clientHeaders(agentBase('https://agents.example.com/'), {})).toEqual({})
      expect(clientHeaders(agentBase('https://agents.example.com/'), { token: 'given' })).toEqual({
        authorization: 'Bearer given',
      })
    } finally {
      process.env = saved
    }
  })
})

describe('addresses with a path', () => {
  it('a2a send reads the card and posts under the path of --url', async () => {
    const card = JSON.stringify({ name: 'Pathy', capabilities: { streaming: false } })
    const task = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      result: {
        kind: 'task',
        id: 't',
        contextId: 'c',
        status: { state: 'completed' },
        artifacts: [{ artifactId: 'a', parts: [{ kind: 'text', text: 'under a path' }] }],
        history: [],
      },
    })
    const server = await recordingServer((path) =>
      path.endsWith('agent.json')
        ? { status: 200, type: 'application/json', body: card }
        : { status: 200, type: 'application/json', body: task },
    )
    const { code, stdout } = await a2a(['send', 'hi', '--url', `${server.url}/agents/pathy`])
    expect(stdout).toBe('under a path\n')
    expect(code).toBe(0)
    expect(server.seen.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /agents/pathy/.well-known/agent.json',
      'POST /agents/pathy/',
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
  it.each([
    [['send', 'hi', '--url', 'notaurl'], /a2a: "notaurl" is not a URL/],
    [['card', 'validate', 'http://'], /a2a: "http:\/\/" is not a URL/],
  ])('%j', async (args, message) => {
    const { code, stderr } = await a2a(args)
    expect(code).toBe(1)
    expect(stderr).toMatch(message)
    oneLine(stderr)
  })

  it('a2a send to a server that answers HTML says it is not JSON', async () => {
    const server = await recordingServer(() => ({ status: 200, type: 'text/html', body: '<html>hello</html>' }))
    const { code, stderr } = await a2a(['send', 'hi', '--url', server.url])
    expect(code).toBe(1)
    expect(stderr).toMatch(/a2a: The card at .* is not JSON \(HTTP 200, text\/html\)/)
    oneLine(stderr)
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
