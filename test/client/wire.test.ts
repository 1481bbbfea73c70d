import type { ServerResponse } from 'node:http'
import { describe, expect, it } from 'vitest'
import { type A2AClient, connect, type WireEntry } from '../../runtime/src/client/client.ts'
import { A2AClientFailure, A2AProtocolError } from '../../runtime/src/client/errors.ts'
import { collect, userMessage } from './_agents.ts'
import { CARD_PATH, type RawServer, type RecordedRequest, sendJson, startRawServer, v1Card } from './_raw-server.ts'

/**
 * What the client puts on the wire, seen by a bare recording agent: the version header and the interface's tenant on
 * every request, each credential where the card's scheme says, the wire hook's redaction, and the failures of
 * answers no real agent would give (refusals, silence, an endless line, errors inside a stream).
 */

const TASK = { id: 'task-1', contextId: 'ctx-1', status: { state: 'TASK_STATE_COMPLETED' } }
const CONFIG = { id: 'cfg-1', taskId: 'task-1', url: 'https://hooks.example/a' }

/** The result of each operation, by JSON-RPC method. */
const RESULTS: Record<string, unknown> = {
  SendMessage: { task: TASK },
  GetTask: TASK,
  ListTasks: { tasks: [TASK], nextPageToken: '', pageSize: 50, totalSize: 1 },
  CancelTask: TASK,
  CreateTaskPushNotificationConfig: CONFIG,
  GetTaskPushNotificationConfig: CONFIG,
  ListTaskPushNotificationConfigs: { configs: [CONFIG] },
  DeleteTaskPushNotificationConfig: {},
}

/** The REST operation a method and path name (after `/rest` and any tenant). */
function restOperation(method: string, path: string): string {
  if (path.endsWith('/message:send')) return 'SendMessage'
  if (path.endsWith('/message:stream')) return 'SendStreamingMessage'
  if (path.endsWith(':subscribe')) return 'SubscribeToTask'
  if (path.endsWith(':cancel')) return 'CancelTask'
  if (path.endsWith('/extendedAgentCard')) return 'GetExtendedAgentCard'
  if (/\/pushNotificationConfigs\/[^/]+$/.test(path))
    return method === 'DELETE' ? 'DeleteTaskPushNotificationConfig' : 'GetTaskPushNotificationConfig'
  if (path.endsWith('/pushNotificationConfigs'))
    return method === 'POST' ? 'CreateTaskPushNotificationConfig' : 'ListTaskPushNotificationConfigs'
  if (/\/tasks\/[^/]+$/.test(path)) return 'GetTask'
  return 'ListTasks'
}

function sendEvents(response: ServerResponse, events: unknown[]) {
  response.writeHead(200, { 'content-type': 'text/event-stream' })
  for (const [i, event] of events.entries()) response.write(`id: ${i + 1}\ndata: ${JSON.stringify(event)}\n\n`)
  response.end()
}

/** A recording agent that answers every operation over both bindings with canned results. */
const recordingAgent = (card: (server: RawServer) => object) =>
  startRawServer((request, response, server) => {
    const path = request.url.split('?')[0]!
    if (path === CARD_PATH) return sendJson(response, card(server))
    if (path === '/rpc') {
      const { id, method } = JSON.parse(request.body)
      if (method === 'SendStreamingMessage' || method === 'SubscribeToTask')
        return sendEvents(response, [{ jsonrpc: '2.0', id, result: { task: TASK } }])
      const result = method === 'GetExtendedAgentCard' ? card(server) : RESULTS[method]
      return sendJson(response, { jsonrpc: '2.0', id, result })
    }
    const operation = restOperation(request.method, path)
    if (operation === 'SendStreamingMessage' || operation === 'SubscribeToTask')
      return sendEvents(response, [{ task: TASK }])
    sendJson(response, operation === 'GetExtendedAgentCard' ? card(server) : RESULTS[operation])
  })

