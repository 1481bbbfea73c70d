import { randomUUID } from 'node:crypto'
import { createMemoryStore } from 'a2a-runtime'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type OidcIssuer, startOidcIssuer, TEST_AUDIENCE } from '../_oidc-issuer.ts'
import { agent, echoAgent, gatedAgent } from './_agents.ts'
import { expectStatus, type RestReply, rest, restFetch, restResult, V1_HEADER } from './_rest.ts'
import { eventReader, readEvents } from './_sse.ts'
import { inProcess, nodeServer, type Target } from './_transports.ts'

/**
 * A2A v1.0's HTTP+JSON binding (§11) on the wire: its paths and methods (each under a tenant too), query parameters,
 * `google.rpc.Status` errors at the §5.4 statuses, SSE framing, and the checks every request gets (credentials, body
 * limits, web origins), over raw HTTP. What each operation does is checked through both bindings by
 * rest-behaviour.test.ts.
 */

const message = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra },
})

/** Asks a question on "ask" (input-required), answers anything else at once. */
const askingAgent = agent(
  (ctx, task) => {
    if (ctx.text === 'ask' && ctx.history.length === 1) return task.inputRequired('Which city?')
    task.artifact(`Echo: ${ctx.text}`)
    task.complete()
  },
  { card: { capabilities: { streaming: true } }, cancel: (_ctx, task) => task.cancel('Stopped') },
)

async function sendTask(target: Target, text: string, path = '/message:send'): Promise<any> {
  const sent = await restResult(target, 'POST', path, { body: message(text) })
  expect(Object.keys(sent)).toEqual(['task'])
  return sent.task
}

/** The bare StreamResponses of a whole stream, which must end on its own. */
async function streamed(response: Response): Promise<{ events: any[]; ids: number[] }> {
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream\b/)
  const { events, ids } = await readEvents(response, 'numbered')
  for (const event of events) {
    expect(Object.keys(event)).toHaveLength(1)
    expect(['task', 'message', 'statusUpdate', 'artifactUpdate']).toContain(Object.keys(event)[0])
  }
  return { events, ids }
}

