import { type A2AServer, type ExecutionContext, serveAgent } from 'a2a-runtime'
import { afterEach, describe, expect, it } from 'vitest'
import { agent } from './_agents.ts'
import { captureLogger } from './_logger.ts'

const servers: A2AServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

/** Serves an agent that answers with what it saw of `ctx.agentCore`, as JSON. */
async function serveEcho(): Promise<A2AServer> {
  const seen = agent((ctx: ExecutionContext, task) => {
    task.artifact(JSON.stringify(ctx.agentCore ?? null))
    task.complete()
  })
  const server = await serveAgent(seen, {
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
    logger: captureLogger(),
  })
  servers.push(server)
  return server
}

async function seenWith(url: string, path: string, body: object, headers: Record<string, string>) {
  const response = await fetch(new URL(path, url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  return response.json()
}

const HEADERS = {
  'X-Amzn-Bedrock-AgentCore-Runtime-Session-Id': 'session-0123456789abcdef0123456789abcdef',
  WorkloadAccessToken: 'wat-1',
  'X-Amzn-Bedrock-AgentCore-Runtime-Custom-Tenant': 'acme',
}
const EXPECTED = {
  sessionId: 'session-0123456789abcdef0123456789abcdef',
  workloadAccessToken: 'wat-1',
  customHeaders: { 'x-amzn-bedrock-agentcore-runtime-custom-tenant': 'acme' },
}
const message = (text: string) => ({
  role: 'user',
  messageId: `m-${text}-${Math.random()}`,
  parts: [{ kind: 'text', text }],
})

describe("AgentCore Runtime's request headers reach ctx.agentCore", () => {
  it('over JSON-RPC at POST / (the path AgentCore calls), and not when the request carries none', async () => {
    const server = await serveEcho()
    const answer = await seenWith(
      server.url,
      '/',
      { jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: message('a') } },
      HEADERS,
    )
    expect(JSON.parse(answer.result.artifacts[0].parts[0].text)).toEqual(EXPECTED)
    const plain = await seenWith(
      server.url,
      '/',
      { jsonrpc: '2.0', id: 2, method: 'message/send', params: { message: message('b') } },
      {},
    )
    expect(JSON.parse(plain.result.artifacts[0].parts[0].text)).toBeNull()
  })

  it('over A2A v1.0 JSON-RPC and HTTP+JSON alike', async () => {
    const server = await serveEcho()
    const v1Message = { role: 'ROLE_USER', messageId: `m-${Math.random()}`, parts: [{ text: 'c' }] }
    const rpc = await seenWith(
      server.url,
      '/',
      { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: v1Message } },
      { ...HEADERS, 'A2A-Version': '1.0' },
    )
    expect(JSON.parse(rpc.result.task.artifacts[0].parts[0].text)).toEqual(EXPECTED)
    const rest = await seenWith(
      server.url,
      '/message:send',
      { message: { ...v1Message, messageId: `m-${Math.random()}` } },
      {
        ...HEADERS,
        'A2A-Version': '1.0',
      },
    )
    expect(JSON.parse(rest.task.artifacts[0].parts[0].text)).toEqual(EXPECTED)
  })
})