/** Calls every operation once. */
async function everyOperation(client: A2AClient) {
  await client.sendMessage({ message: userMessage('hi') })
  await collect(client.sendStreamingMessage({ message: userMessage('hi') }))
  await client.getTask({ id: 'task-1', historyLength: 2 })
  await client.listTasks({ contextId: 'ctx-1', status: 'TASK_STATE_WORKING', pageSize: 5, includeArtifacts: true })
  await client.cancelTask({ id: 'task-1' })
  await collect(client.subscribeToTask('task-1'))
  await client.createTaskPushNotificationConfig({ taskId: 'task-1', url: 'https://hooks.example/a' })
  await client.getTaskPushNotificationConfig({ taskId: 'task-1', id: 'cfg-1' })
  await client.listTaskPushNotificationConfigs({ taskId: 'task-1' })
  await client.deleteTaskPushNotificationConfig({ taskId: 'task-1', id: 'cfg-1' })
  await client.getExtendedAgentCard()
}

const operationRequests = (server: RawServer) => server.requests.filter((r) => !r.url.startsWith(CARD_PATH))

/** A card at the recording agent with each interface's tenant. */
const tenantCard = (tenant: string | undefined) => (server: RawServer) =>
  v1Card(server.url, {
    supportedInterfaces: [
      { url: `${server.url}rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', ...(tenant && { tenant }) },
      { url: `${server.url}rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', ...(tenant && { tenant }) },
    ],
  })

describe('every request', () => {
  it('carries A2A-Version and the JSON-RPC params carry the tenant exactly as declared', async () => {
    const server = await recordingAgent(tenantCard('acme/eu'))
    await everyOperation(await connect({ agentCard: server.url, transports: ['JSONRPC'] }))
    const requests = operationRequests(server)
    expect(requests.map((r) => JSON.parse(r.body).method)).toEqual([
      'SendMessage',
      'SendStreamingMessage',
      'GetTask',
      'ListTasks',
      'CancelTask',
      'SubscribeToTask',
      'CreateTaskPushNotificationConfig',
      'GetTaskPushNotificationConfig',
      'ListTaskPushNotificationConfigs',
      'DeleteTaskPushNotificationConfig',
      'GetExtendedAgentCard',
    ])
    for (const request of requests) {
      expect(request.headers['a2a-version']).toBe('1.0')
      expect(JSON.parse(request.body).params.tenant).toBe('acme/eu')
    }
  })

  it('over HTTP+JSON goes to the operation path under /{tenant}, with the tenant in every body', async () => {
    const server = await recordingAgent(tenantCard('acme/eu'))
    await everyOperation(await connect({ agentCard: server.url, transports: ['HTTP+JSON'] }))
    const requests = operationRequests(server)
    expect(requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /rest/acme%2Feu/message:send',
      'POST /rest/acme%2Feu/message:stream',
      'GET /rest/acme%2Feu/tasks/task-1?historyLength=2',
      'GET /rest/acme%2Feu/tasks?contextId=ctx-1&status=TASK_STATE_WORKING&pageSize=5&includeArtifacts=true',
      'POST /rest/acme%2Feu/tasks/task-1:cancel',
      'POST /rest/acme%2Feu/tasks/task-1:subscribe',
      'POST /rest/acme%2Feu/tasks/task-1/pushNotificationConfigs',
      'GET /rest/acme%2Feu/tasks/task-1/pushNotificationConfigs/cfg-1',
      'GET /rest/acme%2Feu/tasks/task-1/pushNotificationConfigs',
      'DELETE /rest/acme%2Feu/tasks/task-1/pushNotificationConfigs/cfg-1',
      'GET /rest/acme%2Feu/extendedAgentCard',
    ])
    for (const request of requests) {
      expect(request.headers['a2a-version']).toBe('1.0')
      if (request.method === 'POST') {
        expect(request.headers['content-type']).toBe('application/a2a+json')
        expect(JSON.parse(request.body).tenant).toBe('acme/eu')
      }
    }
  })

  it.each(['JSONRPC', 'HTTP+JSON'])('over %s has no tenant when the interface declares none', async (binding) => {
    const server = await recordingAgent(tenantCard(undefined))
    const client = await connect({ agentCard: server.url, transports: [binding] })
    await everyOperation(client)
    await client.sendMessage({ message: userMessage('hi') })
    for (const request of operationRequests(server)) {
      expect(request.body).not.toContain('tenant')
      expect(request.url).toMatch(/^\/(rpc|rest\/(message|tasks|extendedAgentCard))/)
    }
  })

  it('signals the version the caller asked for', async () => {
    const server = await recordingAgent(tenantCard(undefined))
    const client = await connect({ agentCard: server.url, a2aVersion: '1.1' })
    await client.getTask({ id: 'task-1' })
    expect(server.requests.map((r) => r.headers['a2a-version'])).toEqual(['1.1', '1.1'])
  })
})

