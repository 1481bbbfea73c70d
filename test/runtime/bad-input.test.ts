import { type ClientRequest, Agent as HttpAgent, request as httpRequest } from 'node:http'
import { createMemoryStore, type Task } from 'a2a-runtime'
import type { TaskStore } from 'a2a-runtime/store'
import { describe, expect, it } from 'vitest'
import { agent, echoAgent } from './_agents.ts'
import { userMessage } from './_messages.ts'
import { type Target, transports } from './_transports.ts'

type Id = string | number | null

/** What a refusal must look like on the wire. */
interface Refusal {
  code: number
  id: Id
  /** Exact HTTP status when the rule names one; every refusal is < 500 either way. */
  status?: number
}

// Traces as Node prints them, source locations, module paths.
const STACK_TRACE = /\n\s*at |\bat [\w$.<>]+ \(|file:\/\/|node_modules|\.[cm]?[jt]sx?:\d+/

/**
 * Checks a refusal: status < 500 (exact when given), a JSON content type, a JSON body that is neither HTML
 * nor a stack trace, exactly `{ jsonrpc, id, error: { code, message } }`. Returns the error.
 */
async function expectRefusal(response: Response, expected: Refusal): Promise<{ code: number; message: string }> {
  const text = await response.text()
  expect(response.status).toBeLessThan(500)
  if (expected.status !== undefined) expect(response.status).toBe(expected.status)
  expect(response.headers.get('content-type')).toMatch(/^application\/json\b/)
  expect(text).not.toMatch(/<!doctype|<html|<body|<pre/i)
  expect(text).not.toMatch(STACK_TRACE)
  let body: any
  expect(() => (body = JSON.parse(text))).not.toThrow()
  expect(body).toEqual({ jsonrpc: '2.0', id: expected.id, error: { code: expected.code, message: expect.any(String) } })
  return body.error
}

/**
 * True when `message` names `field` itself (not a longer path that starts with it), after the "Invalid params:" prefix.
 */
function namesField(message: string, field: string): boolean {
  const detail = message.replace(/^[^:]*:\s*/, '')
  const escaped = field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`(^|[^.\\w])${escaped}(?![.\\[\\w])`).test(detail)
}

const rpcBody = (method: unknown, params: unknown, id: unknown = 'req-1') =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params })

/** Asks a question when the text starts with "ask", otherwise answers: gives tests a task that still takes messages. */
const askingAgent = agent((ctx, task) => {
  if (ctx.text.startsWith('ask')) {
    task.inputRequired('Which colour?')
    return
  }
  task.artifact(`Answer: ${ctx.text}`)
  task.complete()
})

/** A valid `message/send` request of exactly `bytes` bytes (UTF-8), padded with `fill`. */
function requestOfSize(bytes: number, id: string, fill = 'x'): string {
  const build = (pad: string) =>
    rpcBody('message/send', { message: { role: 'user', messageId: 'sized', parts: [{ kind: 'text', text: pad }] } }, id)
  const overhead = Buffer.byteLength(build(''))
  const fillBytes = Buffer.byteLength(fill)
  if (bytes < overhead || (bytes - overhead) % fillBytes !== 0)
    throw new Error(`cannot build a request of ${bytes} bytes`)
  const body = build(fill.repeat((bytes - overhead) / fillBytes))
  expect(Buffer.byteLength(body)).toBe(bytes)
  return body
}

/** A streamed body with no length: the bytes of `text` in chunks of `size`. */
function streamOf(text: string, size = 64): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text)
  let offset = 0
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close()
      controller.enqueue(bytes.slice(offset, offset + size))
      offset += size
    },
  })
}

const postStream = (
  target: Target,
  text: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) => target.fetch('/', { method: 'POST', body: streamOf(text), headers, duplex: 'half' } as RequestInit)

/** A store whose `create` fails like a broken disk for the tasks `fails` picks. */
function fragileStore(fails: (task: Task) => boolean = () => true): TaskStore {
  const inner = createMemoryStore()
  return {
    get: (taskId) => inner.get(taskId),
    create(task) {
      if (fails(task)) throw new Error('disk on fire SECRET')
      return inner.create(task)
    },
    append: (task, event) => inner.append(task, event),
    events: (taskId, afterSeq) => inner.events(taskId, afterSeq),
    list: (query) => inner.list(query),
    close: () => inner.close(),
  }
}

const firstText = (task: Task): string => {
  const part = task.history[0]?.parts[0]
  return part?.kind === 'text' ? part.text : ''
}

