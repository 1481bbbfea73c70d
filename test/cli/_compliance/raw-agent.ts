import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'

/**
 * A scripted A2A v1.0 agent on bare node:http, for what a real agent will not do on demand (an UNSPECIFIED state,
 * a stream cut after its first event, an error inside a stream, a tenant on its interface) and to record exactly
 * what the CLI sent: every request's method, path, headers and body. It speaks JSON-RPC at `/rpc` and HTTP+JSON
 * at `/rest` (under `/{tenant}` when the interface has one); each call is answered by `script`.
 */

export interface Recorded {
  method: string
  /** The path with its query. */
  url: string
  headers: IncomingMessage['headers']
  body: string
  /** When it arrived (performance.now()). */
  at: number
  /** The A2A operation (JSON-RPC method, or the one its HTTP+JSON route names); none for the card. */
  operation?: string
  /** The operation's request (JSON-RPC params, or the HTTP+JSON body and path fields). */
  params?: Record<string, unknown>
}

/** How the agent answers one call. */
export type Answer =
  | { result: unknown }
  | { error: { code: number; message: string; reason: string; status: number } }
  /** An SSE stream of these StreamResponses (each with an event id); `cut` destroys the connection after them. */
  | { events: unknown[]; cut?: boolean; errorAfter?: { code: number; message: string } }

export type Script = (call: Recorded, agent: RawAgent) => Answer

export interface RawAgentOptions {
  /** The card's interfaces, in order. @default JSON-RPC, then HTTP+JSON */
  interfaces?: Array<{ binding: 'JSONRPC' | 'HTTP+JSON'; tenant?: string }>
  capabilities?: Record<string, unknown>
  securitySchemes?: Record<string, unknown>
  /** Fields of the card to set over the scripted agent's own. */
  card?: Record<string, unknown>
  /** TLS: the agent listens on https with this key and certificate. */
  tls?: { key: string; cert: string }
}

export interface RawAgent {
  /** The origin with a trailing slash. */
  url: string
  requests: Recorded[]
  /** The calls (requests naming an operation). */
  calls(operation?: string): Recorded[]
  close(): Promise<void>
}

const REST_ROUTES: Array<[string, RegExp, string[]]> = [
  ['POST', /^\/message:send$/, []],
  ['POST', /^\/message:stream$/, []],
  ['GET', /^\/tasks\/([^/:]+)$/, ['id']],
  ['POST', /^\/tasks\/([^/:]+):cancel$/, ['id']],
  ['POST', /^\/tasks\/([^/:]+):subscribe$/, ['id']],
  ['GET', /^\/tasks$/, []],
]
const REST_OPERATIONS = ['SendMessage', 'SendStreamingMessage', 'GetTask', 'CancelTask', 'SubscribeToTask', 'ListTasks']