const TOKEN = 'bearer-secret-5e1f'
const KEY = 'apikey-secret-9c2d'

describe('credentials', () => {
  /** The operation request a client with both credentials sends to an agent declaring `schemes`. */
  async function sentWith(schemes: Record<string, unknown> | undefined, requirements?: unknown[]) {
    const server = await recordingAgent((s) =>
      v1Card(s.url, { ...(schemes && { securitySchemes: schemes }), securityRequirements: requirements }),
    )
    const client = await connect({ agentCard: server.url, bearer: TOKEN, apiKey: KEY })
    await client.getTask({ id: 'task-1' })
    return { request: operationRequests(server)[0]!, client }
  }

  it.each([
    ['an HTTP bearer scheme', { b: { httpAuthSecurityScheme: { scheme: 'Bearer' } } }],
    ['an OAuth 2.0 scheme', { o: { oauth2SecurityScheme: { flows: {} } } }],
    ['an OpenID Connect scheme', { i: { openIdConnectSecurityScheme: { openIdConnectUrl: 'https://id.example' } } }],
  ])('sends the bearer token as Authorization: Bearer to %s, and not the API key', async (_, schemes) => {
    const { request, client } = await sentWith(schemes)
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(JSON.stringify(request)).not.toContain(KEY)
    expect(client.unusedCredentials).toEqual(['apiKey'])
  })

  it('sends the API key in the header its scheme names, and not the bearer token', async () => {
    const { request, client } = await sentWith({ k: { apiKeySecurityScheme: { location: 'header', name: 'X-Key' } } })
    expect(request.headers['x-key']).toBe(KEY)
    expect(JSON.stringify(request)).not.toContain(TOKEN)
    expect(client.unusedCredentials).toEqual(['bearer'])
  })

  it('sends the API key as the query parameter its scheme names', async () => {
    const { request } = await sentWith({ k: { apiKeySecurityScheme: { location: 'query', name: 'key' } } })
    expect(new URL(request.url, 'http://x').searchParams.get('key')).toBe(KEY)
  })

  it('sends the API key as the cookie its scheme names', async () => {
    const { request } = await sentWith({ k: { apiKeySecurityScheme: { location: 'cookie', name: 'session' } } })
    expect(request.headers.cookie).toBe(`session=${KEY}`)
  })

  it('takes the API key scheme the security requirements name first', async () => {
    const { request } = await sentWith(
      {
        a: { apiKeySecurityScheme: { location: 'header', name: 'X-First-Declared' } },
        b: { apiKeySecurityScheme: { location: 'header', name: 'X-Required' } },
      },
      [{ schemes: { b: { list: [] } } }],
    )
    expect(request.headers['x-required']).toBe(KEY)
    expect(request.headers).not.toHaveProperty('x-first-declared')
  })

  it('with no declared scheme sends both where agents usually look (Authorization, X-API-Key)', async () => {
    const { request, client } = await sentWith(undefined)
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(request.headers['x-api-key']).toBe(KEY)
    expect(client.unusedCredentials).toEqual([])
  })

  it('sends service parameters as headers', async () => {
    const server = await recordingAgent((s) => v1Card(s.url))
    const client = await connect({ agentCard: server.url, serviceParams: { 'A2A-Extensions': 'https://ext/a' } })
    await client.getTask({ id: 'task-1' })
    expect(operationRequests(server)[0]!.headers['a2a-extensions']).toBe('https://ext/a')
  })
})

