import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { eventReader, readEvents } from '../runtime/_sse.ts'
import { startReceiver } from '../runtime/_webhook.ts'
import { type AgentProcess, API_KEY, startAgentProcess } from './_agent-process.ts'
import { DIALECTS, type Dialect, type StreamEvent, summary } from './_dialects.ts'
import { post, replyOf, rpc, rpcBody } from './_rpc.ts'
import { RUNTIMES } from './_runtimes.ts'

/**
 * The same agent (test/fixtures/runtime-agent.mjs) served by `serveAgent` on every JavaScript runtime the runtime
 * supports, checked over HTTP from this process in the three dialects it speaks: what a client sees must not
 * depend on the runtime, nor on whether Node's server or Bun's or Deno's own serves it.
 */

const V1 = { 'A2A-Version': '1.0' }
const CARD_NAME = 'Runtime Fixture'
/** The status the `wait` behaviour reports once it is waiting for its signal. */
const WAITING = 'waiting for the signal'

type Reader = ReturnType<typeof eventReader>

/** Opens a send stream of `text` in `dialect`; its events answer `requestId`. */
async function openStream(
  url: string,
  dialect: Dialect,
  text: string,
  requestId: string,
  headers: Record<string, string> = {},
): Promise<Reader> {
  const response = await post(url, rpcBody(dialect.methods.stream, dialect.message(text), requestId), {
    ...dialect.headers,
    ...headers,
  })
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream\b/)
  return eventReader(response)
}

/** Reads events until `until` holds for one (included); fails if the stream ends first. */
async function readUntil(
  reader: Reader,
  dialect: Dialect,
  requestId: string,
  until: (event: StreamEvent) => boolean,
): Promise<StreamEvent[]> {
  const seen: StreamEvent[] = []
  for (;;) {
    const raw = await reader.next()
    expect(raw, `the stream ended after ${seen.map(summary).join(', ')}`).toBeDefined()
    seen.push(dialect.read(raw, requestId))
    if (until(seen.at(-1)!)) return seen
  }
}

/** Reads a live stream until the server ends it. */
async function readToEnd(reader: Reader, dialect: Dialect, requestId: string): Promise<StreamEvent[]> {
  const seen: StreamEvent[] = []
  for (let raw = await reader.next(); raw !== undefined; raw = await reader.next())
    seen.push(dialect.read(raw, requestId))
  return seen
}

/** How a send stream opens: the Task (in the A2A dialects), the runtime's working status, then the agent's own. */
const streamOpening = (dialect: Dialect) => [
  ...(dialect.opensWithTask ? ['task:working'] : []),
  'status:working',
  'status:working',
]
const isWaiting = (event: StreamEvent) => event.kind === 'status' && event.message === WAITING

async function cardAt(url: string, path: string, headers: Record<string, string> = {}): Promise<any> {
  // No credential: the card is public even when every call needs one.
  const response = await fetch(new URL(path, url), { headers })
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^application\/json\b/)
  return response.json()
}

