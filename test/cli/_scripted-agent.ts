import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach } from 'vitest'

/**
 * A JSON-RPC agent on bare node:http that answers as a test scripts it, for what no real agent does on demand: an
 * answer that never comes, a stream left open after its last event, a malformed task. Each call is recorded; the
 * agent is closed (its connections destroyed) after the test that started it.
 */

export interface ScriptedCall {
  method: string
  params: Record<string, any>
  headers: IncomingMessage['headers']
}

/** How one call is answered. */
export type Reply =
  | { result: unknown }
  /** SSE events (ids 1, 2, …); `open` keeps the stream open with keep-alive comments, `cut` destroys it. */
  | { events: unknown[]; open?: boolean; cut?: boolean }
  /** No answer at all: the request stays unanswered until the client gives up. */
  | { hang: true }

export interface ScriptedAgentOptions {
  capabilities?: Record<string, unknown>
  /** The card itself never answers. */
  hangCard?: boolean
  /** More fields of the card. */
  card?: Record<string, unknown>
  /** Other paths the server answers (a file an artifact's part points to), each as its handler writes it. */
  routes?: Record<string, (res: ServerResponse) => void>
}

export interface ScriptedAgent {
  /** The origin with a trailing slash. */
  url: string
  calls: ScriptedCall[]
}

const closing: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closing.splice(0)) await close()
})

export async function startScriptedAgent(
  script: (call: ScriptedCall) => Reply,
  options: ScriptedAgentOptions = {},
): Promise<ScriptedAgent> {
  const agent: ScriptedAgent = { url: '', calls: [] }
  const timers = new Set<NodeJS.Timeout>()
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      if (req.url === '/.well-known/agent-card.json') {
        if (options.hangCard) return
        return json(res, card(agent.url, options))
      }
      const route = options.routes?.[req.url ?? '']
      if (route) return route(res)
      const request = JSON.parse(body) as { id: unknown; method: string; params: Record<string, any> }
      const call: ScriptedCall = { method: request.method, params: request.params, headers: req.headers }
      agent.calls.push(call)
      const reply = script(call)
      if ('hang' in reply) return
      const frame = (result: unknown) => ({ jsonrpc: '2.0', id: request.id, result })
      if ('result' in reply) return json(res, frame(reply.result))
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      for (const [index, event] of reply.events.entries())
        res.write(`id: ${index + 1}\ndata: ${JSON.stringify(frame(event))}\n\n`)
      if (reply.cut) {
        // Flushed first, so the client has the events before the connection drops.
        const timer = setTimeout(() => res.socket?.destroy(), 100)
        timers.add(timer)
      } else if (reply.open) {
        const timer = setInterval(() => res.write(': keep-alive\n\n'), 200)
        timers.add(timer)
      } else res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  agent.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  closing.push(
    () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer)
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return agent
}

function json(res: ServerResponse, body: unknown) {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

function card(origin: string, options: ScriptedAgentOptions) {
  return {
    name: 'Scripted',
    description: 'Answers as the test scripts it',
    version: '1.0.0',
    supportedInterfaces: [{ url: `${origin}rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: options.capabilities ?? { streaming: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'script', name: 'Script', description: 'Scripted answers', tags: ['script'] }],
    ...options.card,
  }
}

/** A v1.0 Task in ProtoJSON. */
export const scriptedTask = (id: string, state: string, extra: Record<string, unknown> = {}) => ({
  id,
  contextId: `ctx-${id}`,
  status: { state, timestamp: '2026-01-01T00:00:00Z' },
  ...extra,
})