describe('the wire hook', () => {
  it('sees every request, answer and stream event, with no credential or service parameter value in it', async () => {
    const PARAM = 'service-param-secret-77'
    // An agent that echoes what it was sent, credentials included, in its answers and events.
    const server = await startRawServer((request, response, raw) => {
      if (request.url === CARD_PATH)
        return sendJson(
          response,
          v1Card(raw.url, {
            securitySchemes: {
              b: { httpAuthSecurityScheme: { scheme: 'Bearer' } },
              k: { apiKeySecurityScheme: { location: 'query', name: 'key' } },
            },
          }),
        )
      const echo = { ...TASK, metadata: { url: request.url, headers: request.headers, body: request.body } }
      const { id, method } = JSON.parse(request.body)
      if (method === 'SendStreamingMessage')
        return sendEvents(response, [{ jsonrpc: '2.0', id, result: { task: echo } }])
      sendJson(response, { jsonrpc: '2.0', id, result: { task: echo } }, 200, {
        'x-echo': request.headers.authorization!,
      })
    })
    const entries: WireEntry[] = []
    const client = await connect({
      agentCard: server.url,
      bearer: TOKEN,
      apiKey: KEY,
      serviceParams: { 'X-Trace': PARAM },
      wire: (entry) => entries.push(entry),
    })
    await client.sendMessage({ message: userMessage(`my key is ${KEY}`) })
    await collect(client.sendStreamingMessage({ message: userMessage('again') }))
    // The agent did get them all.
    expect(JSON.stringify(server.requests)).toContain(TOKEN)
    expect(JSON.stringify(server.requests)).toContain(KEY)
    expect(JSON.stringify(server.requests)).toContain(PARAM)
    expect(entries.map((e) => e.type)).toEqual([
      'request',
      'response',
      'request',
      'response',
      'request',
      'response',
      'event',
    ])
    const seen = JSON.stringify(entries)
    for (const secret of [TOKEN, KEY, PARAM]) expect(seen).not.toContain(secret)
    expect(seen).toContain('[redacted]')
    const sent = entries[2] as Extract<WireEntry, { type: 'request' }>
    expect(sent.headers.authorization).toBe('[redacted]')
    expect(sent.headers['x-trace']).toBe('[redacted]')
    expect(sent.url).toContain('key=%5Bredacted%5D')
  })
})

async function failureOf(promise: Promise<unknown>) {
  return promise.then(
    () => {
      throw new Error('expected a failure')
    },
    (error: unknown) => error,
  )
}