// --- The bad inputs, as tables the single tests and the burst share ---------------------------------------

interface RawCase {
  name: string
  body: string
  refusal: Refusal
}

const VALID_REQUEST = { jsonrpc: '2.0', id: 'batched', method: 'message/send', params: userMessage('hi') }

const parseErrors: RawCase[] = [
  { name: 'plain text', body: 'not json at all' },
  {
    name: 'a truncated object that had an id',
    body: '{"jsonrpc":"2.0","id":"lost","method":"message/send","params":{',
  },
  { name: 'an empty body', body: '' },
  { name: 'single quotes', body: "{'jsonrpc': '2.0', 'id': 1, 'method': 'message/send'}" },
  { name: 'a trailing comma', body: '{"jsonrpc":"2.0","id":"trailing","method":"message/send","params":{},}' },
].map((c) => ({ ...c, refusal: { code: -32700, id: null } }))

const invalidRequests: RawCase[] = [
  { name: 'a JSON array (batch)', body: JSON.stringify([VALID_REQUEST]), refusal: { code: -32600, id: null } },
  { name: 'an empty JSON array', body: '[]', refusal: { code: -32600, id: null } },
  { name: 'a number', body: '42', refusal: { code: -32600, id: null } },
  { name: 'a string', body: '"message/send"', refusal: { code: -32600, id: null } },
  { name: 'null', body: 'null', refusal: { code: -32600, id: null } },
  { name: 'true', body: 'true', refusal: { code: -32600, id: null } },
  {
    name: 'an object without jsonrpc',
    body: JSON.stringify({ id: 'no-version', method: 'message/send', params: userMessage('x') }),
    refusal: { code: -32600, id: 'no-version' },
  },
  {
    name: 'jsonrpc "1.0"',
    body: JSON.stringify({ jsonrpc: '1.0', id: 7, method: 'message/send', params: userMessage('x') }),
    refusal: { code: -32600, id: 7 },
  },
  {
    name: 'jsonrpc as the number 2',
    body: JSON.stringify({ jsonrpc: 2, id: 'numeric-version', method: 'message/send', params: userMessage('x') }),
    refusal: { code: -32600, id: 'numeric-version' },
  },
  {
    name: 'no method',
    body: JSON.stringify({ jsonrpc: '2.0', id: 'no-method', params: userMessage('x') }),
    refusal: { code: -32600, id: 'no-method' },
  },
  {
    name: 'a numeric method (id 0 echoed)',
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 42, params: userMessage('x') }),
    refusal: { code: -32600, id: 0 },
  },
  {
    name: 'a method that is an object',
    body: JSON.stringify({ jsonrpc: '2.0', id: 'obj-method', method: { name: 'message/send' } }),
    refusal: { code: -32600, id: 'obj-method' },
  },
  {
    name: 'an empty method',
    body: JSON.stringify({ jsonrpc: '2.0', id: -3, method: '', params: userMessage('x') }),
    refusal: { code: -32600, id: -3 },
  },
  {
    name: 'an object id',
    body: JSON.stringify({ jsonrpc: '2.0', id: { n: 1 }, method: 'message/send', params: userMessage('x') }),
    refusal: { code: -32600, id: null },
  },
  {
    name: 'an array id',
    body: JSON.stringify({ jsonrpc: '2.0', id: [1], method: 'message/send', params: userMessage('x') }),
    refusal: { code: -32600, id: null },
  },
  {
    name: 'a boolean id',
    body: JSON.stringify({ jsonrpc: '2.0', id: true, method: 'message/send', params: userMessage('x') }),
    refusal: { code: -32600, id: null },
  },
]

const unknownMethods = [
  'tasks/list',
  'message/sendx',
  'Message/Send',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
]

interface ParamsCase {
  name: string
  /** `existing` is a task waiting for input, so a follow-up naming it would be accepted if valid. */
  params: (existing: string) => unknown
  field: string
}

/** A valid follow-up to `existing`; each case below breaks exactly one thing in it. */
const followUp = (existing: string, message: Record<string, unknown> = {}, params: Record<string, unknown> = {}) => ({
  message: {
    kind: 'message',
    role: 'user',
    messageId: 'follow-up',
    taskId: existing,
    parts: [{ kind: 'text', text: 'blue' }],
    ...message,
  },
  ...params,
})