describe.each([inProcess, nodeServer])('HTTP+JSON routes ($name)', (transport) => {
  it('serves each operation at its path and method, and the same under a tenant', async () => {
    const target = await transport.start(askingAgent)
    for (const prefix of ['', '/acme']) {
      const task = await sendTask(target, 'hello', `${prefix}/message:send`)
      expect(task.status.state).toBe('TASK_STATE_COMPLETED')
      const got = await restResult(target, 'GET', `${prefix}/tasks/${task.id}`)
      expect(got.id).toBe(task.id)
      expect(got.artifacts[0].parts).toEqual([{ text: 'Echo: hello' }])
      const listed = await restResult(target, 'GET', `${prefix}/tasks`)
      expect(listed.tasks.map((t: any) => t.id)).toContain(task.id)
      const asked = await sendTask(target, 'ask', `${prefix}/message:send`)
      const canceled = await restResult(target, 'POST', `${prefix}/tasks/${asked.id}:cancel`)
      expect(canceled.status.state).toBe('TASK_STATE_CANCELED')
      const stream = await restFetch(target, 'POST', `${prefix}/message:stream`, { body: message('streamed') })
      expect((await streamed(stream)).events.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED')
      const card = await rest(target, 'GET', `${prefix}/extendedAgentCard`)
      expectStatus(card, 400, 'FAILED_PRECONDITION', 'UNSUPPORTED_OPERATION')
    }
    // `/tasks/tasks` is the task named "tasks" (the reading without a tenant comes first), not tenant "tasks"'s list;
    // a tenant of that name still sends: the reading without a tenant has no POST there.
    expectStatus(await rest(target, 'GET', '/tasks/tasks'), 404, 'NOT_FOUND', 'TASK_NOT_FOUND')
    expect((await sendTask(target, 'hi', '/tasks/message:send')).status.state).toBe('TASK_STATE_COMPLETED')
  })

  it('is listed in the v1.0 card right after JSON-RPC, at the same base address; the v0.3 card keeps JSON-RPC only', async () => {
    const target = await transport.start(echoAgent)
    const v1 = await (await target.fetch('/.well-known/agent-card.json', { headers: V1_HEADER })).json()
    expect(v1.supportedInterfaces).toEqual([
      { url: target.url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: target.url.replace(/\/$/, ''), protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: `${target.url}v0.3`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ])
    const v03 = await (await target.fetch('/.well-known/agent-card.json')).json()
    expect(v03.additionalInterfaces).toEqual([{ url: `${target.url}v0.3`, transport: 'JSONRPC' }])
    // Clients append the operation's path to the interface's url: the one path, not `//message:send`.
    expect(new URL(`${v1.supportedInterfaces[1].url}/message:send`).pathname).toBe('/message:send')
  })

  it('answers a path no operation has, and a known path with another method with 405 and Allow', async () => {
    const target = await transport.start(echoAgent)
    for (const path of ['/no-such-path', '/tasks/', '/message', '/a/b/tasks', '/tasks/x/pushNotificationConfigs/']) {
      const reply = await rest(target, 'GET', `${path}?secret-9b1c`)
      expectStatus(reply, 404, 'NOT_FOUND')
      expect(JSON.stringify(reply.body), path).not.toMatch(/secret|such|\/a\/b/)
    }
    const cases: Array<[string, string, string]> = [
      ['GET', '/message:send', 'POST, OPTIONS'],
      ['DELETE', '/tasks/abc', 'GET, OPTIONS'],
      ['POST', '/tasks', 'GET, OPTIONS'],
      ['PUT', '/tasks/abc:subscribe', 'GET, POST, OPTIONS'],
      ['PATCH', '/acme/tasks/abc/pushNotificationConfigs', 'GET, POST, OPTIONS'],
      ['POST', '/tasks/abc/pushNotificationConfigs/cfg', 'GET, DELETE, OPTIONS'],
    ]
    // A method named like a prototype key finds no operation (Node's parser refuses such a method itself).
    if (transport === inProcess) cases.push(['constructor', '/tasks', 'GET, OPTIONS'])
    for (const [method, path, allow] of cases) {
      const reply = await rest(target, method, path)
      expectStatus(reply, 405, 'UNIMPLEMENTED')
      expect(reply.headers.get('allow'), `${method} ${path}`).toBe(allow)
    }
    const options = await target.fetch('/tasks/abc/pushNotificationConfigs/cfg', { method: 'OPTIONS' })
    expect(options.status).toBe(204)
    expect(options.headers.get('allow')).toBe('GET, DELETE, OPTIONS')
  })

  it('answers 200 with application/a2a+json throughout: a created config, and a deleted one as {}', async () => {
    const target = await transport.start(
      agent((_ctx, task) => task.complete(), { card: { capabilities: { pushNotifications: true } } }),
      { push: { allow: ['127.0.0.1'], allowHttp: true } },
    )
    const task = await sendTask(target, 'hi')
    const base = `/acme/tasks/${task.id}/pushNotificationConfigs`
    const created = await restResult(target, 'POST', base, {
      body: { id: 'cfg-1', url: 'http://127.0.0.1:9/hook', token: 'tok' },
    })
    expect(created).toEqual({ id: 'cfg-1', taskId: task.id, url: 'http://127.0.0.1:9/hook', token: 'tok' })
    expect(await restResult(target, 'GET', `${base}/cfg-1`)).toEqual(created)
    expect(await restResult(target, 'GET', base)).toEqual({ configs: [created], nextPageToken: '' })
    expect(await restResult(target, 'DELETE', `${base}/cfg-1`)).toEqual({})
    expectStatus(await rest(target, 'GET', `${base}/cfg-1`), 404, 'NOT_FOUND', 'TASK_NOT_FOUND')
    // An id with a slash in it travels percent-encoded, as one segment.
    await restResult(target, 'POST', base, { body: { id: 'a/b', url: 'http://127.0.0.1:9/hook' } })
    expect((await restResult(target, 'GET', `${base}/a%2Fb`)).id).toBe('a/b')
  })
})

describe.each([inProcess, nodeServer])('HTTP+JSON query parameters ($name)', (transport) => {
  it('reads integers, booleans, timestamps and enums by name, camelCase or snake_case; ignores unknown ones', async () => {
    const target = await transport.start(askingAgent)
    const done = await sendTask(target, 'one')
    const asked = await sendTask(target, 'ask')
    const context = asked.contextId
    // historyLength, as an integer: one message of two.
    expect((await restResult(target, 'GET', `/tasks/${asked.id}?historyLength=1`)).history).toHaveLength(1)
    expect((await restResult(target, 'GET', `/tasks/${asked.id}?history_length=0`)).history).toBeUndefined()
    const ids = async (query: string) =>
      (await restResult(target, 'GET', `/tasks?${query}`)).tasks.map((task: any) => task.id)
    expect(await ids('status=TASK_STATE_INPUT_REQUIRED')).toEqual([asked.id])
    expect(await ids(`contextId=${context}&unknown=1&also=x`)).toEqual([asked.id])
    expect(await ids(`context_id=${context}`)).toEqual([asked.id])
    expect(await ids('pageSize=1')).toHaveLength(1)
    expect((await ids('page_size=2')).sort()).toEqual([asked.id, done.id].sort())
    expect(await ids('statusTimestampAfter=2000-01-01T00:00:00Z')).toHaveLength(2)
    expect(await ids('statusTimestampAfter=2999-01-01T00:00:00.000%2B02:00')).toEqual([])
    const page = await restResult(target, 'GET', '/tasks?pageSize=1')
    expect(page.pageSize).toBe(1)
    const next = await ids(`pageSize=1&pageToken=${encodeURIComponent(page.nextPageToken)}`)
    expect([...page.tasks.map((task: any) => task.id), ...next].sort()).toEqual([asked.id, done.id].sort())
    const withArtifacts = await restResult(target, 'GET', `/tasks?includeArtifacts=true&contextId=${done.contextId}`)
    expect(withArtifacts.tasks[0].artifacts).toHaveLength(1)
    const without = await restResult(target, 'GET', `/tasks?include_artifacts=false&contextId=${done.contextId}`)
    expect(without.tasks[0].artifacts).toBeUndefined()
  })

  it('refuses a bad value with 400 INVALID_ARGUMENT naming the parameter, and a parameter given twice', async () => {
    const target = await transport.start(echoAgent)
    const cases: Array<[string, string]> = [
      ['/tasks?pageSize=ten', 'pageSize'],
      ['/tasks?pageSize=1.5', 'pageSize'],
      ['/tasks?pageSize=0', 'pageSize'],
      ['/tasks?page_size=500', 'page_size'],
      ['/tasks?includeArtifacts=yes', 'includeArtifacts'],
      ['/tasks?includeArtifacts=1', 'includeArtifacts'],
      ['/tasks?statusTimestampAfter=yesterday', 'statusTimestampAfter'],
      ['/tasks?statusTimestampAfter=2025-11-09', 'statusTimestampAfter'],
      ['/tasks?status=DONE', 'status'],
      ['/tasks?historyLength=-1', 'historyLength'],
      ['/tasks/abc?historyLength=many', 'historyLength'],
      ['/tasks?pageSize=1&pageSize=2', 'pageSize'],
      ['/tasks?contextId=a&contextId=b', 'contextId'],
      ['/tasks?pageSize=1&page_size=2', 'pageSize'],
    ]
    for (const [path, name] of cases) {
      const error = expectStatus(await rest(target, 'GET', path), 400, 'INVALID_ARGUMENT')
      expect(error.message, path).toContain(`\`${name}\``)
      expect(error.details, path).toEqual([
        {
          '@type': 'type.googleapis.com/google.rpc.BadRequest',
          fieldViolations: [{ field: name, description: error.message }],
        },
      ])
    }
  })

  it("refuses a tenant or task id in the query or body that differs from the path's, and serves the same one or an empty one", async () => {
    const target = await transport.start(askingAgent)
    const task = await sendTask(target, 'hello', '/acme/message:send')
    const differs = /^`tenant` "other" differs from the path's tenant "acme"/
    const refused: Array<[RestReply, RegExp]> = [
      [await rest(target, 'GET', `/acme/tasks/${task.id}?tenant=other`), differs],
      [await rest(target, 'GET', '/acme/tasks?tenant=other'), differs],
      [await rest(target, 'POST', `/acme/tasks/${task.id}:cancel`, { body: { tenant: 'other' } }), differs],
      [await rest(target, 'POST', '/acme/message:send', { body: { ...message('not run'), tenant: 'other' } }), differs],
      [
        await rest(target, 'POST', '/acme/message:send', { body: { ...message('not run'), tenant: 7 } }),
        /^`tenant` must be a string/,
      ],
      // The path's task id, likewise.
      [
        await rest(target, 'POST', `/acme/tasks/${task.id}:cancel`, { body: { id: 'other' } }),
        new RegExp(`^\`id\` "other" differs from the path's task id "${task.id}"`),
      ],
      [
        await rest(target, 'POST', `/tasks/${task.id}/pushNotificationConfigs`, {
          body: { taskId: 'other', url: 'https://hooks.example.com/a2a' },
        }),
        new RegExp(`^\`taskId\` "other" differs from the path's task id "${task.id}"`),
      ],
    ]
    for (const [reply, said] of refused) expect(expectStatus(reply, 400, 'INVALID_ARGUMENT').message).toMatch(said)
    // Nothing was run for the refused sends.
    expect((await restResult(target, 'GET', '/acme/tasks')).tasks.map((t: any) => t.id)).toEqual([task.id])
    for (const query of ['?tenant=acme', '?tenant=', ''])
      expect((await restResult(target, 'GET', `/acme/tasks/${task.id}${query}`)).id).toBe(task.id)
    // JSON's null is the field left unset, as ProtoJSON reads it.
    const asked = await sendTask(target, 'ask', '/acme/message:send')
    const unset = await restResult(target, 'POST', `/acme/tasks/${asked.id}:cancel`, {
      body: { tenant: null, id: asked.id },
    })
    expect(unset.status.state).toBe('TASK_STATE_CANCELED')
    const same = await restResult(target, 'POST', '/acme/message:send', {
      body: { ...message('again'), tenant: 'acme' },
    })
    expect(same.task.status.state).toBe('TASK_STATE_COMPLETED')
  })
})

describe.each([inProcess, nodeServer])('HTTP+JSON errors ($name)', (transport) => {
  it('maps each A2A error to its §5.4 status with its ErrorInfo', async () => {
    const target = await transport.start(echoAgent)
    const missing = await rest(target, 'GET', '/tasks/no-such-task')
    const notFound = expectStatus(missing, 404, 'NOT_FOUND', 'TASK_NOT_FOUND')
    expect(notFound.details).toEqual([
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'TASK_NOT_FOUND',
        domain: 'a2a-protocol.org',
        metadata: { taskId: 'no-such-task' },
      },
    ])
    const done = await sendTask(target, 'hi')
    expectStatus(
      await rest(target, 'POST', `/tasks/${done.id}:cancel`),
      400,
      'FAILED_PRECONDITION',
      'TASK_NOT_CANCELABLE',
    )
    // A follow-up to an ended task: UnsupportedOperation, as over JSON-RPC.
    const followUp = await rest(target, 'POST', '/message:send', { body: message('again', { taskId: done.id }) })
    expectStatus(followUp, 400, 'FAILED_PRECONDITION', 'UNSUPPORTED_OPERATION')
    const push = await rest(target, 'POST', `/tasks/${done.id}/pushNotificationConfigs`, {
      body: { url: 'https://example.com/hook' },
    })
    expectStatus(push, 400, 'FAILED_PRECONDITION', 'PUSH_NOTIFICATION_NOT_SUPPORTED')
    expectStatus(await rest(target, 'GET', '/extendedAgentCard'), 400, 'FAILED_PRECONDITION', 'UNSUPPORTED_OPERATION')
    const modes = await rest(target, 'POST', '/message:send', {
      body: { ...message('hi'), configuration: { acceptedOutputModes: ['image/png'] } },
    })
    expectStatus(modes, 400, 'INVALID_ARGUMENT', 'CONTENT_TYPE_NOT_SUPPORTED')
    // A subscription to a finished task is refused before any stream starts.
    const subscribe = await rest(target, 'GET', `/tasks/${done.id}:subscribe`)
    expectStatus(subscribe, 400, 'FAILED_PRECONDITION', 'UNSUPPORTED_OPERATION')
    expectStatus(await rest(target, 'POST', '/tasks/no-such-task:subscribe'), 404, 'NOT_FOUND', 'TASK_NOT_FOUND')
  })

  it('answers A2A-Version other than 1.0, or none, with 400 VERSION_NOT_SUPPORTED; the query parameter counts', async () => {
    const target = await transport.start(echoAgent)
    for (const version of ['0.3', '2.0', '', undefined]) {
      const headers: Record<string, string> = version === undefined ? {} : { 'a2a-version': version }
      const reply = await target.fetch('/message:send', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(message('hi')),
      })
      const body = await reply.json()
      expectStatus(
        { status: reply.status, headers: reply.headers, body },
        400,
        'FAILED_PRECONDITION',
        'VERSION_NOT_SUPPORTED',
      )
      if (!version) expect(body.error.message).toContain('A2A-Version: 1.0')
    }
    const patch = await restResult(target, 'GET', '/tasks', { headers: { 'a2a-version': '1.0.2' } })
    expect(patch.tasks).toEqual([])
    const byQuery = await target.fetch('/tasks?A2A-Version=1.0')
    expect(byQuery.status).toBe(200)
  })

  it('refuses a body not typed as JSON with 415, bad JSON and a body that is no object with 400', async () => {
    const target = await transport.start(echoAgent)
    const typed = await rest(target, 'POST', '/message:send', {
      body: JSON.stringify(message('hi')),
      headers: { 'content-type': 'text/plain' },
    })
    expectStatus(typed, 415, 'INVALID_ARGUMENT', 'CONTENT_TYPE_NOT_SUPPORTED')
    for (const type of ['application/json', 'application/a2a+json', 'application/a2a+json; charset=utf-8'])
      await restResult(target, 'POST', '/message:send', {
        body: JSON.stringify(message('hi')),
        headers: { 'content-type': type },
      })
    const broken = await rest(target, 'POST', '/message:send', {
      body: '{"message":',
      headers: { 'content-type': 'application/json' },
    })
    expectStatus(broken, 400, 'INVALID_ARGUMENT')
    for (const body of [[], 'null', '"text"']) {
      const reply = await rest(target, 'POST', '/message:send', {
        body: typeof body === 'string' ? body : JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      })
      expect(expectStatus(reply, 400, 'INVALID_ARGUMENT').message).toBe('the body must be an object')
    }
    // Params are named as the body has them.
    const parts = expectStatus(
      await rest(target, 'POST', '/message:send', { body: message('hi', { parts: [] }) }),
      400,
      'INVALID_ARGUMENT',
    )
    expect(parts.message).toBe('`message.parts` must be a non-empty array')
    expect(parts.details[0].fieldViolations[0].field).toBe('message.parts')
    const empty = expectStatus(await rest(target, 'POST', '/message:send'), 400, 'INVALID_ARGUMENT')
    expect(empty.message).toContain('`message`')
  })

  it('answers an unexpected failure with 500 INTERNAL and no detail, which goes to the log', async () => {
    const failing = Object.assign(createMemoryStore(), {
      list: async () => {
        throw new Error('disk on fire at /var/secret')
      },
    })
    const target = await transport.start(echoAgent, { store: failing })
    const reply = await rest(target, 'GET', '/tasks')
    expect(expectStatus(reply, 500, 'INTERNAL').message).toBe('Internal error')
    expect(JSON.stringify(reply.body)).not.toContain('secret')
    expect(target.logger.text('error')).toContain('disk on fire')
  })
})