describe('failures', () => {
  /** An agent answering every operation request with `answer`. */
  const answering = (answer: (request: RecordedRequest, response: ServerResponse) => void, card = {}) =>
    startRawServer((request, response, raw) =>
      request.url === CARD_PATH ? sendJson(response, v1Card(raw.url, card)) : answer(request, response),
    )

  it('a 401 to a request without credentials is credentials-missing; with them, auth-failed with the reason', async () => {
    const server = await answering((_, response) =>
      sendJson(response, { error: { message: 'no' } }, 401, {
        'www-authenticate': 'Bearer error="invalid_token", error_description="The token expired"',
      }),
    )
    const missing = await failureOf(connect({ agentCard: server.url }).then((c) => c.getTask({ id: 't' })))
    expect(missing).toBeInstanceOf(A2AClientFailure)
    expect((missing as A2AClientFailure).kind).toBe('credentials-missing')
    const refused = await failureOf(
      connect({ agentCard: server.url, bearer: TOKEN }).then((c) => c.getTask({ id: 't' })),
    )
    expect((refused as A2AClientFailure).kind).toBe('auth-failed')
    expect((refused as Error).message).toContain('The token expired')
    expect((refused as Error).message).not.toContain(TOKEN)
  })

  it('a 403 with credentials is auth-failed with the body message', async () => {
    const server = await answering((_, response) =>
      sendJson(response, { error: { message: 'Missing scope tasks' } }, 403),
    )
    const refused = await failureOf(connect({ agentCard: server.url, apiKey: KEY }).then((c) => c.getTask({ id: 't' })))
    expect((refused as A2AClientFailure).kind).toBe('auth-failed')
    expect((refused as Error).message).toContain('Missing scope tasks')
  })

  it('an agent silent past timeoutMs is a timeout', async () => {
    const server = await answering(() => {})
    const client = await connect({ agentCard: server.url, timeoutMs: 300 })
    const error = await failureOf(client.getTask({ id: 't' }))
    expect((error as A2AClientFailure).kind).toBe('timeout')
  })

  it("a call aborted by the caller's signal rejects with the signal's reason", async () => {
    const server = await answering(() => {})
    const client = await connect({ agentCard: server.url })
    const controller = new AbortController()
    const pending = client.getTask({ id: 't' }, { signal: controller.signal })
    controller.abort(new Error('stopped by the caller'))
    expect(((await failureOf(pending)) as Error).message).toBe('stopped by the caller')
  })

  it('a stream line longer than the limit is a bad response, read no further', async () => {
    const server = await answering((_, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      response.write(`data: ${'x'.repeat(64 * 1024)}`)
      // Never ends the line: the client must stop on its own.
    })
    const client = await connect({ agentCard: server.url, maxMessageBytes: 16 * 1024 })
    const error = await failureOf(collect(client.subscribeToTask('t')))
    expect((error as A2AClientFailure).kind).toBe('bad-response')
    expect((error as Error).message).toContain('16384 bytes')
  })

  it('reads events split anywhere, with CRLF, CR or LF line ends, comments and multi-line data', async () => {
    const task = JSON.stringify({ task: TASK })
    const status = JSON.stringify({ statusUpdate: { taskId: 'task-1', contextId: 'ctx-1', status: TASK.status } })
    // The status's data in two lines, split between two JSON tokens.
    const cut = status.indexOf('{', 1)
    const wire = `: hello\r\nid: 1\r\ndata: ${task}\r\n\r\nid: 2\rdata: ${status.slice(0, cut)}\rdata: ${status.slice(cut)}\r\r`
    // Each piece written on its own, so the client reads it in separate chunks (a CR and its LF apart).
    const pieces = [
      wire.slice(0, 9),
      wire.slice(9, 16),
      wire.slice(16, 40),
      wire.slice(40, wire.indexOf('\r\n\r\n') + 1),
    ]
    pieces.push(wire.slice(pieces.join('').length, -1), wire.slice(-1))
    const server = await answering(async (_, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      for (const piece of pieces) {
        await new Promise((resolve) => response.write(piece, resolve))
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      response.end()
    })
    const client = await connect({ agentCard: server.url, transports: ['HTTP+JSON'] })
    const events = await collect(client.subscribeToTask('task-1'))
    expect(events).toEqual([
      { response: { task: TASK }, eventId: '1' },
      { response: JSON.parse(status), eventId: '2' },
    ])
  })

  it('a stream whose connection is cut after an event ends unreachable, after that event', async () => {
    const server = await answering((request, response) => {
      const { id } = JSON.parse(request.body)
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      response.write(`id: 7\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { task: TASK } })}\n\n`, () =>
        setTimeout(() => response.socket?.destroy(), 50),
      )
    })
    const client = await connect({ agentCard: server.url })
    const seen: unknown[] = []
    const error = await failureOf(
      (async () => {
        for await (const event of client.subscribeToTask('t')) seen.push(event)
      })(),
    )
    expect(seen).toEqual([{ response: { task: TASK }, eventId: '7' }])
    expect(error).toBeInstanceOf(A2AClientFailure)
    expect((error as A2AClientFailure).kind).toBe('unreachable')
    expect((error as Error).message).toContain('was cut')
  })

  it('an answer that is not JSON is a bad response naming the status', async () => {
    const server = await answering((_, response) => {
      response.writeHead(502, { 'content-type': 'text/html' })
      response.end('<html>Bad gateway</html>')
    })
    const error = await failureOf(connect({ agentCard: server.url }).then((c) => c.getTask({ id: 't' })))
    expect((error as A2AClientFailure).kind).toBe('bad-response')
    expect((error as Error).message).toContain('HTTP 502')
  })

  it('a JSON-RPC error event ends a stream with the A2A error, after the events before it', async () => {
    const server = await answering((request, response) => {
      const { id } = JSON.parse(request.body)
      sendEvents(response, [
        { jsonrpc: '2.0', id, result: { task: TASK } },
        { jsonrpc: '2.0', id, error: { code: -32001, message: 'Task vanished' } },
      ])
    })
    const client = await connect({ agentCard: server.url })
    const seen: unknown[] = []
    const error = await failureOf(
      (async () => {
        for await (const event of client.subscribeToTask('t')) seen.push(event)
      })(),
    )
    expect(seen).toEqual([{ response: { task: TASK }, eventId: '1' }])
    expect(error).toBeInstanceOf(A2AProtocolError)
    expect((error as A2AProtocolError).name).toBe('TaskNotFoundError')
  })

  it('a REST stream ending with a google.rpc.Status ends with the A2A error', async () => {
    const server = await answering((_, response) =>
      sendEvents(response, [
        { task: TASK },
        {
          error: {
            code: 400,
            status: 'FAILED_PRECONDITION',
            message: 'No more',
            details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'UNSUPPORTED_OPERATION' }],
          },
        },
      ]),
    )
    const client = await connect({ agentCard: server.url, transports: ['HTTP+JSON'] })
    const error = await failureOf(collect(client.subscribeToTask('t')))
    expect((error as A2AProtocolError).name).toBe('UnsupportedOperationError')
    expect((error as A2AProtocolError).a2aCode).toBe('UNSUPPORTED_OPERATION')
  })

  it('a request without credentials follows a redirect', async () => {
    const server = await answering((request, response) => {
      if (request.url === '/rpc') {
        response.writeHead(307, { location: '/moved' })
        return response.end()
      }
      sendJson(response, { jsonrpc: '2.0', id: JSON.parse(request.body).id, result: TASK })
    })
    const client = await connect({ agentCard: server.url })
    expect(await client.getTask({ id: 'task-1' })).toEqual(TASK)
  })

  it('a credentialed request does not follow a redirect', async () => {
    const server = await answering((_, response) => {
      response.writeHead(307, { location: 'https://elsewhere.example/rpc' })
      response.end()
    })
    const client = await connect({ agentCard: server.url, bearer: TOKEN })
    const error = await failureOf(client.getTask({ id: 't' }))
    expect((error as A2AClientFailure).kind).toBe('bad-response')
    expect((error as Error).message).toContain('https://elsewhere.example/rpc')
  })
})