const sendParamCases: ParamsCase[] = [
  { name: 'params is an array', params: (t) => [followUp(t)], field: 'params' },
  { name: 'params is a string', params: () => 'blue', field: 'params' },
  { name: 'params is missing', params: () => undefined, field: 'params' },
  { name: 'message is missing', params: () => ({}), field: 'params.message' },
  { name: 'message is a string', params: () => ({ message: 'blue' }), field: 'params.message' },
  {
    name: 'message is an array',
    params: () => ({ message: [{ kind: 'text', text: 'blue' }] }),
    field: 'params.message',
  },
  {
    name: 'parts is not an array',
    params: (t) => followUp(t, { parts: { kind: 'text', text: 'blue' } }),
    field: 'params.message.parts',
  },
  { name: 'parts is missing', params: (t) => followUp(t, { parts: undefined }), field: 'params.message.parts' },
  { name: 'parts is empty', params: (t) => followUp(t, { parts: [] }), field: 'params.message.parts' },
  {
    name: 'a part has no kind',
    params: (t) => followUp(t, { parts: [{ text: 'blue' }] }),
    field: 'params.message.parts[0].kind',
  },
  {
    name: 'a part has an unknown kind',
    params: (t) =>
      followUp(t, {
        parts: [
          { kind: 'text', text: 'ok' },
          { kind: 'image', url: 'x' },
        ],
      }),
    field: 'params.message.parts[1].kind',
  },
  {
    name: 'a part is not an object',
    params: (t) => followUp(t, { parts: ['blue'] }),
    field: 'params.message.parts[0]',
  },
  {
    name: 'a text part whose text is a number',
    params: (t) => followUp(t, { parts: [{ kind: 'text', text: 42 }] }),
    field: 'params.message.parts[0].text',
  },
  {
    name: 'a text part without text',
    params: (t) => followUp(t, { parts: [{ kind: 'text' }] }),
    field: 'params.message.parts[0].text',
  },
  {
    name: 'a data part whose data is an array',
    params: (t) => followUp(t, { parts: [{ kind: 'data', data: [1, 2] }] }),
    field: 'params.message.parts[0].data',
  },
  {
    name: 'a data part whose data is null',
    params: (t) => followUp(t, { parts: [{ kind: 'data', data: null }] }),
    field: 'params.message.parts[0].data',
  },
  { name: 'a non-string messageId', params: (t) => followUp(t, { messageId: 7 }), field: 'params.message.messageId' },
  { name: 'a non-string message.taskId', params: (t) => followUp(t, { taskId: 42 }), field: 'params.message.taskId' },
  {
    name: 'a non-string message.contextId',
    params: (t) => followUp(t, { contextId: { id: 'c' } }),
    field: 'params.message.contextId',
  },
  { name: 'a non-string params.id', params: (t) => followUp(t, { taskId: undefined }, { id: 42 }), field: 'params.id' },
  {
    name: 'a non-string params.metadata.contextId',
    params: (t) => followUp(t, {}, { metadata: { contextId: 5 } }),
    field: 'params.metadata.contextId',
  },
  {
    name: 'params.metadata that is not an object',
    params: (t) => followUp(t, {}, { metadata: 'ctx' }),
    field: 'params.metadata',
  },
  { name: 'role "agent"', params: (t) => followUp(t, { role: 'agent' }), field: 'params.message.role' },
  {
    name: 'a non-boolean configuration.blocking',
    params: (t) => followUp(t, {}, { configuration: { blocking: 'no' } }),
    field: 'params.configuration.blocking',
  },
]

const taskParamCases = (method: 'tasks/get' | 'tasks/cancel'): ParamsCase[] => [
  { name: `${method} without params`, params: () => undefined, field: 'params' },
  { name: `${method} with params as an array`, params: (t) => [t], field: 'params' },
  { name: `${method} without id`, params: () => ({}), field: 'params.id' },
  { name: `${method} with a numeric id`, params: () => ({ id: 42 }), field: 'params.id' },
  { name: `${method} with a null id`, params: () => ({ id: null }), field: 'params.id' },
  { name: `${method} with an object id`, params: (t) => ({ id: { id: t } }), field: 'params.id' },
]

const historyLengthCases: ParamsCase[] = [
  { name: 'historyLength -1', params: (t) => ({ id: t, historyLength: -1 }), field: 'params.historyLength' },
  { name: 'historyLength 1.5', params: (t) => ({ id: t, historyLength: 1.5 }), field: 'params.historyLength' },
  { name: 'historyLength "2"', params: (t) => ({ id: t, historyLength: '2' }), field: 'params.historyLength' },
]