describe.each(RUNTIMES)('agent served on $name', (runtime) => {
  let agent: AgentProcess
  // Bun and Deno start slower than Node, the more so on a loaded machine: the hook's timeout is the only clock.
  beforeAll(async () => {
    agent = await startAgentProcess(runtime)
  }, 60_000)
  afterAll(() => agent?.stop())
  // What the server logged tells why a request failed on one runtime only.
  beforeEach(({ onTestFailed }) =>
    onTestFailed(() => console.error(`[agent on ${runtime.name}, stderr]\n${agent?.stderr() ?? '(not started)'}`)),
  )

  it(`is served by the ${runtime.server} server`, () => {
    expect(agent.server).toBe(runtime.server)
  })

  it('serves its card without a credential: the platform shape at agent.json, the v0.3 and v1.0 shapes at agent-card.json', async () => {
    const platform = await cardAt(agent.url, '/.well-known/agent.json')
    expect(platform).toMatchObject({
      name: CARD_NAME,
      url: agent.url,
      capabilities: { streaming: true },
      authentication: { schemes: ['apiKey'] },
    })
    expect(platform.supportedInterfaces).toEqual([{ url: agent.url, protocolBinding: 'JSONRPC', transport: 'JSONRPC' }])
    expect(platform).not.toHaveProperty('protocolVersion')

    const v03 = await cardAt(agent.url, '/.well-known/agent-card.json')
    // v0.3 clients are sent to POST /v0.3, where the whole v0.3 dialect is served.
    expect(v03).toMatchObject({
      name: CARD_NAME,
      protocolVersion: '0.3.0',
      url: `${agent.url}v0.3`,
      preferredTransport: 'JSONRPC',
    })
    expect(v03.securitySchemes).toEqual({ apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } })
    expect(v03.security).toEqual([{ apiKey: [] }])

    const v1 = await cardAt(agent.url, '/.well-known/agent-card.json', V1)
    expect(v1).toMatchObject({ name: CARD_NAME, capabilities: { streaming: true } })
    expect(v1.supportedInterfaces[0]).toEqual({ url: agent.url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' })
    expect(v1).not.toHaveProperty('protocolVersion')
    expect(v1.securitySchemes).toEqual({ apiKey: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } } })
    expect(v1.securityRequirements).toEqual([{ schemes: { apiKey: { list: [] } } }])
  })

  it.each(DIALECTS)('$name: answers a send with the completed task carrying the echo', async (dialect) => {
    const reply = await rpc(agent.url, dialect.methods.send, dialect.message('hello'), dialect.headers, 'send-1')
    expect(reply.status).toBe(200)
    expect(reply.contentType).toMatch(/^application\/json\b/)
    expect(reply.body).toEqual({ jsonrpc: '2.0', id: 'send-1', result: expect.any(Object) })
    const task = dialect.taskOf(reply.body.result)
    expect(task).toMatchObject({ ...dialect.taskShape, status: { state: dialect.state('completed') } })
    expect(task.artifacts).toEqual([expect.objectContaining({ parts: [dialect.textPart('echo hello')] })])
    expect(JSON.stringify(reply.body).includes('"kind":')).toBe(dialect.kinds)
  })

  it.each(DIALECTS)(
    '$name: streams the chunks of an artifact in order with append and lastChunk, framed as SSE, ending completed',
    async (dialect) => {
      const response = await post(
        agent.url,
        rpcBody(dialect.methods.stream, dialect.message('chunks:3'), 'stream-1'),
        dialect.headers,
      )
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream\b/)
      expect(response.headers.get('cache-control')).toBe('no-cache')
      // Checks every frame is `data: <json>\n\n`, or `id: <n>\ndata: <json>\n\n` in the numbered dialects, and that the
      // server ends the stream.
      const { events, ids } = await readEvents(response, dialect.framing)
      const read = events.map((event) => dialect.read(event, 'stream-1'))
      expect(read.map(summary)).toEqual([
        ...streamOpening(dialect),
        'artifact:chunk 1',
        'artifact:chunk 2',
        'artifact:chunk 3',
        'status:completed',
      ])
      const chunks = read
        .filter((event) => event.kind === 'artifact')
        .map(({ text, append, lastChunk }) => [text, append, lastChunk])
      expect(chunks).toEqual([
        ['chunk 1', false, false],
        ['chunk 2', true, false],
        ['chunk 3', true, true],
      ])
      expect(new Set(read.map((event) => event.taskId)).size).toBe(1)
      expect(read.filter((event) => event.final).map(summary)).toEqual(dialect.hasFinal ? ['status:completed'] : [])
      // The Task frame carries the number of the event it reflects; the platform dialect numbers nothing unless asked.
      expect(ids).toEqual(dialect.opensWithTask ? [1, 1, 2, 3, 4, 5, 6] : [])
    },
  )

  it.each(DIALECTS)(
    "$name: gets a finished task as it was answered, and answers an unknown id with the dialect's not-found error",
    async (dialect) => {
      const sent = dialect.taskOf(
        (await rpc(agent.url, dialect.methods.send, dialect.message('keep me'), dialect.headers)).body.result,
      )
      const got = await rpc(agent.url, dialect.methods.get, { id: sent.id }, dialect.headers, 'get-1')
      expect(got.body).toEqual({ jsonrpc: '2.0', id: 'get-1', result: sent })
      expect(got.body.result.artifacts).toEqual([
        expect.objectContaining({ parts: [dialect.textPart('echo keep me')] }),
      ])
      const missing = await rpc(agent.url, dialect.methods.get, { id: 'no-such-task' }, dialect.headers, 'get-2')
      expect(missing.status).toBe(200)
      expect(missing.body).toEqual({ jsonrpc: '2.0', id: 'get-2', error: dialect.notFound })
    },
  )

  it.each(DIALECTS)(
    '$name: cancels a running streamed task: the cancel answers it canceled, and its stream ends with canceled',
    async (dialect) => {
      const reader = await openStream(agent.url, dialect, 'wait', 'wait-1')
      const opening = await readUntil(reader, dialect, 'wait-1', isWaiting)
      expect(opening.map(summary)).toEqual(streamOpening(dialect))
      const taskId = opening[0]!.taskId
      const canceled = await rpc(agent.url, dialect.methods.cancel, { id: taskId }, dialect.headers, 'cancel-1')
      expect(canceled.body).toEqual({ jsonrpc: '2.0', id: 'cancel-1', result: expect.objectContaining({ id: taskId }) })
      expect(canceled.body.result.status.state).toBe(dialect.state('canceled'))
      const rest = await readToEnd(reader, dialect, 'wait-1')
      expect(rest.map(summary)).toEqual(['status:canceled'])
      const got = await rpc(agent.url, dialect.methods.get, { id: taskId }, dialect.headers)
      expect(got.body.result.status.state).toBe(dialect.state('canceled'))
    },
  )

  it.each(DIALECTS)(
    '$name: a client that drops a stream and resubscribes with Last-Event-ID gets exactly the events after it',
    async (dialect) => {
      // The platform dialect numbers a stream's events only when asked: Last-Event-ID 0 on the send asks.
      const numbering: Record<string, string> = dialect.opensWithTask ? {} : { 'Last-Event-ID': '0' }
      const reader = await openStream(agent.url, dialect, 'chunks:3', 'resume-1', numbering)
      // Up to event 3, the first chunk: the client then loses the connection.
      const first: StreamEvent[] = []
      const ids: number[] = []
      while (reader.lastId !== 3) {
        const raw = await reader.next()
        expect(raw, `the stream ended after ${first.map(summary).join(', ')}`).toBeDefined()
        first.push(dialect.read(raw, 'resume-1'))
        ids.push(reader.lastId!)
      }
      await reader.cancel()
      expect(first.map(summary)).toEqual([...streamOpening(dialect), 'artifact:chunk 1'])
      expect(ids).toEqual(dialect.opensWithTask ? [1, 1, 2, 3] : [1, 2, 3])

      const resumed = await post(agent.url, rpcBody(dialect.methods.subscribe, { id: first[0]!.taskId }, 'resume-2'), {
        ...dialect.headers,
        'Last-Event-ID': '3',
      })
      expect(resumed.status).toBe(200)
      expect(resumed.headers.get('content-type')).toMatch(/^text\/event-stream\b/)
      const rest = await readEvents(resumed, 'numbered')
      const events = rest.events.map((event) => dialect.read(event, 'resume-2'))
      expect(events.map(summary)).toEqual(['artifact:chunk 2', 'artifact:chunk 3', 'status:completed'])
      expect(events.slice(0, 2).map(({ append, lastChunk }) => [append, lastChunk])).toEqual([
        [true, false],
        [true, true],
      ])
      expect(rest.ids).toEqual([4, 5, 6])
    },
  )

  it.each(DIALECTS)(
    '$name: asks for input, and the follow-up naming the task completes that same task',
    async (dialect) => {
      const asked = dialect.taskOf(
        (await rpc(agent.url, dialect.methods.send, dialect.message('ask'), dialect.headers)).body.result,
      )
      expect(asked.status.state).toBe(dialect.state('input-required'))
      expect(asked.status.message.parts).toEqual([dialect.textPart('What should I echo?')])
      const followUp = dialect.message('the answer', { taskId: asked.id, contextId: asked.contextId })
      const done = dialect.taskOf((await rpc(agent.url, dialect.methods.send, followUp, dialect.headers)).body.result)
      expect(done).toMatchObject({
        id: asked.id,
        contextId: asked.contextId,
        status: { state: dialect.state('completed') },
      })
      expect(done.artifacts).toEqual([expect.objectContaining({ parts: [dialect.textPart('echo the answer')] })])
    },
  )

  it('HTTP+JSON: sends, streams bare numbered StreamResponses, gets, lists, and answers errors as a google.rpc.Status', async () => {
    const v1Card = await cardAt(agent.url, '/.well-known/agent-card.json', V1)
    expect(v1Card.supportedInterfaces[1]).toEqual({
      url: agent.url.replace(/\/$/, ''),
      protocolBinding: 'HTTP+JSON',
      protocolVersion: '1.0',
    })
    const headers = { 'x-api-key': API_KEY, 'a2a-version': '1.0' }
    const call = (method: string, path: string, body?: unknown) =>
      fetch(new URL(path, agent.url), {
        method,
        headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/a2a+json' }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      })
    const message = (text: string) => ({
      message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text }] },
    })

    const sent = await call('POST', '/message:send', message('hello'))
    expect(sent.status).toBe(200)
    expect(sent.headers.get('content-type')).toBe('application/a2a+json')
    const { task } = await sent.json()
    expect(task.status.state).toBe('TASK_STATE_COMPLETED')
    expect(task.artifacts[0].parts).toEqual([{ text: 'echo hello' }])

    const streamed = await call('POST', '/acme/message:stream', message('chunks:2'))
    expect(streamed.status).toBe(200)
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream\b/)
    const { events, ids } = await readEvents(streamed, 'numbered')
    expect(events.map((event) => Object.keys(event)[0])).toEqual([
      'task',
      'statusUpdate',
      'statusUpdate',
      'artifactUpdate',
      'artifactUpdate',
      'statusUpdate',
    ])
    expect(events.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED')
    expect(ids).toEqual([1, 1, 2, 3, 4, 5])

    const got = await call('GET', `/tasks/${task.id}?historyLength=1`)
    expect(got.status).toBe(200)
    const gotTask = await got.json()
    expect(gotTask.id).toBe(task.id)
    expect(gotTask.history).toHaveLength(1)
    const listed = await (await call('GET', `/tasks?contextId=${task.contextId}&includeArtifacts=true`)).json()
    expect(listed.tasks.map((entry: any) => entry.id)).toEqual([task.id])

    // A cancel without a body, typed as JSON all the same, as the official client sends it.
    const asked = (await (await call('POST', '/message:send', message('ask'))).json()).task
    const canceled = await fetch(new URL(`/tasks/${asked.id}:cancel`, agent.url), {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
    })
    expect(canceled.status).toBe(200)
    expect((await canceled.json()).status.state).toBe('TASK_STATE_CANCELED')

    const missing = await call('GET', '/tasks/no-such-task')
    expect(missing.status).toBe(404)
    expect(missing.headers.get('content-type')).toBe('application/a2a+json')
    expect(await missing.json()).toEqual({
      error: {
        code: 404,
        status: 'NOT_FOUND',
        message: 'Task not found',
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'TASK_NOT_FOUND',
            domain: 'a2a-protocol.org',
            metadata: { taskId: 'no-such-task' },
          },
        ],
      },
    })
    const refused = await fetch(new URL('/tasks', agent.url), { headers: { 'a2a-version': '1.0' } })
    expect(refused.status).toBe(401)
    expect((await refused.json()).error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' })
    const wrongMethod = await call('DELETE', '/message:send')
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.headers.get('allow')).toBe('POST, OPTIONS')
  })

  it('posts the task to a webhook given with the send, on each change, ending with its final state', async () => {
    const v03 = DIALECTS.find((dialect) => dialect.name === 'A2A v0.3')!
    const receiver = await startReceiver()
    const params = {
      ...v03.message('chunks:2'),
      configuration: { pushNotificationConfig: { url: receiver.url, token: 'hook-token' } },
    }
    const task = v03.taskOf((await rpc(agent.url, v03.methods.send, params, v03.headers)).body.result)
    // Deliveries go out after the answer; a loaded machine may take long, never this long.
    await expect
      .poll(() => receiver.delivered.at(-1)?.body.status.state, { timeout: 60_000, interval: 50 })
      .toBe('completed')
    const last = receiver.delivered.at(-1)!
    expect(last.body).toMatchObject({ kind: 'task', id: task.id })
    // The two chunks, as the task keeps them: joined into one text.
    expect(
      last.body.artifacts.flatMap((artifact: { parts: Array<{ text: string }> }) =>
        artifact.parts.map((part) => part.text),
      ),
    ).toEqual(['chunk 1chunk 2'])
    expect(last.headers['x-a2a-notification-token']).toBe('hook-token')
    expect(last.headers['content-type']).toBe('application/json')
  })

  it.each(DIALECTS)(
    '$name: refuses a call without the API key, or with a wrong one, with 401 and -32000, while the cards stay public',
    async (dialect) => {
      const cases: Array<{ credentials: Record<string, string>; message: string }> = [
        { credentials: {}, message: 'Unauthorized: send X-API-Key: <key>' },
        { credentials: { 'x-api-key': 'wrong-key' }, message: 'Unauthorized: invalid credentials' },
      ]
      for (const { credentials, message } of cases) {
        const response = await post(
          agent.url,
          rpcBody(dialect.methods.send, dialect.message('let me in'), 'auth-1'),
          dialect.headers,
          credentials,
        )
        const reply = await replyOf(response)
        expect(reply.status).toBe(401)
        expect(reply.contentType).toMatch(/^application\/json\b/)
        // Refused before the body is read: the request's id is not known, so the answer's id is null.
        expect(reply.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32000, message } })
      }
      for (const path of ['/.well-known/agent.json', '/.well-known/agent-card.json'])
        expect((await cardAt(agent.url, path, dialect.headers)).name).toBe(CARD_NAME)
    },
  )

  it.each(DIALECTS)(
    '$name: answers bad input with JSON-RPC errors, never a 5xx: -32700, 415, -32602 naming the field, -32601',
    async (dialect) => {
      const parse = await replyOf(await post(agent.url, '{"jsonrpc": "2.0", oops', dialect.headers))
      expect(parse.status).toBe(200)
      expect(parse.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.any(String) } })

      const typed = await post(agent.url, rpcBody(dialect.methods.send, dialect.message('typed'), 'typed'), {
        ...dialect.headers,
        'content-type': 'text/plain',
      })
      const notJson = await replyOf(typed)
      expect(notJson.status).toBe(415)
      expect(notJson.body).toEqual({ jsonrpc: '2.0', id: 'typed', error: dialect.notJson })

      const noParts = dialect.message('x')
      delete (noParts.message as Record<string, unknown>).parts
      const invalid = await rpc(agent.url, dialect.methods.send, noParts, dialect.headers, 'no-parts')
      expect(invalid.status).toBe(200)
      expect(invalid.body).toEqual({
        jsonrpc: '2.0',
        id: 'no-parts',
        error: { code: -32602, message: expect.stringContaining('`params.message.parts`') },
      })

      const unknown = await rpc(agent.url, dialect.methods.unknown, {}, dialect.headers, 'unknown')
      expect(unknown.status).toBe(200)
      expect(unknown.body).toEqual({
        jsonrpc: '2.0',
        id: 'unknown',
        error: { code: -32601, message: expect.stringContaining(dialect.methods.unknown) },
      })
    },
  )

  // Last: it needs a server of its own, which it shuts down. A Worker has no process to signal: its Durable
  // Object restarting is checked instead.
  it.runIf(runtime.server !== 'workerd')(
    'on SIGTERM with tasks in flight ends their streams (failed: the server shut down) and exits with code 0',
    async ({ onTestFailed }) => {
      // A short grace: `wait` ignores the shutdown until its signal fires, which the end of the grace does.
      const doomed = await startAgentProcess(runtime, { GRACE: '300' })
      onTestFailed(() => console.error(`[shut-down agent on ${runtime.name}, stderr]\n${doomed.stderr()}`))
      try {
        const streams = await Promise.all(
          DIALECTS.map(async (dialect) => {
            const requestId = `shutdown-${dialect.name}`
            const reader = await openStream(doomed.url, dialect, 'wait', requestId)
            await readUntil(reader, dialect, requestId, isWaiting)
            return { dialect, requestId, reader }
          }),
        )
        process.kill(doomed.pid, 'SIGTERM')
        for (const { dialect, requestId, reader } of streams) {
          const rest = await readToEnd(reader, dialect, requestId)
          expect(rest.map(summary), dialect.name).toEqual(['status:failed'])
          expect(rest[0]!.message, dialect.name).toMatch(/server shut down/i)
        }
        expect(await doomed.exited).toEqual({ code: 0, signal: null })
      } finally {
        await doomed.stop()
      }
    },
    60_000,
  )

  // Node's own request timeout is covered by test/runtime/slow-clients.test.ts; Deno has none to set (documented).
  it.runIf(runtime.server === 'bun')(
    'closes a connection whose request body stalls, once its idle timeout (the request timeout) passes',
    async ({ onTestFailed }) => {
      const strict = await startAgentProcess(runtime, { A2A_REQUEST_TIMEOUT_MS: '2000' })
      onTestFailed(() =>
        console.error(`[agent with a 2 s request timeout on ${runtime.name}, stderr]\n${strict.stderr()}`),
      )
      try {
        const { hostname, port } = new URL(strict.url)
        const socket = connect({ host: hostname, port: Number(port) })
        const closed = new Promise<string>((resolve) => {
          let answer = ''
          socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk))
          socket.once('close', () => resolve(answer))
        })
        await new Promise((resolve) => socket.once('connect', resolve))
        // Headers that promise 100 bytes, then 10 of them, then nothing.
        socket.write(
          `POST / HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nX-API-Key: ${API_KEY}\r\nContent-Length: 100\r\n\r\n{"jsonrpc"`,
        )
        // The server closes it (no clock here: the test's timeout bounds the wait); no answer was owed.
        const answer = await closed
        expect(answer).not.toMatch(/^HTTP\/1\.1 2/)
      } finally {
        await strict.stop()
      }
    },
    60_000,
  )

  it.runIf(runtime.server === 'workerd')(
    'keeps its tasks in the Durable Object: restarted, it reads a finished task back and fails the one it was running with a reason',
    async ({ onTestFailed }) => {
      const [platform] = DIALECTS
      const state = mkdtempSync(join(tmpdir(), 'a2a-worker-restart-'))
      let current: AgentProcess | undefined
      onTestFailed(() => console.error(`[restarted Worker, stderr]\n${current?.stderr()}`))
      try {
        current = await startAgentProcess(runtime, {}, { persistTo: state })
        const finished = platform!.taskOf(
          (await rpc(current.url, platform!.methods.send, platform!.message('kept across restarts'), platform!.headers))
            .body.result,
        )
        const reader = await openStream(current.url, platform!, 'wait', 'restart-wait')
        const [first] = await readUntil(reader, platform!, 'restart-wait', isWaiting)
        await current.stop()
        current = await startAgentProcess(runtime, {}, { persistTo: state })
        const readBack = (await rpc(current.url, platform!.methods.get, { id: finished.id }, platform!.headers)).body
          .result
        expect(readBack.status.state).toBe('completed')
        expect(readBack.artifacts[0].parts[0].text).toBe('echo kept across restarts')
        const stopped = (await rpc(current.url, platform!.methods.get, { id: first!.taskId }, platform!.headers)).body
          .result
        expect(stopped.status.state).toBe('failed')
        expect(stopped.status.message.parts[0].text).toMatch(/stopped before the task finished/)
      } finally {
        await current?.stop()
        rmSync(state, { recursive: true, force: true })
      }
    },
    120_000,
  )
})