describe('answers outside the protocol', () => {
  /** An agent answering every JSON-RPC call with `result`, and every stream with the one event `result`. */
  const answeringWith = (result: unknown) =>
    startRawServer((request, response, raw) => {
      if (request.url === CARD_PATH) return sendJson(response, v1Card(raw.url))
      const { id, method } = JSON.parse(request.body)
      if (method === 'SendStreamingMessage') return sendEvents(response, [{ jsonrpc: '2.0', id, result }])
      sendJson(response, { jsonrpc: '2.0', id, result })
    })

  const task = (extra: Record<string, unknown>) => ({ ...TASK, ...extra })

  it.each([
    [
      'SendMessage',
      { task: task({ artifacts: [{ artifactId: 'a', parts: 'oops' }] }) },
      '`SendMessageResponse.task.artifacts[0].parts` is string, not a list',
    ],
    ['SendMessage', { task: TASK, message: { parts: [] } }, 'has task and message'],
    ['SendMessage', { message: { parts: [null] } }, '`SendMessageResponse.message.parts[0]` is null, not an object'],
    ['GetTask', task({ status: 'done' }), '`Task.status` is string, not an object'],
    ['GetTask', task({ artifacts: { a: 1 } }), '`Task.artifacts` is an object, not a list'],
    ['GetTask', task({ history: [{ parts: [{ text: 7 }] }] }), '`Task.history[0].parts[0].text` is number, not text'],
    ['GetTask', { contextId: 'ctx-1' }, '`Task.id` is undefined, not text'],
    ['CancelTask', task({ artifacts: [{ parts: [] }] }), '`Task.artifacts[0].artifactId` is undefined, not text'],
    ['ListTasks', { tasks: [TASK, 'task-2'] }, '`ListTasksResponse.tasks[1]` is string, not an object'],
    [
      'ListTaskPushNotificationConfigs',
      { configs: [{ url: 'https://hooks.example/a', authentication: 'Bearer' }] },
      '`ListTaskPushNotificationConfigsResponse.configs[0].authentication` is string, not an object',
    ],
    ['GetExtendedAgentCard', { name: 'No interfaces' }, '`supportedInterfaces` is missing'],
  ])('%s answering %j is a bad response naming the field', async (operation, result, problem) => {
    const server = await answeringWith(result)
    const client = await connect({ agentCard: server.url })
    const calls: Record<string, () => Promise<unknown>> = {
      SendMessage: () => client.sendMessage({ message: userMessage('hi') }),
      GetTask: () => client.getTask({ id: 'task-1' }),
      CancelTask: () => client.cancelTask({ id: 'task-1' }),
      ListTasks: () => client.listTasks(),
      ListTaskPushNotificationConfigs: () => client.listTaskPushNotificationConfigs({ taskId: 'task-1' }),
      GetExtendedAgentCard: () => client.getExtendedAgentCard(),
    }
    const error = await failureOf(calls[operation]!())
    expect(error).toBeInstanceOf(A2AClientFailure)
    expect((error as A2AClientFailure).kind).toBe('bad-response')
    expect((error as Error).message).toContain(`answered ${operation} outside A2A v1.0`)
    expect((error as Error).message).toContain(problem)
  })

  it('takes what ProtoJSON leaves out or sets to null as unset', async () => {
    const sparse = { id: 'task-1', status: { state: 'TASK_STATE_WORKING', message: null }, artifacts: null }
    const server = await answeringWith(sparse)
    const client = await connect({ agentCard: server.url })
    expect(await client.getTask({ id: 'task-1' })).toEqual(sparse)
  })

  it('a stream event outside its shape ends the stream as a bad response naming the field', async () => {
    const server = await answeringWith({ artifactUpdate: { taskId: 'task-1', contextId: 'ctx-1' } })
    const client = await connect({ agentCard: server.url })
    const error = await failureOf(collect(client.sendStreamingMessage({ message: userMessage('hi') })))
    expect((error as A2AClientFailure).kind).toBe('bad-response')
    expect((error as Error).message).toContain('`StreamResponse.artifactUpdate.artifact` is undefined, not an object')
  })
})