describe.each([inProcess, nodeServer])('HTTP+JSON streams ($name)', (transport) => {
  it('frames each event as data: <StreamResponse>, the Task first, numbered, ending at the terminal state', async () => {
    const target = await transport.start(askingAgent)
    const { events, ids } = await streamed(await restFetch(target, 'POST', '/message:stream', { body: message('hi') }))
    expect(Object.keys(events[0])).toEqual(['task'])
    expect(events.slice(1).map((event) => Object.keys(event)[0])).toContain('artifactUpdate')
    expect(events.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED')
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    // input-required is where a send's stream ends too.
    const asked = await streamed(await restFetch(target, 'POST', '/message:stream', { body: message('ask') }))
    expect(asked.events.at(-1).statusUpdate.status.state).toBe('TASK_STATE_INPUT_REQUIRED')
  })

  it('fails early with an HTTP error, never a 200 stream: streaming off, bad params, an unknown task', async () => {
    const target = await transport.start(
      agent((_ctx, task) => task.complete(), { card: { capabilities: { streaming: false } } }),
    )
    const off = await rest(target, 'POST', '/message:stream', { body: message('hi') })
    expectStatus(off, 400, 'FAILED_PRECONDITION', 'UNSUPPORTED_OPERATION')
    expectStatus(await rest(target, 'GET', '/tasks/x:subscribe'), 400, 'FAILED_PRECONDITION', 'UNSUPPORTED_OPERATION')
    const streaming = await transport.start(askingAgent)
    expectStatus(await rest(streaming, 'POST', '/message:stream', { body: { message: {} } }), 400, 'INVALID_ARGUMENT')
    expectStatus(await rest(streaming, 'GET', '/tasks/nope:subscribe'), 404, 'NOT_FOUND', 'TASK_NOT_FOUND')
  })

  it('subscribes by GET and by POST across input-required until the terminal state, and resumes from Last-Event-ID', async () => {
    const target = await transport.start(askingAgent)
    const asked = await sendTask(target, 'ask')
    const byGet = eventReader(await restFetch(target, 'GET', `/tasks/${asked.id}:subscribe`))
    const byPost = eventReader(await restFetch(target, 'POST', `/acme/tasks/${asked.id}:subscribe`))
    for (const reader of [byGet, byPost]) {
      const first = await reader.next()
      expect(first.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED')
    }
    await restResult(target, 'POST', '/message:send', { body: message('Paris', { taskId: asked.id }) })
    const rest1: any[] = []
    for (let event = await byGet.next(); event; event = await byGet.next()) rest1.push(event)
    const rest2: any[] = []
    for (let event = await byPost.next(); event; event = await byPost.next()) rest2.push(event)
    expect(rest1.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED')
    expect(rest2).toEqual(rest1)
    // A client whose stream broke after the first live event gets the rest, each once.
    const after = byGet.lastId! - rest1.length + 1
    const resumed = await streamed(
      await restFetch(target, 'GET', `/tasks/${asked.id}:subscribe`, { headers: { 'last-event-id': String(after) } }),
    )
    expect(resumed.events).toEqual(rest1.slice(1))
    const bad = await rest(target, 'GET', `/tasks/${asked.id}:subscribe`, { headers: { 'last-event-id': 'x' } })
    expectStatus(bad, 400, 'INVALID_ARGUMENT')
  })
})

describe('HTTP+JSON checks (node server)', () => {
  it('answers 401 with the Bearer challenge and checks the credential on every path', async () => {
    const target = await nodeServer.start(
      agent((_ctx, task) => task.complete(), { card: { authentication: { schemes: ['bearer'] } } }),
      {
        auth: { bearerTokens: ['token-rest-71f0'] },
      },
    )
    for (const [method, path] of [
      ['POST', '/message:send'],
      ['GET', '/tasks'],
      ['GET', '/acme/tasks/abc'],
      ['GET', '/extendedAgentCard'],
    ] as const) {
      const refused = await rest(target, method, path, method === 'POST' ? { body: message('hi') } : {})
      expectStatus(refused, 401, 'UNAUTHENTICATED')
      expect(refused.headers.get('www-authenticate'), path).toBe('Bearer')
    }
    const ok = await restResult(target, 'GET', '/tasks', { headers: { authorization: 'Bearer token-rest-71f0' } })
    expect(ok.tasks).toEqual([])
  })

  it('refuses a body over the limit with 413 and closes the connection; past the open streams, 503 with Retry-After', async () => {
    const gated = gatedAgent()
    const target = await nodeServer.start(gated.agent, { maxBodySize: 1024, maxStreams: 1 })
    const big = await rest(target, 'POST', '/message:send', { body: message('x'.repeat(4096)) })
    expectStatus(big, 413, 'RESOURCE_EXHAUSTED')
    expect(big.headers.get('connection')).toBe('close')
    const controller = new AbortController()
    const first = await restFetch(target, 'POST', '/message:stream', {
      body: message('hold'),
      signal: controller.signal,
    })
    expect(first.status).toBe(200)
    const second = await rest(target, 'POST', '/message:stream', { body: message('more') })
    expectStatus(second, 503, 'UNAVAILABLE')
    expect(second.headers.get('retry-after')).toBe('1')
    controller.abort()
    gated.release()
  })

  it('logs a REST path by its shape, never the ids or tenant in it', async () => {
    const target = await nodeServer.start(echoAgent, { requestLogLevel: 'debug' } as never)
    const task = await sendTask(target, 'hi', '/tenant-secret-a1/message:send')
    await rest(target, 'GET', `/tenant-secret-a1/tasks/${task.id}?historyLength=1`)
    await rest(target, 'POST', `/tasks/${task.id}:cancel`)
    await expect.poll(() => target.logger.lines.filter((line) => / \d{3} [\d.]+ ms$/.test(line.message)).length).toBe(3)
    const lines = target.logger.lines.map((line) => line.message)
    expect(lines).toContainEqual(expect.stringMatching(/^POST \/\{tenant\}\/message:send 200 /))
    expect(lines).toContainEqual(expect.stringMatching(/^GET \/\{tenant\}\/tasks\/\{id\} 200 /))
    expect(lines).toContainEqual(expect.stringMatching(/^POST \/tasks\/\{id\}:cancel 400 /))
    expect(lines.filter((line) => line.includes('secret') || line.includes(task.id))).toEqual([])
  })
})

describe('HTTP+JSON and web origins', () => {
  it("refuses a foreign Origin with a 403 Status, and answers a listed one's preflight with the path's methods", async () => {
    const target = await nodeServer.start(echoAgent, { corsOrigins: ['https://app.example.com'] })
    const foreign = await rest(target, 'GET', '/tasks', { headers: { origin: 'https://evil.example' } })
    expect(expectStatus(foreign, 403, 'PERMISSION_DENIED').message).toContain('Origin')
    const preflight = await target.fetch('/acme/tasks/abc/pushNotificationConfigs/cfg', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'DELETE' },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, DELETE, OPTIONS')
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
    const listed = await restFetch(target, 'GET', '/tasks', { headers: { origin: 'https://app.example.com' } })
    expect(listed.status).toBe(200)
    expect(listed.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
  })
})

describe('HTTP+JSON credentials (OpenID Connect)', () => {
  let issuer: OidcIssuer
  beforeAll(async () => {
    issuer = await startOidcIssuer()
  })
  afterAll(() => issuer?.stop())

  it('answers a token without a required scope with 403 PERMISSION_DENIED and the insufficient_scope challenge', async () => {
    const target = await nodeServer.start(
      agent((_ctx, task) => task.complete(), { card: { authentication: { schemes: ['oidc'] } } }),
      { env: { A2A_OIDC_ISSUER: issuer.url, A2A_OIDC_AUDIENCE: TEST_AUDIENCE, A2A_OIDC_SCOPES: 'tasks:write' } },
    )
    const reading = await issuer.mint({ sub: 'erin', scope: 'tasks:read' })
    const refused = await rest(target, 'GET', '/tasks', { headers: { authorization: `Bearer ${reading}` } })
    expect(expectStatus(refused, 403, 'PERMISSION_DENIED').message).toContain('tasks:write')
    expect(refused.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope"')
    const writing = await issuer.mint({ sub: 'erin', scope: 'tasks:read tasks:write' })
    await restResult(target, 'GET', '/tasks', { headers: { authorization: `Bearer ${writing}` } })
    expect(V1_HEADER['a2a-version']).toBe('1.0')
  })

  it('answers 503 UNAVAILABLE with Retry-After and no challenge while the issuer cannot be reached', async () => {
    const target = await nodeServer.start(
      agent((_ctx, task) => task.complete(), { card: { authentication: { schemes: ['oidc'] } } }),
      { env: { A2A_OIDC_ISSUER: issuer.url, A2A_OIDC_AUDIENCE: TEST_AUDIENCE } },
    )
    const token = await issuer.mint({ sub: 'erin' })
    issuer.down(true)
    try {
      const refused = await rest(target, 'GET', '/tasks', { headers: { authorization: `Bearer ${token}` } })
      expectStatus(refused, 503, 'UNAVAILABLE')
      expect(refused.headers.get('retry-after')).toBe('1')
      expect(refused.headers.get('www-authenticate')).toBeNull()
    } finally {
      issuer.down(false)
    }
  })
})