export async function startRawAgent(script: Script, options: RawAgentOptions = {}): Promise<RawAgent> {
  const requests: Recorded[] = []
  const agent: RawAgent = {
    url: '',
    requests,
    calls: (operation) =>
      requests.filter((call) => call.operation !== undefined && (!operation || call.operation === operation)),
    close: async () => {},
  }
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const call: Recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(),
      }
      requests.push(call)
      answer(call, res)
    })
  }
  const answer = (call: Recorded, res: ServerResponse) => {
    const { pathname, searchParams } = new URL(call.url, 'http://raw')
    if (pathname === '/.well-known/agent-card.json') return json(res, 200, card())
    if (pathname === '/rpc' && call.method === 'POST') {
      const request = JSON.parse(call.body) as { id: unknown; method: string; params: Record<string, unknown> }
      call.operation = request.method
      call.params = request.params
      const answered = script(call, agent)
      if ('events' in answered)
        return stream(res, answered, (event) => ({ jsonrpc: '2.0', id: request.id, result: event }))
      if ('error' in answered)
        return json(res, 200, {
          jsonrpc: '2.0',
          id: request.id,
          error: { code: answered.error.code, message: answered.error.message },
        })
      return json(res, 200, { jsonrpc: '2.0', id: request.id, result: answered.result })
    }
    const rest = /^\/rest(?:\/([^/]+))?(\/.*)$/.exec(pathname)
    const tenantPath = rest && rest[1] !== undefined && !['message:send', 'message:stream', 'tasks'].includes(rest[1])
    const path = rest ? (tenantPath ? rest[2]! : pathname.slice('/rest'.length)) : undefined
    const found =
      path === undefined
        ? -1
        : REST_ROUTES.findIndex(([method, pattern]) => method === call.method && pattern.test(path))
    if (found < 0) return json(res, 404, { error: { code: 404, status: 'NOT_FOUND', message: 'no such route' } })
    const [, pattern, names] = REST_ROUTES[found]!
    const match = pattern.exec(path!)!
    call.operation = REST_OPERATIONS[found]
    call.params = {
      ...(call.body ? (JSON.parse(call.body) as Record<string, unknown>) : {}),
      ...Object.fromEntries(searchParams),
      ...Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(match[index + 1]!)])),
      ...(tenantPath && { tenant: decodeURIComponent(rest![1]!) }),
    }
    const answered = script(call, agent)
    if ('events' in answered) return stream(res, answered, (event) => event)
    if ('error' in answered) {
      const { code, message, reason, status } = answered.error
      const details = [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'a2a-protocol.org' }]
      return json(res, code, { error: { code, status, message, details } })
    }
    return json(res, 200, answered.result)
  }
  const card = () => {
    const origin = agent.url
    return {
      name: 'Scripted',
      description: 'Answers as the compliance checks script it',
      version: '1.0.0',
      supportedInterfaces: (options.interfaces ?? [{ binding: 'JSONRPC' }, { binding: 'HTTP+JSON' }]).map((face) => ({
        url: `${origin}${face.binding === 'JSONRPC' ? 'rpc' : 'rest'}`,
        protocolBinding: face.binding,
        protocolVersion: '1.0',
        ...(face.tenant !== undefined && { tenant: face.tenant }),
      })),
      capabilities: options.capabilities ?? { streaming: true },
      ...(options.securitySchemes && {
        securitySchemes: options.securitySchemes,
        securityRequirements: Object.keys(options.securitySchemes).map((name) => ({
          schemes: { [name]: { list: [] } },
        })),
      }),
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'script', name: 'Script', description: 'Scripted answers', tags: ['script'] }],
      ...options.card,
    }
  }
  const server = options.tls ? createHttpsServer(options.tls, handler) : createHttpServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  agent.url = `${options.tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}/`
  agent.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return agent
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

/** Writes the events as SSE (ids 1, 2, …), then ends, cuts the connection, or sends an error and ends. */
function stream(
  res: ServerResponse,
  answer: Extract<Answer, { events: unknown[] }>,
  frame: (event: unknown) => unknown,
) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  for (const [index, event] of answer.events.entries())
    res.write(`id: ${index + 1}\ndata: ${JSON.stringify(frame(event))}\n\n`)
  if (answer.cut) {
    // Flushed first, so the client has the events before the connection drops.
    setTimeout(() => res.socket?.destroy(), 100)
    return
  }
  if (answer.errorAfter) {
    res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: 1, error: answer.errorAfter })}\n\n`)
    return
  }
  res.end()
}

/** A v1.0 Task in ProtoJSON. */
export const task = (id: string, state: string, extra: Record<string, unknown> = {}) => ({
  id,
  contextId: `ctx-${id}`,
  status: { state, timestamp: '2026-01-01T00:00:00Z' },
  ...extra,
})

export const completedTask = (id: string) =>
  task(id, 'TASK_STATE_COMPLETED', {
    artifacts: [{ artifactId: 'a1', name: 'answer', parts: [{ text: 'scripted answer' }] }],
  })

/** The answer of an agent whose every task is `completedTask(id)`: SendMessage's response, or the Task. */
export const completedAnswer = (call: Recorded): Answer =>
  call.operation === 'SendMessage'
    ? { result: { task: completedTask('t1') } }
    : call.operation === 'SendStreamingMessage' || call.operation === 'SubscribeToTask'
      ? { events: [{ task: completedTask('t1') }] }
      : { result: completedTask(String(call.params?.id ?? 't1')) }