describe('secrets in failures and in the wire log', () => {
  /** An agent whose every answer is `answer(request)`, as JSON, at HTTP 200 over JSON-RPC and 404 over HTTP+JSON. */
  const echoing = (answer: (request: RecordedRequest) => unknown) =>
    startRawServer((request, response, raw) =>
      request.url === CARD_PATH
        ? sendJson(
            response,
            v1Card(raw.url, { securitySchemes: { b: { httpAuthSecurityScheme: { scheme: 'Bearer' } } } }),
          )
        : sendJson(response, answer(request), request.url === '/rpc' ? 200 : 404),
    )

  it('an answer that is not the protocol quotes it with the token redacted, even where the quote is cut', async () => {
    // The token starts at the 195th character of the quote, cut at 200: cut before redaction, its start would stay.
    const server = await echoing((request) => ({ padding: 'x'.repeat(166), auth: request.headers.authorization }))
    const client = await connect({ agentCard: server.url, bearer: TOKEN, transports: ['JSONRPC'] })
    const error = await failureOf(client.getTask({ id: 't' }))
    expect((error as A2AClientFailure).kind).toBe('bad-response')
    expect((error as Error).message).toContain('xxx')
    expect((error as Error).message).not.toContain(TOKEN.slice(0, 5))
  })

  it.each(['JSONRPC', 'HTTP+JSON'])('an A2A error echoing the token has it redacted over %s', async (binding) => {
    const server = await echoing((request) => {
      const echo = `Task not found for ${request.headers.authorization}`
      const detail = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', echo }
      return request.url === '/rpc'
        ? { jsonrpc: '2.0', id: JSON.parse(request.body).id, error: { code: -32001, message: echo, data: [detail] } }
        : { error: { code: 404, status: 'NOT_FOUND', message: echo, details: [detail] } }
    })
    const client = await connect({ agentCard: server.url, bearer: TOKEN, transports: [binding] })
    const error = (await failureOf(client.getTask({ id: 't' }))) as A2AProtocolError
    expect(error.name).toBe('TaskNotFoundError')
    expect(error.message).toBe('Task not found for Bearer [redacted]')
    expect(JSON.stringify(error.details)).not.toContain(TOKEN)
    expect(JSON.stringify(error.details)).toContain('[redacted]')
  })

  it("never logs a push config's token or credentials, sent or answered, nor a secret the caller names", async () => {
    const WEBHOOK_TOKEN = 'webhook-token-31c9'
    const WEBHOOK_CREDENTIALS = 'webhook-credentials-8d0a'
    const NAMED = 'named-secret-77e2'
    const config = {
      id: 'cfg-1',
      taskId: 'task-1',
      url: 'https://hooks.example/a',
      token: WEBHOOK_TOKEN,
      authentication: { scheme: 'Bearer', credentials: WEBHOOK_CREDENTIALS },
    }
    // The agent keeps the config as it was given, and answers it whole (with the caller's named secret in it).
    const server = await recordingAgent((s) => v1Card(s.url))
    RESULTS.GetTaskPushNotificationConfig = { ...config, note: NAMED }
    try {
      for (const binding of ['JSONRPC', 'HTTP+JSON']) {
        const entries: WireEntry[] = []
        const client = await connect({
          agentCard: server.url,
          transports: [binding],
          secrets: [NAMED],
          wire: (entry) => entries.push(entry),
        })
        await client.createTaskPushNotificationConfig(config)
        await client.sendMessage({
          message: userMessage('hi'),
          configuration: { taskPushNotificationConfig: config },
        })
        await client.getTaskPushNotificationConfig({ taskId: 'task-1', id: 'cfg-1' })
        const seen = JSON.stringify(entries)
        for (const secret of [WEBHOOK_TOKEN, WEBHOOK_CREDENTIALS, NAMED]) expect(seen).not.toContain(secret)
        // The card's exchange, then each call's request and answer.
        expect(entries.length).toBe(8)
      }
      // The agent was sent them all.
      expect(JSON.stringify(server.requests)).toContain(WEBHOOK_TOKEN)
      expect(JSON.stringify(server.requests)).toContain(WEBHOOK_CREDENTIALS)
    } finally {
      RESULTS.GetTaskPushNotificationConfig = CONFIG
    }
  })
})