describe.each(transports)('bad input ($name)', (transport) => {
  /** Starts the asking agent with one task waiting for input, and returns it with a snapshot to compare. */
  async function withWaitingTask(options: Parameters<typeof transport.start>[1] = {}) {
    const target = await transport.start(askingAgent, options)
    const waiting = (await target.rpc('message/send', userMessage('ask me'))).body.result
    expect(waiting.status.state).toBe('input-required')
    const snapshot = async () => (await target.rpc('tasks/get', { id: waiting.id })).body.result
    return { target, waiting, before: await snapshot(), snapshot }
  }

  describe('malformed JSON → -32700', () => {
    it.each(parseErrors)('answers $name with -32700 and id null', async ({ body, refusal }) => {
      const target = await transport.start(echoAgent)
      const error = await expectRefusal(await target.post(body), refusal)
      expect(error.message).toMatch(/parse|JSON/i)
    })
  })

  describe('not a JSON-RPC request object → -32600', () => {
    it.each(invalidRequests)('answers $name with -32600, echoing a usable id', async ({ body, refusal }) => {
      const target = await transport.start(echoAgent)
      await expectRefusal(await target.post(body), refusal)
      // None of these reached the agent.
      expect(target.logger.text('error')).toBe('')
    })
  })

  describe('a request without an id, or with a null one: answered with id null, as any request', () => {
    const withoutId = (method: string, params: unknown, id?: null) =>
      JSON.stringify({ jsonrpc: '2.0', method, params, ...(id === null && { id }) })
    it.each([{ given: 'no id' }, { given: 'id null', id: null }] as const)(
      'with $given, answers its result',
      async ({ id }) => {
        const target = await transport.start(echoAgent)
        const response = await target.post(withoutId('message/send', userMessage('no id'), id))
        expect(response.status).toBe(200)
        const body = (await response.json()) as any
        expect(body).toMatchObject({
          jsonrpc: '2.0',
          id: null,
          result: { status: { state: 'completed' }, artifacts: [{ parts: [{ kind: 'text', text: 'Echo: no id' }] }] },
        })
      },
    )

    it('answers an unknown method with -32601 and bad params with -32602 naming the field, both with id null', async () => {
      const target = await transport.start(echoAgent)
      const unknown = await expectRefusal(await target.post(withoutId('tasks/unknown', {})), { code: -32601, id: null })
      expect(unknown.message).toContain('tasks/unknown')
      const bad = await expectRefusal(
        await target.post(withoutId('message/send', { message: { role: 'user', parts: 'none' } })),
        { code: -32602, id: null },
      )
      expect(namesField(bad.message, 'params.message.parts')).toBe(true)
    })

    it('answers the A2A v1.0 dialect the same way (SendMessage, and an unknown method)', async () => {
      const target = await transport.start(echoAgent)
      const headers = { 'A2A-Version': '1.0' }
      const sent = (await (
        await target.post(
          withoutId('SendMessage', { message: { role: 'ROLE_USER', messageId: 'v1-no-id', parts: [{ text: 'hi' }] } }),
          headers,
        )
      ).json()) as any
      expect(sent).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        result: { task: { status: { state: 'TASK_STATE_COMPLETED' } } },
      })
      const unknown = (await (await target.post(withoutId('NoSuchMethod', {}), headers)).json()) as any
      expect(unknown).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32601 } })
    })
  })

  describe('unknown method → -32601', () => {
    it.each(unknownMethods)('answers %s with -32601 naming the method, without a prototype lookup', async (method) => {
      const target = await transport.start(echoAgent)
      const response = await target.post(rpcBody(method, userMessage('x'), `m-${method}`))
      const error = await expectRefusal(response, { code: -32601, id: `m-${method}` })
      expect(error.message).toContain(method)
      expect(target.logger.text('error')).toBe('')
    })

    it('answers an unknown method with -32601 even when its params are also wrong', async () => {
      const target = await transport.start(echoAgent)
      await expectRefusal(await target.post(rpcBody('tasks/list', 'not-an-object', 5)), { code: -32601, id: 5 })
    })
  })

  describe('wrong or missing params → -32602 naming the field', () => {
    it('accepts the valid follow-up the cases below are built from', async () => {
      const { target, waiting } = await withWaitingTask()
      const reply = await target.rpc('message/send', followUp(waiting.id), { id: 'control' })
      expect(reply.body.id).toBe('control')
      expect(reply.body.result).toMatchObject({ id: waiting.id, status: { state: 'completed' } })
    })

    describe.each(['message/send', 'message/stream'])('%s', (method) => {
      it.each(sendParamCases)(
        'answers $name with -32602 naming $field, as JSON, leaving the task alone',
        async ({ params, field }) => {
          const { target, waiting, before, snapshot } = await withWaitingTask()
          const response = await target.post(rpcBody(method, params(waiting.id), 'bad-params'))
          const error = await expectRefusal(response, { code: -32602, id: 'bad-params' })
          expect(namesField(error.message, field), `"${error.message}" should name ${field}`).toBe(true)
          expect(await snapshot()).toEqual(before)
        },
      )

      it('answers params.id and params.message.taskId naming different tasks with -32602 naming both', async () => {
        const { target, waiting, before, snapshot } = await withWaitingTask()
        const other = (await target.rpc('message/send', userMessage('ask again'))).body.result
        const otherBefore = await (async () => (await target.rpc('tasks/get', { id: other.id })).body.result)()
        const response = await target.post(rpcBody(method, followUp(waiting.id, {}, { id: other.id }), 99))
        const error = await expectRefusal(response, { code: -32602, id: 99 })
        expect(namesField(error.message, 'params.id')).toBe(true)
        expect(namesField(error.message, 'params.message.taskId')).toBe(true)
        expect(await snapshot()).toEqual(before)
        expect((await target.rpc('tasks/get', { id: other.id })).body.result).toEqual(otherBefore)
      })
    })

    it.each([
      ...taskParamCases('tasks/get'),
      ...taskParamCases('tasks/cancel'),
      ...historyLengthCases.map((c) => ({ ...c, name: `tasks/get with ${c.name}` })),
    ])('answers $name with -32602 naming $field', async ({ name, params, field }) => {
      const { target, waiting, before, snapshot } = await withWaitingTask()
      const method = name.startsWith('tasks/cancel') ? 'tasks/cancel' : 'tasks/get'
      const response = await target.post(rpcBody(method, params(waiting.id), 'task-params'))
      const error = await expectRefusal(response, { code: -32602, id: 'task-params' })
      expect(namesField(error.message, field), `"${error.message}" should name ${field}`).toBe(true)
      expect(error.message).not.toMatch(/not found/i)
      expect(await snapshot()).toEqual(before)
    })
  })

  describe('body size limit → HTTP 413', () => {
    it('refuses a body over the default 1 MiB limit that declares its Content-Length with 413 and a JSON-RPC error', async () => {
      const target = await transport.start(echoAgent)
      const body = requestOfSize(1024 * 1024 + 1, 'huge')
      const response = await target.post(body, { 'content-length': String(Buffer.byteLength(body)) })
      await expectRefusal(response, { code: -32600, id: null, status: 413 })
    })

    it('accepts a body of exactly 1 MiB by default', async () => {
      const target = await transport.start(echoAgent)
      const response = await target.post(requestOfSize(1024 * 1024, 'mebibyte'))
      expect(response.status).toBe(200)
      expect((await response.json()).result.status.state).toBe('completed')
    })

    it('with maxBodySize, accepts a body just under and at the limit and refuses one byte over', async () => {
      const limit = 600
      const target = await transport.start(echoAgent, { maxBodySize: limit })
      for (const size of [limit - 1, limit]) {
        const response = await target.post(requestOfSize(size, `size-${size}`))
        expect(response.status, `${size} bytes`).toBe(200)
        const body = await response.json()
        expect(body.id).toBe(`size-${size}`)
        expect(body.result.status.state).toBe('completed')
      }
      const error = await expectRefusal(await target.post(requestOfSize(limit + 1, 'over')), {
        code: -32600,
        id: null,
        status: 413,
      })
      expect(error.message).toContain(String(limit))
    })

    it('with maxBodySize, applies the same limit to a streamed body without Content-Length', async () => {
      const limit = 600
      const target = await transport.start(echoAgent, { maxBodySize: limit })
      const under = await postStream(target, requestOfSize(limit, 'stream-at-limit'))
      expect(under.status).toBe(200)
      expect((await under.json()).result.status.state).toBe('completed')
      await expectRefusal(await postStream(target, requestOfSize(limit + 1, 'stream-over')), {
        code: -32600,
        id: null,
        status: 413,
      })
    })

    it('counts the limit in bytes, not characters', async () => {
      const limit = 600
      const target = await transport.start(echoAgent, { maxBodySize: limit })
      // 2-byte characters: fewer than `limit` characters, more than `limit` bytes.
      const body = requestOfSize(limit + 2, 'wide', 'é')
      expect(body.length).toBeLessThan(limit)
      await expectRefusal(await target.post(body), { code: -32600, id: null, status: 413 })
      await expectRefusal(await postStream(target, body), { code: -32600, id: null, status: 413 })
    })

    it('refuses a streamed (chunked) body over the limit with 413 and keeps answering', async () => {
      const target = await transport.start(echoAgent, { maxBodySize: 4096 })
      const response = await postStream(target, requestOfSize(64 * 1024, 'big-stream'))
      await expectRefusal(response, { code: -32600, id: null, status: 413 })
      const reply = await target.rpc('message/send', userMessage('after the big one'), { id: 'after' })
      expect(reply.body).toMatchObject({ id: 'after', result: { status: { state: 'completed' } } })
    })

    it.runIf(transport.name === 'in-process')(
      'refuses a body over the limit even when its Content-Length understates it',
      async () => {
        const target = await transport.start(echoAgent, { maxBodySize: 600 })
        const body = requestOfSize(4096, 'understated')
        const response = await target.post(body, { 'content-length': '100' })
        await expectRefusal(response, { code: -32600, id: null, status: 413 })
      },
    )

    it.runIf(transport.name === 'node-server')(
      'refuses a chunked node:http upload as soon as it passes the limit, before it ends, and keeps answering',
      async () => {
        const target = await transport.start(echoAgent, { maxBodySize: 1000 })
        const upload = chunkedUpload(target.url)
        // 30 chunks of 48 bytes: over the limit, and the request is not finished.
        for (let i = 0; i < 30; i++) upload.request.write(CHUNK)
        const answer = await upload.response
        // Chunked, and still open when the answer came.
        expect(upload.request.getHeader('content-length')).toBeUndefined()
        expect(upload.request.writableEnded).toBe(false)
        await expectRefusal(answer.response, { code: -32600, id: null, status: 413 })
        upload.request.destroy()
        const reply = await target.rpc('message/send', userMessage('still here'), { id: 'after-chunked' })
        expect(reply.body).toMatchObject({ id: 'after-chunked', result: { status: { state: 'completed' } } })
      },
    )

    it.runIf(transport.name === 'node-server').each(['chunked', 'content-length'] as const)(
      'does not leave a keep-alive connection stalled after refusing a %s upload mid-body',
      async (framing) => {
        const target = await transport.start(echoAgent, { maxBodySize: 1000 })
        const keepAlive = new HttpAgent({ keepAlive: true, maxSockets: 1 })
        try {
          // 30 chunks of 48 bytes in all; a declared length is refused at once, a chunked body once past the limit.
          const upload = chunkedUpload(
            target.url,
            keepAlive,
            framing === 'content-length' ? { 'content-length': String(30 * CHUNK.length) } : {},
          )
          for (let i = 0; i < 15; i++) upload.request.write(CHUNK)
          if (framing === 'chunked') for (let i = 0; i < 15; i++) upload.request.write(CHUNK)
          const answer = await upload.response
          await expectRefusal(answer.response, { code: -32600, id: null, status: 413 })
          // The client finishes its upload, then sends the next request the way an HTTP client pool does: on
          // the same connection unless the server closed it.
          if (framing === 'content-length') for (let i = 0; i < 15; i++) upload.request.write(CHUNK)
          upload.request.end()
          const next = chunkedUpload(target.url, keepAlive)
          next.request.end(rpcBody('message/send', userMessage('next'), 'next'))
          const timeout = new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error('no answer within 8 s to the request after the 413')), 8000),
          )
          const reply = await Promise.race([next.response, timeout])
          expect(reply.response.status).toBe(200)
          expect(await reply.response.json()).toMatchObject({ id: 'next', result: { status: { state: 'completed' } } })
        } finally {
          keepAlive.destroy()
        }
      },
    )
  })

  describe('Content-Type', () => {
    it.each([
      'text/plain',
      'application/x-www-form-urlencoded',
      'text/plain; charset=utf-8',
      'multipart/form-data; boundary=x',
    ])('refuses %s with HTTP 415 and -32600 naming the content type, echoing the id, running nothing', async (type) => {
      const target = await transport.start(echoAgent)
      const response = await target.post(rpcBody('message/send', userMessage('typed'), 'typed'), {
        'content-type': type,
      })
      const error = await expectRefusal(response, { code: -32600, id: 'typed', status: 415 })
      expect(error.message).toContain('Content-Type')
      expect(error.message).toContain(type.split(';')[0])
      expect((await target.app.store.list({ limit: 10 })).total).toBe(0)
    })

    it.each(['application/json; charset=utf-8', 'application/json', 'Application/JSON'])('accepts %s', async (type) => {
      const target = await transport.start(echoAgent)
      const response = await target.post(rpcBody('message/send', userMessage('typed'), 'typed'), {
        'content-type': type,
      })
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ id: 'typed', result: { status: { state: 'completed' } } })
    })

    it('refuses a body without any Content-Type (a browser sends one cross-site without a preflight) with 415', async () => {
      const target = await transport.start(echoAgent)
      const bytes = new TextEncoder().encode(rpcBody('message/send', userMessage('untyped'), 'untyped'))
      // The premise: a byte body gets no default content type.
      expect(new Request('http://x/', { method: 'POST', body: bytes }).headers.get('content-type')).toBeNull()
      const response = await target.fetch('/', { method: 'POST', body: bytes })
      const error = await expectRefusal(response, { code: -32600, id: 'untyped', status: 415 })
      expect(error.message).toBe('Invalid Request: Content-Type must be application/json (got none)')
      expect((await target.app.store.list({ limit: 10 })).total).toBe(0)
    })

    it('refuses a v1.0 request without a JSON Content-Type with 415 and ContentTypeNotSupported (-32005)', async () => {
      const target = await transport.start(echoAgent)
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 'v1',
        method: 'SendMessage',
        params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
      })
      const response = await target.post(body, { 'content-type': 'text/plain' })
      expect(response.status).toBe(415)
      expect(await response.json()).toEqual({
        jsonrpc: '2.0',
        id: 'v1',
        error: {
          code: -32005,
          message: 'Content-Type must be application/json (got "text/plain")',
          data: [expect.objectContaining({ reason: 'CONTENT_TYPE_NOT_SUPPORTED' })],
        },
      })
      expect((await target.app.store.list({ limit: 10 })).total).toBe(0)
    })

    it('applies the same rules at POST /jsonrpc', async () => {
      const target = await transport.start(echoAgent)
      const post = (body: string, type = 'application/json') =>
        target.fetch('/jsonrpc', { method: 'POST', body, headers: { 'content-type': type } })
      await expectRefusal(await post('{oops'), { code: -32700, id: null })
      await expectRefusal(await post(rpcBody('message/send', userMessage('x'), 'alias'), 'text/plain'), {
        code: -32600,
        id: 'alias',
        status: 415,
      })
      await expectRefusal(await post(rpcBody('__proto__', {}, 'alias')), { code: -32601, id: 'alias' })
      await expectRefusal(await post(rpcBody('message/send', { message: { role: 'user', parts: [] } }, 'alias')), {
        code: -32602,
        id: 'alias',
      })
    })
  })

  describe('unexpected errors → -32603', () => {
    it.each(['message/send', 'message/stream'])(
      '%s: a store that throws yields -32603 with a generic message; the detail is only in the log',
      async (method) => {
        const target = await transport.start(echoAgent, { store: fragileStore() })
        const response = await target.post(rpcBody(method, userMessage('x'), 'internal'))
        const raw = await response.clone().text()
        const error = await expectRefusal(response, { code: -32603, id: 'internal' })
        expect(raw).not.toContain('SECRET')
        expect(raw).not.toContain('disk on fire')
        expect(error.message).toMatch(/internal error/i)
        expect(target.logger.text('error')).toContain('disk on fire SECRET')
      },
    )
  })

  describe('after a burst of bad input', () => {
    it('still answers a normal message/send, and no earlier task changed', async () => {
      const limit = 4096
      const store = fragileStore((task) => firstText(task) === 'explode')
      const target = await transport.start(askingAgent, { maxBodySize: limit, store })
      const done = (await target.rpc('message/send', userMessage('hello'))).body.result
      const waiting = (await target.rpc('message/send', userMessage('ask me'))).body.result
      expect(done.status.state).toBe('completed')
      expect(waiting.status.state).toBe('input-required')
      const get = async (id: string) => (await target.rpc('tasks/get', { id })).body.result
      const before = { done: await get(done.id), waiting: await get(waiting.id) }

      const checks: Array<Promise<unknown>> = []
      const refuse = (send: Promise<Response>, refusal: Refusal) =>
        checks.push(send.then((response) => expectRefusal(response, refusal)))
      for (let round = 0; round < 3; round++) {
        for (const { body, refusal } of [...parseErrors, ...invalidRequests]) refuse(target.post(body), refusal)
        for (const method of unknownMethods)
          refuse(target.post(rpcBody(method, followUp(waiting.id), 'unknown')), { code: -32601, id: 'unknown' })
        for (const method of ['message/send', 'message/stream']) {
          for (const { params } of sendParamCases)
            refuse(target.post(rpcBody(method, params(waiting.id), 'p')), { code: -32602, id: 'p' })
          refuse(target.post(rpcBody(method, followUp(waiting.id, {}, { id: done.id }), 'mismatch')), {
            code: -32602,
            id: 'mismatch',
          })
          refuse(target.post(rpcBody(method, followUp(done.id, {}, { id: waiting.id }), 'mismatch')), {
            code: -32602,
            id: 'mismatch',
          })
        }
        for (const method of ['tasks/get', 'tasks/cancel']) {
          for (const { params } of taskParamCases(method as 'tasks/get'))
            refuse(target.post(rpcBody(method, params(waiting.id), 't')), { code: -32602, id: 't' })
        }
        for (const { params } of historyLengthCases) {
          refuse(target.post(rpcBody('tasks/get', params(waiting.id), 'h')), { code: -32602, id: 'h' })
          refuse(target.post(rpcBody('tasks/get', params(done.id), 'h')), { code: -32602, id: 'h' })
        }
        const oversized = requestOfSize(limit + 1, 'oversized')
        refuse(target.post(oversized, { 'content-length': String(limit + 1) }), { code: -32600, id: null, status: 413 })
        refuse(postStream(target, requestOfSize(8 * limit, 'oversized-stream')), {
          code: -32600,
          id: null,
          status: 413,
        })
        for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
          refuse(target.post(rpcBody('message/send', followUp(waiting.id), 'typed'), { 'content-type': type }), {
            code: -32600,
            id: 'typed',
            status: 415,
          })
        }
        refuse(target.post(rpcBody('message/send', userMessage('explode'), 'boom')), { code: -32603, id: 'boom' })
      }
      await Promise.all(checks)

      const reply = await target.rpc('message/send', userMessage('normal again'), { id: 'normal' })
      expect(reply.status).toBe(200)
      expect(reply.body).toMatchObject({ id: 'normal', result: { status: { state: 'completed' } } })
      expect(reply.body.result.artifacts[0].parts[0].text).toBe('Answer: normal again')
      expect(await get(done.id)).toEqual(before.done)
      expect(await get(waiting.id)).toEqual(before.waiting)
      // The waiting task still takes its follow-up.
      const resumed = await target.rpc('message/send', followUp(waiting.id))
      expect(resumed.body.result).toMatchObject({ id: waiting.id, status: { state: 'completed' } })
      // The only error logged is the store failure; bad input is not an error of the server.
      const errors = target.logger.lines.filter((line) => line.level === 'error')
      expect(errors.length).toBe(3)
      expect(
        errors.every((line) => line.detail instanceof Error && line.detail.message === 'disk on fire SECRET'),
      ).toBe(true)
    })
  })
})

/** 48 bytes of an unfinished JSON object. */
const CHUNK = `{"a":"${'x'.repeat(40)}",`

/** A POST to `/` over node:http whose body the test writes itself; chunked unless a Content-Length is given. */
function chunkedUpload(url: string, httpAgent?: HttpAgent, headers: Record<string, string> = {}) {
  const { hostname, port } = new URL(url)
  let request!: ClientRequest
  const response = new Promise<{ response: Response }>((resolve, reject) => {
    request = httpRequest(
      {
        host: hostname,
        port,
        path: '/',
        method: 'POST',
        agent: httpAgent ?? false,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('error', reject)
        res.on('end', () => {
          const fetchHeaders = new Headers()
          for (const [name, value] of Object.entries(res.headers))
            if (typeof value === 'string') fetchHeaders.set(name, value)
          resolve({
            response: new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0, headers: fetchHeaders }),
          })
        })
      },
    )
    request.on('error', reject)
  })
  // Errors after the answer (the server may reset an upload it refused) are not what these tests check.
  response.catch(() => {})
  return { request, response }
}