describe('a card that declares no security scheme', () => {
  const schemeless = () => recordingAgent((s) => v1Card(s.url))

  it('gets the credentials the caller does not withhold, each reported as sent undeclared', async () => {
    const server = await schemeless()
    const client = await connect({ agentCard: server.url, bearer: TOKEN, apiKey: KEY, withholdWithoutScheme: [] })
    await client.getTask({ id: 'task-1' })
    expect(operationRequests(server)[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(client.undeclaredCredentials).toEqual(['bearer', 'apiKey'])
  })

  it('never gets a credential the caller withholds from such a card', async () => {
    const server = await schemeless()
    const client = await connect({
      agentCard: server.url,
      bearer: TOKEN,
      apiKey: KEY,
      withholdWithoutScheme: ['bearer', 'apiKey'],
    })
    await client.getTask({ id: 'task-1' })
    const sent = JSON.stringify(operationRequests(server))
    expect(sent).not.toContain(TOKEN)
    expect(sent).not.toContain(KEY)
    expect(client.unusedCredentials).toEqual(['bearer', 'apiKey'])
    expect(client.undeclaredCredentials).toEqual([])
  })

  it('a card that declares one: nothing is undeclared, whatever is withheld', async () => {
    const server = await recordingAgent((s) =>
      v1Card(s.url, { securitySchemes: { b: { httpAuthSecurityScheme: { scheme: 'Bearer' } } } }),
    )
    const client = await connect({ agentCard: server.url, bearer: TOKEN, withholdWithoutScheme: ['bearer'] })
    await client.getTask({ id: 'task-1' })
    expect(operationRequests(server)[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(client.undeclaredCredentials).toEqual([])
  })
})

describe('an HTTP+JSON error without ErrorInfo', () => {
  /** An HTTP+JSON agent answering every operation with a bare google.rpc.Status at `status`. */
  const failingWith = (status: number) =>
    startRawServer((request, response, raw) =>
      request.url === CARD_PATH
        ? sendJson(response, v1Card(raw.url))
        : sendJson(response, { error: { code: status, message: `HTTP ${status} here` } }, status),
    )

  it.each([
    [404, 'GetTask', 'TaskNotFoundError'],
    [404, 'CancelTask', 'TaskNotFoundError'],
    [404, 'SendMessage', 'MethodNotFoundError'],
    [415, 'SendMessage', 'ContentTypeNotSupportedError'],
    [409, 'CancelTask', 'TaskNotCancelableError'],
  ])('HTTP %i to %s is %s, as JSON-RPC names the same error', async (status, operation, name) => {
    const server = await failingWith(status)
    const client = await connect({ agentCard: server.url, transports: ['HTTP+JSON'] })
    const calls: Record<string, () => Promise<unknown>> = {
      GetTask: () => client.getTask({ id: 'task-1' }),
      CancelTask: () => client.cancelTask({ id: 'task-1' }),
      SendMessage: () => client.sendMessage({ message: userMessage('hi') }),
    }
    const error = (await failureOf(calls[operation]!())) as A2AProtocolError
    expect(error).toBeInstanceOf(A2AProtocolError)
    expect([error.name, error.a2aCode]).toEqual([name, String(status)])
  })
})
