import { describe, expect, it } from 'vitest'
import type { AuthScheme } from '../../runtime/src/types.ts'
import { agent, chunkedAgent, deferred, echoAgent, progressAgent } from './_agents.ts'
import { eventReader, readEvents } from './_sse.ts'
import { type Target, type Transport, transports } from './_transports.ts'
import { startReceiver } from './_webhook.ts'

/** What both card shapes say about the test agent of `_agents.ts`. */
const TEST_CARD_FIELDS = {
  name: 'Test Agent',
  description: 'An agent for the protocol suite',
  version: '1.2.3',
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'Echo', description: 'Repeats the message', tags: ['test'] }],
}

/**
 * Conformance of the A2A v1.0 JSON-RPC binding (A2A v1.0.1 specification, a2a-tck requirements, the
 * @a2a-js/sdk 1.3.0 client): PascalCase methods, ProtoJSON shapes, SSE events as JSON-RPC responses,
 * SubscribeToTask, ListTasks, ErrorInfo details, A2A-Version negotiation and the agent-card.json shapes.
 * Each test is named after the requirement it checks.
 */

const V1 = { 'A2A-Version': '1.0' } as const
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3}|\.\d{6}|\.\d{9})?Z$/
const STREAM_RESULT_KEYS = ['artifactUpdate', 'message', 'statusUpdate', 'task']

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let messageCount = 0
const userMessage = (text: string, extra: Record<string, unknown> = {}) => ({
  messageId: `v1-msg-${++messageCount}-${Math.random().toString(36).slice(2)}`,
  role: 'ROLE_USER',
  parts: [{ text }],
  ...extra,
})

/** SendMessage / SendStreamingMessage params in the v1.0 shape. */
const sendParams = (
  text: string,
  options: { message?: Record<string, unknown>; configuration?: Record<string, unknown> } = {},
) => ({
  message: userMessage(text, options.message),
  ...(options.configuration && { configuration: options.configuration }),
})

/** Fails instead of hanging: the promise must settle within `ms`. */
async function within<T>(promise: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

const errorInfo = (reason: string) => [
  { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'a2a-protocol.org' },
]

/** A v1.0 call: the method as given, with `A2A-Version: 1.0` unless the headers say otherwise; answered within 5 s. */
const call = (
  target: Target,
  method: string,
  params?: unknown,
  options: { id?: string | number; headers?: Record<string, string> } = {},
) => within(target.rpc(method, params, { ...options, headers: { ...V1, ...options.headers } }), `the ${method} answer`)

/** The `result` of a v1.0 call that must succeed. */
async function resultOf(target: Target, method: string, params?: unknown): Promise<any> {
  const reply = await call(target, method, params)
  expect(reply.status).toBe(200)
  expect(reply.body.error).toBeUndefined()
  return reply.body.result
}

/** SendMessage, returning the Task from its `{ task }` wrapper. */
async function sendTask(target: Target, text: string, options: Parameters<typeof sendParams>[1] = {}): Promise<any> {
  const result = await resultOf(target, 'SendMessage', sendParams(text, options))
  expect(Object.keys(result)).toEqual(['task'])
  return result.task
}

/** A JSON-RPC error answer carrying exactly this code (and, when given, this ErrorInfo reason). */
function expectError(reply: { status: number; body: any }, id: string | number, code: number, reason?: string) {
  expect(reply.status).toBe(200)
  expect(reply.body).toEqual({
    jsonrpc: '2.0',
    id,
    error: { code, message: expect.any(String), ...(reason && { data: errorInfo(reason) }) },
  })
}

/** POSTs a (streaming) v1.0 call and hands back the raw response. */
const post = (
  target: Target,
  method: string,
  params: unknown,
  options: { id?: string | number; signal?: AbortSignal; headers?: Record<string, string> } = {},
) =>
  target.fetch('/', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...V1, ...options.headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: options.id ?? 'stream-1', method, params }),
    ...(options.signal && { signal: options.signal }),
  })

/** Checks one SSE event is a JSON-RPC response to `id` carrying one StreamResponse, and returns that result. */
function streamResult(event: any, id: string | number): any {
  expect(Object.keys(event).sort()).toEqual(['id', 'jsonrpc', 'result'])
  expect(event.jsonrpc).toBe('2.0')
  expect(event.id).toBe(id)
  const keys = Object.keys(event.result)
  expect(keys).toHaveLength(1)
  expect(STREAM_RESULT_KEYS).toContain(keys[0])
  return event.result
}

/** Reads a whole stream, which must end on its own, and returns its StreamResponses. */
async function readStream(response: Response, id: string | number): Promise<any[]> {
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream\b/)
  const { events } = await within(readEvents(response, 'numbered'), 'the end of the stream')
  return events.map((event) => streamResult(event, id))
}

/** Reads the rest of a live stream until the server closes it. */
async function drain(reader: ReturnType<typeof eventReader>, id: string | number): Promise<any[]> {
  const results: any[] = []
  for (let i = 0; i < 100; i++) {
    const event = await within(reader.next(), 'the next stream event or the end of the stream')
    if (event === undefined) return results
    results.push(streamResult(event, id))
  }
  throw new Error('the stream did not end after 100 events')
}

/** One line per StreamResponse: what it carries and its state or first text. */
const summary = (result: any): string => {
  if (result.task) return 'task'
  if (result.statusUpdate) return `status:${result.statusUpdate.status.state}`
  if (result.artifactUpdate) return `artifact:${result.artifactUpdate.artifact.parts[0].text}`
  return `other:${Object.keys(result).join(',')}`
}

/** Every path at which a `kind` key appears (v1.0 ProtoJSON has none). */
function kindPaths(value: unknown, path = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => kindPaths(item, `${path}[${i}]`))
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([key, child]) => [
    ...(key === 'kind' ? [`${path}.kind`] : []),
    ...kindPaths(child, `${path}.${key}`),
  ])
}

/** Tasks in the store, through ListTasks. */
const totalTasks = async (target: Target): Promise<number> => (await resultOf(target, 'ListTasks', {})).totalSize

/**
 * One agent for most tests, driven by the user's text:
 * - "ask": after a short pause asks for input; the follow-up turn greets and reports the history it saw
 * - "fail": fails
 * - "wait": reports `working`, then waits for `release()` (or a cancel) and completes with "finished"
 * - "steps": reports `working`, waits for `release()`, then a progress status, artifacts "a" and "b", completes
 * - anything else: answers "Echo: <text>" in an artifact and completes
 */
function scriptedAgent() {
  const gate = deferred()
  const started = deferred<string>()
  const counts = { runs: 0, cancels: 0 }
  const definition = agent(
    async (ctx, task) => {
      counts.runs++
      if (ctx.history.length > 1) {
        task.artifact({
          saw: ctx.history.map((m) => `${m.role}: ${m.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('')}`),
        })
        task.artifact(`Hello, ${ctx.text}`)
        return task.complete()
      }
      if (ctx.text === 'ask') {
        task.working('thinking')
        await sleep(30)
        return task.inputRequired('What is your name?')
      }
      if (ctx.text === 'fail') return task.fail('failed on purpose')
      if (ctx.text === 'wait' || ctx.text === 'steps') {
        task.working('started')
        started.resolve(ctx.taskId)
        const aborted = new Promise<void>((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
        )
        await Promise.race([gate.promise, aborted])
        if (ctx.signal.aborted) return
        if (ctx.text === 'steps') {
          task.working('step 2')
          task.artifact('a')
          task.artifact('b')
        } else task.artifact('finished')
        return task.complete()
      }
      task.artifact(`Echo: ${ctx.text}`)
      task.complete()
    },
    {
      cancel: () => {
        counts.cancels++
      },
    },
  )
  return { agent: definition, release: () => gate.resolve(), started: started.promise, counts }
}

/** A scripted agent on `transport`. */
async function startScripted(transport: Transport) {
  const script = scriptedAgent()
  // A task a failing test leaves waiting at the gate must not hold the close for long.
  const target = await transport.start(script.agent, { shutdownTimeoutMs: 200 })
  return { ...script, target }
}

/** Sends "wait" (or "steps") with returnImmediately and waits until the agent holds the task. */
async function startGatedTask(script: Awaited<ReturnType<typeof startScripted>>, text: 'wait' | 'steps' = 'wait') {
  const task = await within(
    sendTask(script.target, text, { configuration: { returnImmediately: true } }),
    'the immediate SendMessage answer',
    2000,
  )
  expect(await within(script.started, 'the agent starting')).toBe(task.id)
  return task
}

/** Opens a SubscribeToTask stream that the test can leave: aborting the fetch (node) or cancelling the body. */
async function subscribe(transport: Transport, target: Target, taskId: string, id: string | number) {
  const controller = new AbortController()
  const response = await post(target, 'SubscribeToTask', { id: taskId }, { id, signal: controller.signal })
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream\b/)
  const reader = eventReader(response)
  return {
    reader,
    async leave() {
      if (transport.name === 'in-process') await reader.cancel()
      else controller.abort()
    },
  }
}

const pushCalls: Array<[string, (taskId: string) => Record<string, unknown>]> = [
  [
    'CreateTaskPushNotificationConfig',
    (taskId) => ({ taskId, url: 'https://client.example.com/hook', token: 'push-token' }),
  ],
  ['GetTaskPushNotificationConfig', (taskId) => ({ taskId, id: 'config-1' })],
  ['ListTaskPushNotificationConfigs', (taskId) => ({ taskId })],
  ['DeleteTaskPushNotificationConfig', (taskId) => ({ taskId, id: 'config-1' })],
]

describe.each(transports)('A2A v1.0 JSON-RPC binding ($name)', (transport) => {
  describe('methods', () => {
    it('SendMessage MUST answer a SendMessageResponse wrapping the Task as { task }', async () => {
      const target = await transport.start(echoAgent)
      const reply = await call(target, 'SendMessage', sendParams('hello'), { id: 'send-1' })
      expect(reply.status).toBe(200)
      expect(reply.headers.get('content-type')).toMatch(/^application\/json\b/)
      expect(Object.keys(reply.body).sort()).toEqual(['id', 'jsonrpc', 'result'])
      expect(reply.body.id).toBe('send-1')
      expect(Object.keys(reply.body.result)).toEqual(['task'])
      const task = reply.body.result.task
      expect(task.status.state).toBe('TASK_STATE_COMPLETED')
      expect(task.artifacts).toEqual([{ artifactId: expect.any(String), parts: [{ text: 'Echo: hello' }] }])
      expect(task.history).toEqual([
        {
          messageId: expect.any(String),
          role: 'ROLE_USER',
          parts: [{ text: 'hello' }],
          taskId: task.id,
          contextId: task.contextId,
        },
      ])
    })

    it('GetTask MUST return the Task itself (no wrapper) and honour historyLength', async () => {
      const { target } = await startScripted(transport)
      const first = await sendTask(target, 'ask')
      const sent = await sendTask(target, 'Ada', { message: { taskId: first.id } })
      expect(sent.history).toHaveLength(3)

      const reply = await call(target, 'GetTask', { id: sent.id }, { id: 'get-1' })
      expect(reply.body.id).toBe('get-1')
      expect(reply.body.result).not.toHaveProperty('task')
      expect(reply.body.result).toEqual(sent)

      const lastTwo = await resultOf(target, 'GetTask', { id: sent.id, historyLength: 2 })
      expect(lastTwo.history).toEqual(sent.history.slice(-2))
      const none = await resultOf(target, 'GetTask', { id: sent.id, historyLength: 0 })
      expect(none.history ?? []).toEqual([])
      expect(none.id).toBe(sent.id)
    })

    it('CancelTask MUST return the canceled Task itself (no wrapper) in TASK_STATE_CANCELED', async () => {
      const script = await startScripted(transport)
      const task = await startGatedTask(script)
      const reply = await call(script.target, 'CancelTask', { id: task.id }, { id: 'cancel-1' })
      expect(reply.body.id).toBe('cancel-1')
      expect(reply.body.result).not.toHaveProperty('task')
      expect(reply.body.result.id).toBe(task.id)
      expect(reply.body.result.contextId).toBe(task.contextId)
      expect(reply.body.result.status.state).toBe('TASK_STATE_CANCELED')
      expect(script.counts.cancels).toBe(1)
      expect((await resultOf(script.target, 'GetTask', { id: task.id })).status.state).toBe('TASK_STATE_CANCELED')
    })

    it('GetExtendedAgentCard MUST answer -32004 UnsupportedOperation when the card declares no extended card (§3.3.4)', async () => {
      const target = await transport.start(echoAgent)
      const card = await (await target.fetch('/.well-known/agent-card.json', { headers: V1 })).json()
      expect(card.capabilities.extendedAgentCard ?? false).toBe(false)
      expectError(
        await call(target, 'GetExtendedAgentCard', {}, { id: 'ext-1' }),
        'ext-1',
        -32004,
        'UNSUPPORTED_OPERATION',
      )
    })

    it.each(pushCalls)('%s MUST answer -32003 PushNotificationNotSupported', async (method, params) => {
      const target = await transport.start(echoAgent)
      const task = await sendTask(target, 'hi')
      expectError(
        await call(target, method, params(task.id), { id: 'push-1' }),
        'push-1',
        -32003,
        'PUSH_NOTIFICATION_NOT_SUPPORTED',
      )
    })

    it('SendMessage with a push notification config MUST answer -32003 and start no task', async () => {
      const script = await startScripted(transport)
      const params = sendParams('hi', {
        configuration: { taskPushNotificationConfig: { url: 'https://client.example.com/hook', token: 'push-token' } },
      })
      expectError(
        await call(script.target, 'SendMessage', params, { id: 'push-send' }),
        'push-send',
        -32003,
        'PUSH_NOTIFICATION_NOT_SUPPORTED',
      )
      expect(script.counts.runs).toBe(0)
      expect(await totalTasks(script.target)).toBe(0)
    })

    it('SendMessage to a task in a terminal state MUST answer -32004 UnsupportedOperation', async () => {
      const target = await transport.start(echoAgent)
      const task = await sendTask(target, 'hi')
      const followUp = sendParams('more', { message: { taskId: task.id } })
      expectError(
        await call(target, 'SendMessage', followUp, { id: 'ended-1' }),
        'ended-1',
        -32004,
        'UNSUPPORTED_OPERATION',
      )
    })

    it('An unknown method MUST answer -32601 Method not found', async () => {
      const target = await transport.start(echoAgent)
      expectError(await call(target, 'NoSuchMethod', {}, { id: 'nope' }), 'nope', -32601)
      expectError(await call(target, 'sendMessage', sendParams('x'), { id: 7 }), 7, -32601)
    })
    it.each([
      ['messageId', 'params.message.messageId'],
      ['role', 'params.message.role'],
      ['parts', 'params.message.parts'],
    ])('SendMessage without message.%s MUST answer -32602 naming it, and start no task', async (left, field) => {
      const script = await startScripted(transport)
      for (const parts of [[{ text: 'hi' }], [{ kind: 'text', text: 'hi' }]]) {
        const message: Record<string, unknown> = { ...userMessage('hi'), parts }
        delete message[left]
        const reply = await call(script.target, 'SendMessage', { message }, { id: 'required' })
        expectError(reply, 'required', -32602)
        expect(reply.body.error.message).toContain(`\`${field}\``)
      }
      expect(script.counts.runs).toBe(0)
      expect(await totalTasks(script.target)).toBe(0)
    })
  })

  describe('shapes (ProtoJSON)', () => {
    it('v1.0 results MUST NOT carry a kind field anywhere', async () => {
      const script = await startScripted(transport)
      const { target } = script
      const shapes = agent((_ctx, task) => {
        task.artifact([
          { kind: 'text', text: 't' },
          { kind: 'data', data: { n: 1 } },
          { kind: 'file', file: { uri: 'https://files.example.com/y.png', mimeType: 'image/png', name: 'y.png' } },
        ])
        task.complete('done')
      })
      const shapeTarget = await transport.start(shapes)
      const seen: unknown[] = []
      const completed = await sendTask(shapeTarget, 'x')
      seen.push(
        completed,
        await resultOf(shapeTarget, 'GetTask', { id: completed.id }),
        await resultOf(shapeTarget, 'ListTasks', { includeArtifacts: true }),
      )
      seen.push(await readStream(await post(shapeTarget, 'SendStreamingMessage', sendParams('y'), { id: 's' }), 's'))
      const asked = await sendTask(target, 'ask')
      seen.push(asked, await sendTask(target, 'Ada', { message: { taskId: asked.id } }))
      const gated = await startGatedTask(script)
      const sub = await subscribe(transport, target, gated.id, 'sub')
      seen.push(await resultOf(target, 'CancelTask', { id: gated.id }), await drain(sub.reader, 'sub'))
      for (const value of seen) expect(kindPaths(value)).toEqual([])
      expect(seen.flat().length).toBeGreaterThan(10)
    })

    it('Task states MUST be the TASK_STATE_* names', async () => {
      const script = await startScripted(transport)
      const { target } = script
      expect((await sendTask(target, 'hello')).status.state).toBe('TASK_STATE_COMPLETED')
      expect((await sendTask(target, 'ask')).status.state).toBe('TASK_STATE_INPUT_REQUIRED')
      expect((await sendTask(target, 'fail')).status.state).toBe('TASK_STATE_FAILED')
      const working = await startGatedTask(script)
      expect(working.status.state).toBe('TASK_STATE_WORKING')
      expect((await resultOf(target, 'GetTask', { id: working.id })).status.state).toBe('TASK_STATE_WORKING')
      expect((await resultOf(target, 'CancelTask', { id: working.id })).status.state).toBe('TASK_STATE_CANCELED')
    })

    it('History roles MUST be ROLE_USER and ROLE_AGENT', async () => {
      const { target } = await startScripted(transport)
      const asked = await sendTask(target, 'ask')
      expect(asked.history.map((m: any) => [m.role, m.parts])).toEqual([
        ['ROLE_USER', [{ text: 'ask' }]],
        ['ROLE_AGENT', [{ text: 'What is your name?' }]],
      ])
      expect(asked.status.message).toMatchObject({ role: 'ROLE_AGENT', parts: [{ text: 'What is your name?' }] })
    })

    it("A part of a media type the card's defaultInputModes and skills' inputModes do not name MUST be refused with -32005 ContentTypeNotSupported naming the types taken, and run nothing", async () => {
      let ran = false
      const textOnly = agent((_ctx, task) => {
        ran = true
        task.complete()
      })
      const target = await transport.start(textOnly)
      const image = { raw: 'aGVsbG8=', mediaType: 'image/png', filename: 'a.png' }
      const reply = await call(
        target,
        'SendMessage',
        sendParams('x', { message: { parts: [{ text: 'look' }, image] } }),
        { id: 'modes' },
      )
      expectError(reply, 'modes', -32005, 'CONTENT_TYPE_NOT_SUPPORTED')
      expect(reply.body.error.message).toMatch(/params\.message\.parts\[1\]. is image\/png.*takes text\/plain/)
      const data = await call(target, 'SendMessage', sendParams('x', { message: { parts: [{ data: { a: 1 } }] } }), {
        id: 'data',
      })
      expectError(data, 'data', -32005, 'CONTENT_TYPE_NOT_SUPPORTED')
      const streamed = await call(target, 'SendStreamingMessage', sendParams('x', { message: { parts: [image] } }), {
        id: 'stream',
      })
      expectError(streamed, 'stream', -32005, 'CONTENT_TYPE_NOT_SUPPORTED')
      expect(ran).toBe(false)
      // A text part with no media type is text/plain: a text/plain card takes it.
      expect((await sendTask(target, 'plain')).status.state).toBe('TASK_STATE_COMPLETED')
    })

    it("A part of a type a skill's inputModes name (image/*), or any type on a card taking */*, MUST be accepted", async () => {
      const image = { raw: 'aGVsbG8=', mediaType: 'image/png' }
      const skilled = agent((_ctx, task) => task.complete(), {
        card: {
          skills: [{ id: 'see', name: 'See', description: 'Looks at images', tags: [], inputModes: ['image/*'] }],
        },
      })
      const anything = agent((_ctx, task) => task.complete(), { card: { defaultInputModes: ['*/*'] } })
      for (const taking of [skilled, anything]) {
        const target = await transport.start(taking)
        expect((await sendTask(target, 'x', { message: { parts: [{ text: 'look' }, image] } })).status.state).toBe(
          'TASK_STATE_COMPLETED',
        )
      }
      const target = await transport.start(skilled)
      expectError(
        await call(
          target,
          'SendMessage',
          sendParams('x', { message: { parts: [{ raw: 'eA==', mediaType: 'audio/wav' }] } }),
          { id: 'audio' },
        ),
        'audio',
        -32005,
        'CONTENT_TYPE_NOT_SUPPORTED',
      )
    })

    it('Text, data and file parts ({text}, {data}, {url, mediaType, filename}, {raw, mediaType}) MUST be accepted and echoed in history', async () => {
      const parts = [
        { text: 'look at these' },
        { data: { city: 'Paris', days: 3 } },
        { url: 'https://files.example.com/report.pdf', mediaType: 'application/pdf', filename: 'report.pdf' },
        { raw: 'aGVsbG8gd29ybGQ=', mediaType: 'text/plain' },
      ]
      let seenByAgent: unknown
      const mirror = agent(
        (ctx, task) => {
          seenByAgent = ctx.parts
          task.artifact(ctx.parts)
          task.complete()
        },
        { card: { defaultInputModes: ['text/plain', 'application/json', 'application/pdf'] } },
      )
      const target = await transport.start(mirror)
      const task = await sendTask(target, 'ignored', { message: { parts } })
      expect(task.history).toHaveLength(1)
      expect(task.history[0].parts).toEqual(parts)
      expect(seenByAgent).toEqual([
        { kind: 'text', text: 'look at these' },
        { kind: 'data', data: { city: 'Paris', days: 3 } },
        {
          kind: 'file',
          file: { uri: 'https://files.example.com/report.pdf', mimeType: 'application/pdf', name: 'report.pdf' },
        },
        { kind: 'file', file: { bytes: 'aGVsbG8gd29ybGQ=', mimeType: 'text/plain' } },
      ])
      expect(task.artifacts[0].parts).toEqual(parts)
      expect((await resultOf(target, 'GetTask', { id: task.id })).history[0].parts).toEqual(parts)
    })

    it('Data parts MUST take any JSON value (object, array, string, number, boolean, null) and serve it back as sent: history, artifacts, GetTask and the stream', async () => {
      const values = [{ city: 'Paris' }, [1, 'two', null, { three: 3 }], 'a string', 42.5, false, null, [], {}]
      let seenByAgent: unknown
      const mirror = agent(
        (ctx, task) => {
          seenByAgent = ctx.parts
          task.artifact(ctx.parts)
          task.complete()
        },
        { card: { defaultInputModes: ['application/json'] } },
      )
      const target = await transport.start(mirror)
      const parts = values.map((data) => ({ data }))
      const task = await sendTask(target, 'ignored', { message: { parts } })
      expect(seenByAgent).toEqual(values.map((data) => ({ kind: 'data', data })))
      expect(task.history[0].parts).toEqual(parts)
      expect(task.artifacts[0].parts).toEqual(parts)
      const got = await resultOf(target, 'GetTask', { id: task.id })
      expect(got.history[0].parts).toEqual(parts)
      expect(got.artifacts[0].parts).toEqual(parts)
      const streamed = await readStream(
        await post(target, 'SendStreamingMessage', sendParams('x', { message: { parts } }), { id: 'data' }),
        'data',
      )
      expect(streamed.find((r) => r.artifactUpdate).artifactUpdate.artifact.parts).toEqual(parts)
    })

    it('A mediaType on text and data parts MUST be kept and served back, from the client and from the agent', async () => {
      let seenByAgent: unknown
      const typed = agent(
        (ctx, task) => {
          seenByAgent = ctx.parts
          task.artifact([
            { kind: 'text', text: '# Answer', mediaType: 'text/markdown' },
            { kind: 'data', data: ['a', 'b'], mediaType: 'application/vnd.example+json' },
          ])
          task.complete([{ kind: 'text', text: '*done*', mediaType: 'text/markdown' }])
        },
        { card: { defaultInputModes: ['*/*'] } },
      )
      const target = await transport.start(typed)
      const parts = [
        { text: '<p>hi</p>', mediaType: 'text/html' },
        { data: { q: 1 }, mediaType: 'application/vnd.example+json' },
      ]
      const task = await sendTask(target, 'ignored', { message: { parts } })
      expect(seenByAgent).toEqual([
        { kind: 'text', text: '<p>hi</p>', mediaType: 'text/html' },
        { kind: 'data', data: { q: 1 }, mediaType: 'application/vnd.example+json' },
      ])
      const answer = [
        { text: '# Answer', mediaType: 'text/markdown' },
        { data: ['a', 'b'], mediaType: 'application/vnd.example+json' },
      ]
      for (const served of [task, await resultOf(target, 'GetTask', { id: task.id })]) {
        expect(served.history[0].parts).toEqual(parts)
        expect(served.artifacts[0].parts).toEqual(answer)
        expect(served.status.message.parts).toEqual([{ text: '*done*', mediaType: 'text/markdown' }])
      }
      const streamed = await readStream(
        await post(target, 'SendStreamingMessage', sendParams('x', { message: { parts } }), { id: 'typed' }),
        'typed',
      )
      expect(streamed.find((r) => r.artifactUpdate).artifactUpdate.artifact.parts).toEqual(answer)
      expect(streamed.at(-1).statusUpdate.status.message.parts).toEqual([
        { text: '*done*', mediaType: 'text/markdown' },
      ])
    })

    it('Artifacts MUST carry an artifactId and parts in the v1.0 part shapes', async () => {
      const producer = agent((_ctx, task) => {
        task.artifact(
          [
            { kind: 'text', text: 't' },
            { kind: 'data', data: { n: 1 } },
            { kind: 'file', file: { uri: 'https://files.example.com/y.png', mimeType: 'image/png', name: 'y.png' } },
            { kind: 'file', file: { bytes: 'AAEC', mimeType: 'application/octet-stream' } },
          ],
          { name: 'result' },
        )
        task.complete()
      })
      const target = await transport.start(producer)
      const task = await sendTask(target, 'x')
      expect(task.artifacts).toEqual([
        {
          artifactId: expect.any(String),
          name: 'result',
          parts: [
            { text: 't' },
            { data: { n: 1 } },
            { url: 'https://files.example.com/y.png', mediaType: 'image/png', filename: 'y.png' },
            { raw: 'AAEC', mediaType: 'application/octet-stream' },
          ],
        },
      ])
      expect(task.artifacts[0].artifactId.length).toBeGreaterThan(0)
    })

    it('Timestamps MUST be ISO 8601 in UTC', async () => {
      const before = Date.now()
      const target = await transport.start(progressAgent)
      const task = await sendTask(target, 'time')
      const got = await resultOf(target, 'GetTask', { id: task.id })
      const listed = await resultOf(target, 'ListTasks', {})
      const streamed = await readStream(
        await post(target, 'SendStreamingMessage', sendParams('time'), { id: 't' }),
        't',
      )
      const stamps = [
        task.status.timestamp,
        got.status.timestamp,
        ...listed.tasks.map((t: any) => t.status.timestamp),
        ...streamed.filter((r) => r.statusUpdate).map((r) => r.statusUpdate.status.timestamp),
      ]
      expect(stamps.length).toBeGreaterThanOrEqual(6)
      const after = Date.now()
      for (const stamp of stamps) {
        expect(stamp).toMatch(ISO_UTC)
        expect(Date.parse(stamp)).toBeGreaterThanOrEqual(before - 1)
        expect(Date.parse(stamp)).toBeLessThanOrEqual(after + 1)
      }
    })
  })

  describe('blocking and multi-turn', () => {
    it('SendMessage MUST wait for a terminal state unless returnImmediately', async () => {
      const script = await startScripted(transport)
      let answered = false
      const pending = call(script.target, 'SendMessage', sendParams('wait')).then((reply) => {
        answered = true
        return reply
      })
      const taskId = await within(script.started, 'the agent starting')
      // A later request's answer: the send, had it answered before the task ended, would have done so by then.
      expect((await resultOf(script.target, 'GetTask', { id: taskId })).status.state).toBe('TASK_STATE_WORKING')
      expect(answered).toBe(false)
      script.release()
      const reply = await within(pending, 'the SendMessage answer')
      expect(reply.body.result.task.status.state).toBe('TASK_STATE_COMPLETED')
      expect(reply.body.result.task.artifacts[0].parts).toEqual([{ text: 'finished' }])
    })

    it('SendMessage MUST wait for an interrupted (input-required) state and answer with it', async () => {
      const { target } = await startScripted(transport)
      // The agent reports working, pauses, then asks: an early answer would still be working.
      const task = await sendTask(target, 'ask')
      expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED')
      expect(task.status.message.parts).toEqual([{ text: 'What is your name?' }])
    })

    it('SendMessage with returnImmediately MUST return at once with a working task', async () => {
      const script = await startScripted(transport)
      const reply = await within(
        call(script.target, 'SendMessage', sendParams('wait', { configuration: { returnImmediately: true } })),
        'the immediate answer',
        2000,
      )
      const task = reply.body.result.task
      expect(task.status.state).toBe('TASK_STATE_WORKING')
      expect(task.artifacts).toBeUndefined()
      expect(await within(script.started, 'the agent starting')).toBe(task.id)
      expect((await resultOf(script.target, 'GetTask', { id: task.id })).status.state).toBe('TASK_STATE_WORKING')
      script.release()
      await expect
        .poll(async () => (await resultOf(script.target, 'GetTask', { id: task.id })).status.state, { timeout: 5000 })
        .toBe('TASK_STATE_COMPLETED')
    })

    it('historyLength in the SendMessage configuration MUST limit the returned history', async () => {
      const { target } = await startScripted(transport)
      const first = await sendTask(target, 'ask', { configuration: { historyLength: 1 } })
      expect(first.history.map((m: any) => m.role)).toEqual(['ROLE_AGENT'])
      const lastTwo = await sendTask(target, 'Ada', {
        message: { taskId: first.id },
        configuration: { historyLength: 2 },
      })
      expect(lastTwo.history.map((m: any) => [m.role, m.parts[0].text])).toEqual([
        ['ROLE_AGENT', 'What is your name?'],
        ['ROLE_USER', 'Ada'],
      ])
      expect((await resultOf(target, 'GetTask', { id: first.id })).history).toHaveLength(3)
      const none = await sendTask(target, 'hello', { configuration: { historyLength: 0 } })
      expect(none.history ?? []).toEqual([])
    })

    it('A follow-up with message.taskId MUST resume the input-required task, and the agent MUST see its history', async () => {
      const { target } = await startScripted(transport)
      const asked = await sendTask(target, 'ask')
      const done = await sendTask(target, 'Ada', { message: { taskId: asked.id } })
      expect(done.id).toBe(asked.id)
      expect(done.contextId).toBe(asked.contextId)
      expect(done.status.state).toBe('TASK_STATE_COMPLETED')
      expect(done.artifacts.map((a: any) => a.parts)).toEqual([
        [{ data: { saw: ['user: ask', 'agent: What is your name?', 'user: Ada'] } }],
        [{ text: 'Hello, Ada' }],
      ])
      expect(done.history.map((m: any) => [m.role, m.parts[0].text, m.taskId, m.contextId])).toEqual([
        ['ROLE_USER', 'ask', asked.id, asked.contextId],
        ['ROLE_AGENT', 'What is your name?', asked.id, asked.contextId],
        ['ROLE_USER', 'Ada', asked.id, asked.contextId],
      ])
      expect(await totalTasks(target)).toBe(1)
    })

    it('A follow-up whose contextId does not match the task MUST answer -32602 and leave the task as it was', async () => {
      const script = await startScripted(transport)
      const asked = await sendTask(script.target, 'ask')
      const reply = await call(
        script.target,
        'SendMessage',
        sendParams('Ada', { message: { taskId: asked.id, contextId: 'some-other-context' } }),
        {
          id: 'ctx',
        },
      )
      expect(reply.body.id).toBe('ctx')
      expect(reply.body.error.code).toBe(-32602)
      expect(reply.body.result).toBeUndefined()
      expect(script.counts.runs).toBe(1)
      const task = await resultOf(script.target, 'GetTask', { id: asked.id })
      expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED')
      expect(task.history).toHaveLength(2)
    })
  })

  describe('SendStreamingMessage', () => {
    it('SendStreamingMessage MUST answer text/event-stream with every event framed as data: <json> and a blank line (each numbered by an id: line, for resumption)', async () => {
      const target = await transport.start(progressAgent)
      const response = await post(target, 'SendStreamingMessage', sendParams('frames'), { id: 'frames' })
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream\b/)
      const { raw, events, ids } = await within(readEvents(response, 'numbered'), 'the end of the stream')
      const frames = raw.split('\n\n')
      expect(frames.pop()).toBe('')
      for (const frame of frames) expect(frame).toMatch(/^id: \d+\ndata: \{.*\}$/)
      // The Task frame carries the number of the first event, which it already reflects; then 1, 2, 3…
      expect(ids).toEqual([1, ...ids.slice(1).map((_, i) => i + 1)])
      expect(events).toHaveLength(frames.length)
      expect(events.length).toBeGreaterThanOrEqual(4)
    })

    it.each([[42], ['stream-id-7']])(
      'Every stream event MUST be a JSON-RPC response carrying the request id exactly (id %j)',
      async (id) => {
        const target = await transport.start(progressAgent)
        const { events } = await within(
          readEvents(await post(target, 'SendStreamingMessage', sendParams('ids'), { id }), 'numbered'),
          'the end of the stream',
        )
        expect(events.length).toBeGreaterThanOrEqual(4)
        for (const event of events) {
          expect(Object.keys(event).sort()).toEqual(['id', 'jsonrpc', 'result'])
          expect(event.jsonrpc).toBe('2.0')
          expect(event.id).toStrictEqual(id)
        }
      },
    )

    it("The first stream result MUST be the Task, then statusUpdate/artifactUpdate in the agent's order, with no final field", async () => {
      const target = await transport.start(progressAgent)
      const results = await readStream(
        await post(target, 'SendStreamingMessage', sendParams('order'), { id: 'order' }),
        'order',
      )
      expect(results.map(summary)).toEqual([
        'task',
        'status:TASK_STATE_WORKING',
        'status:TASK_STATE_WORKING',
        'artifact:Answer: order',
        'status:TASK_STATE_COMPLETED',
      ])
      const task = results[0].task
      expect(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']).toContain(task.status.state)
      expect(task.history).toEqual([
        {
          messageId: expect.any(String),
          role: 'ROLE_USER',
          parts: [{ text: 'order' }],
          taskId: task.id,
          contextId: task.contextId,
        },
      ])
      for (const result of results.slice(1)) {
        const update = result.statusUpdate ?? result.artifactUpdate
        expect(update.taskId).toBe(task.id)
        expect(update.contextId).toBe(task.contextId)
        expect(update).not.toHaveProperty('final')
        expect(result).not.toHaveProperty('final')
      }
      expect(results[2].statusUpdate.status.message).toMatchObject({
        role: 'ROLE_AGENT',
        parts: [{ text: 'Looking it up…' }],
      })
      const stored = await resultOf(target, 'GetTask', { id: task.id })
      expect(stored.status.state).toBe('TASK_STATE_COMPLETED')
      expect(stored.artifacts[0].artifactId).toBe(results[3].artifactUpdate.artifact.artifactId)
    })

    it('artifactUpdate MUST carry append and lastChunk when an artifact is sent in chunks', async () => {
      const target = await transport.start(chunkedAgent)
      const results = await readStream(await post(target, 'SendStreamingMessage', sendParams('x'), { id: 1 }), 1)
      const updates = results.filter((r) => r.artifactUpdate).map((r) => r.artifactUpdate)
      expect(updates.map((u) => [u.artifact.parts, u.append ?? false, u.lastChunk ?? false])).toEqual([
        [[{ text: 'Hel' }], false, false],
        [[{ text: 'lo' }], true, false],
        [[{ text: '!' }], true, true],
      ])
      expect(new Set(updates.map((u) => u.artifact.artifactId)).size).toBe(1)
      const stored = await resultOf(target, 'GetTask', { id: updates[0].taskId })
      // The task keeps the chunks' text as the one text it is.
      expect(stored.artifacts).toEqual([{ artifactId: updates[0].artifact.artifactId, parts: [{ text: 'Hello!' }] }])
    })

    it.each([
      ['hello', 'TASK_STATE_COMPLETED'],
      ['fail', 'TASK_STATE_FAILED'],
    ])('The stream MUST close after a terminal state (%s → %s)', async (text, state) => {
      const { target } = await startScripted(transport)
      const results = await readStream(
        await post(target, 'SendStreamingMessage', sendParams(text), { id: 'end' }),
        'end',
      )
      expect(results.at(-1).statusUpdate.status.state).toBe(state)
      expect(results.filter((r) => r.statusUpdate?.status.state === state)).toHaveLength(1)
    })

    it('The stream MUST close after input-required', async () => {
      const { target } = await startScripted(transport)
      const results = await readStream(
        await post(target, 'SendStreamingMessage', sendParams('ask'), { id: 'ask' }),
        'ask',
      )
      expect(results.map(summary)).toEqual([
        'task',
        'status:TASK_STATE_WORKING',
        'status:TASK_STATE_WORKING',
        'status:TASK_STATE_INPUT_REQUIRED',
      ])
      expect(results.at(-1).statusUpdate.status.message).toMatchObject({
        role: 'ROLE_AGENT',
        parts: [{ text: 'What is your name?' }],
      })
      expect((await resultOf(target, 'GetTask', { id: results[0].task.id })).status.state).toBe(
        'TASK_STATE_INPUT_REQUIRED',
      )
    })

    it('With capabilities.streaming false, SendStreamingMessage and SubscribeToTask MUST answer a -32004 JSON error, not a stream', async () => {
      const noStreams = agent(
        (_ctx, task) => {
          task.artifact('x')
          task.complete()
        },
        { card: { capabilities: { streaming: false } } },
      )
      const target = await transport.start(noStreams)
      const reply = await call(target, 'SendStreamingMessage', sendParams('x'), { id: 'no-stream' })
      expect(reply.headers.get('content-type')).toMatch(/^application\/json\b/)
      expectError(reply, 'no-stream', -32004, 'UNSUPPORTED_OPERATION')
      expect(await totalTasks(target)).toBe(0)
      const task = await sendTask(target, 'x')
      const subscribed = await call(target, 'SubscribeToTask', { id: task.id }, { id: 'no-sub' })
      expect(subscribed.headers.get('content-type')).toMatch(/^application\/json\b/)
      expectError(subscribed, 'no-sub', -32004, 'UNSUPPORTED_OPERATION')
    })
  })

  describe('SubscribeToTask', () => {
    it('SubscribeToTask MUST send the Task (current state) first, then the live events until terminal', async () => {
      const script = await startScripted(transport)
      const task = await startGatedTask(script, 'steps')
      const sub = await subscribe(transport, script.target, task.id, 'sub-1')
      const first = streamResult(await within(sub.reader.next(), 'the first event'), 'sub-1')
      expect(first.task).toMatchObject({
        id: task.id,
        contextId: task.contextId,
        status: { state: 'TASK_STATE_WORKING', message: { role: 'ROLE_AGENT', parts: [{ text: 'started' }] } },
      })
      script.release()
      const rest = await drain(sub.reader, 'sub-1')
      expect(rest.map(summary)).toEqual([
        'status:TASK_STATE_WORKING',
        'artifact:a',
        'artifact:b',
        'status:TASK_STATE_COMPLETED',
      ])
      expect(rest[0].statusUpdate.status.message.parts).toEqual([{ text: 'step 2' }])
      for (const result of rest) expect((result.statusUpdate ?? result.artifactUpdate).taskId).toBe(task.id)
    })

    it.each([[9], ['sub-id']])('Every SubscribeToTask event MUST carry the request id exactly (id %j)', async (id) => {
      const script = await startScripted(transport)
      const task = await startGatedTask(script)
      const sub = await subscribe(transport, script.target, task.id, id)
      const first = await within(sub.reader.next(), 'the first event')
      expect(first.id).toStrictEqual(id)
      script.release()
      const rest = await drain(sub.reader, id)
      expect(rest.map(summary)).toEqual(['artifact:finished', 'status:TASK_STATE_COMPLETED'])
    })

    it('Two subscribers to one running task MUST both receive the same events in the same order', async () => {
      const script = await startScripted(transport)
      const task = await startGatedTask(script, 'steps')
      const one = await subscribe(transport, script.target, task.id, 'one')
      const two = await subscribe(transport, script.target, task.id, 'two')
      const firstOne = streamResult(await within(one.reader.next(), 'the first event'), 'one')
      const firstTwo = streamResult(await within(two.reader.next(), 'the first event'), 'two')
      expect(firstOne.task.id).toBe(task.id)
      expect(firstTwo).toEqual(firstOne)
      script.release()
      const [restOne, restTwo] = await Promise.all([drain(one.reader, 'one'), drain(two.reader, 'two')])
      expect(restOne.map(summary)).toEqual([
        'status:TASK_STATE_WORKING',
        'artifact:a',
        'artifact:b',
        'status:TASK_STATE_COMPLETED',
      ])
      expect(restTwo).toEqual(restOne)
    })

    it('A subscriber that disconnects MUST NOT affect the other subscriber or the task', async () => {
      const script = await startScripted(transport)
      const task = await startGatedTask(script, 'steps')
      const leaving = await subscribe(transport, script.target, task.id, 'leaving')
      const staying = await subscribe(transport, script.target, task.id, 'staying')
      await within(leaving.reader.next(), 'the first event')
      expect(streamResult(await within(staying.reader.next(), 'the first event'), 'staying').task.id).toBe(task.id)
      await leaving.leave()
      await sleep(50)
      script.release()
      const rest = await drain(staying.reader, 'staying')
      expect(rest.map(summary)).toEqual([
        'status:TASK_STATE_WORKING',
        'artifact:a',
        'artifact:b',
        'status:TASK_STATE_COMPLETED',
      ])
      const stored = await resultOf(script.target, 'GetTask', { id: task.id })
      expect(stored.status.state).toBe('TASK_STATE_COMPLETED')
      expect(stored.artifacts.map((a: any) => a.parts)).toEqual([[{ text: 'a' }], [{ text: 'b' }]])
      expect(script.target.logger.text('error')).toBe('')
    })

    it('SubscribeToTask on a TASK_STATE_INPUT_REQUIRED task MUST keep the stream open (heartbeats flow) and deliver the next turn, which a follow-up from another client starts, until the terminal state', async () => {
      const target = await transport.start(scriptedAgent().agent, { sseHeartbeatMs: 50 })
      const asked = await sendTask(target, 'ask')
      expect(asked.status.state).toBe('TASK_STATE_INPUT_REQUIRED')
      const sub = await subscribe(transport, target, asked.id, 'sub-turns')
      const first = streamResult(await within(sub.reader.next(), 'the first event'), 'sub-turns')
      expect(first.task).toMatchObject({ id: asked.id, status: { state: 'TASK_STATE_INPUT_REQUIRED' } })
      const next = sub.reader.next()
      await expect.poll(() => sub.reader.heartbeats).toBeGreaterThan(0)
      const answered = await sendTask(target, 'Ada', { message: { taskId: asked.id } })
      expect(answered.status.state).toBe('TASK_STATE_COMPLETED')
      const rest = [
        streamResult(await within(next, 'the first event of the next turn'), 'sub-turns'),
        ...(await drain(sub.reader, 'sub-turns')),
      ]
      expect(rest.map(summary)).toEqual([
        'status:TASK_STATE_WORKING',
        expect.stringMatching(/^artifact:/),
        'artifact:Hello, Ada',
        'status:TASK_STATE_COMPLETED',
      ])
      expect(rest[1].artifactUpdate.artifact.parts[0].data).toEqual({
        saw: ['user: ask', 'agent: What is your name?', 'user: Ada'],
      })
    })

    it('SubscribeToTask on a terminal task MUST answer -32004 UnsupportedOperation', async () => {
      const target = await transport.start(echoAgent)
      const task = await sendTask(target, 'done')
      const reply = await call(target, 'SubscribeToTask', { id: task.id }, { id: 'sub-done' })
      expect(reply.headers.get('content-type')).toMatch(/^application\/json\b/)
      expectError(reply, 'sub-done', -32004, 'UNSUPPORTED_OPERATION')
    })

    it('SubscribeToTask on an unknown task MUST answer -32001 TaskNotFound', async () => {
      const target = await transport.start(echoAgent)
      const reply = await call(target, 'SubscribeToTask', { id: 'no-such-task' }, { id: 'sub-missing' })
      expect(reply.headers.get('content-type')).toMatch(/^application\/json\b/)
      expectError(reply, 'sub-missing', -32001, 'TASK_NOT_FOUND')
    })
  })

  describe('ListTasks', () => {
    it('ListTasks MUST answer tasks, nextPageToken, pageSize and totalSize', async () => {
      const target = await transport.start(echoAgent)
      const a = await sendTask(target, 'a')
      const b = await sendTask(target, 'b')
      const reply = await call(target, 'ListTasks', {}, { id: 'list' })
      expect(reply.body.id).toBe('list')
      const page = reply.body.result
      expect(Object.keys(page).sort()).toEqual(['nextPageToken', 'pageSize', 'tasks', 'totalSize'])
      expect(page.nextPageToken).toBe('')
      expect(page.pageSize).toBe(50)
      expect(page.totalSize).toBe(2)
      expect(page.tasks.map((t: any) => t.id).sort()).toEqual([a.id, b.id].sort())
      const sized = await resultOf(target, 'ListTasks', { pageSize: 1 })
      expect(sized.pageSize).toBe(1)
      expect(sized.totalSize).toBe(2)
      expect(sized.tasks).toHaveLength(1)
      expect(typeof sized.nextPageToken).toBe('string')
      expect(sized.nextPageToken).not.toBe('')
    })

    it('ListTasks cursor pagination MUST visit every task exactly once, with an empty nextPageToken on the last page', async () => {
      const target = await transport.start(echoAgent)
      // Sent together, several tasks share a status timestamp: the cursor must still keep them apart.
      const created = await Promise.all(Array.from({ length: 7 }, (_, i) => sendTask(target, `task ${i}`)))
      const pages: any[] = []
      let pageToken = ''
      for (let i = 0; i < 5; i++) {
        const page = await resultOf(target, 'ListTasks', { pageSize: 3, ...(pageToken && { pageToken }) })
        pages.push(page)
        pageToken = page.nextPageToken
        if (pageToken === '') break
      }
      expect(pages.map((p) => p.tasks.length)).toEqual([3, 3, 1])
      expect(pages.map((p) => p.totalSize)).toEqual([7, 7, 7])
      expect(pages.map((p) => p.pageSize)).toEqual([3, 3, 3])
      expect(pages.map((p) => p.nextPageToken === '')).toEqual([false, false, true])
      const seen = pages.flatMap((p) => p.tasks.map((t: any) => t.id))
      expect(seen).toHaveLength(7)
      expect([...seen].sort()).toEqual(created.map((t) => t.id).sort())
      const stamps = pages.flatMap((p) => p.tasks.map((t: any) => Date.parse(t.status.timestamp)))
      for (let i = 1; i < stamps.length; i++) expect(stamps[i]).toBeLessThanOrEqual(stamps[i - 1])
    })

    it('ListTasks MUST sort by status timestamp, newest first', async () => {
      const { target } = await startScripted(transport)
      const a = await sendTask(target, 'ask')
      await sleep(5)
      const b = await sendTask(target, 'b')
      await sleep(5)
      const c = await sendTask(target, 'c')
      await sleep(5)
      // The oldest task changes last, so its status is the newest.
      await sendTask(target, 'Ada', { message: { taskId: a.id } })
      const page = await resultOf(target, 'ListTasks', {})
      expect(page.tasks.map((t: any) => t.id)).toEqual([a.id, c.id, b.id])
      const stamps = page.tasks.map((t: any) => Date.parse(t.status.timestamp))
      expect(stamps[0]).toBeGreaterThan(stamps[1])
      expect(stamps[1]).toBeGreaterThan(stamps[2])
    })

    it('ListTasks MUST filter by contextId', async () => {
      const target = await transport.start(echoAgent)
      const a1 = await sendTask(target, 'a1', { message: { contextId: 'ctx-a' } })
      const a2 = await sendTask(target, 'a2', { message: { contextId: 'ctx-a' } })
      const b1 = await sendTask(target, 'b1', { message: { contextId: 'ctx-b' } })
      await sendTask(target, 'none')
      const a = await resultOf(target, 'ListTasks', { contextId: 'ctx-a' })
      expect(a.tasks.map((t: any) => t.id).sort()).toEqual([a1.id, a2.id].sort())
      expect(a.totalSize).toBe(2)
      for (const task of a.tasks) expect(task.contextId).toBe('ctx-a')
      const b = await resultOf(target, 'ListTasks', { contextId: 'ctx-b' })
      expect(b.tasks.map((t: any) => t.id)).toEqual([b1.id])
      expect(b.totalSize).toBe(1)
      expect((await resultOf(target, 'ListTasks', { contextId: 'ctx-unknown' })).tasks).toEqual([])
    })

    it('ListTasks MUST filter by status (TASK_STATE_COMPLETED)', async () => {
      const { target } = await startScripted(transport)
      const done1 = await sendTask(target, 'one')
      const asked = await sendTask(target, 'ask')
      const done2 = await sendTask(target, 'two')
      const failed = await sendTask(target, 'fail')
      const completed = await resultOf(target, 'ListTasks', { status: 'TASK_STATE_COMPLETED' })
      expect(completed.tasks.map((t: any) => t.id).sort()).toEqual([done1.id, done2.id].sort())
      expect(completed.totalSize).toBe(2)
      for (const task of completed.tasks) expect(task.status.state).toBe('TASK_STATE_COMPLETED')
      expect(
        (await resultOf(target, 'ListTasks', { status: 'TASK_STATE_INPUT_REQUIRED' })).tasks.map((t: any) => t.id),
      ).toEqual([asked.id])
      expect(
        (await resultOf(target, 'ListTasks', { status: 'TASK_STATE_FAILED' })).tasks.map((t: any) => t.id),
      ).toEqual([failed.id])
    })

    it('ListTasks MUST leave artifacts out unless includeArtifacts is true', async () => {
      const target = await transport.start(echoAgent)
      const sent = await sendTask(target, 'with artifact')
      expect(sent.artifacts).toHaveLength(1)
      for (const params of [{}, { includeArtifacts: false }]) {
        const page = await resultOf(target, 'ListTasks', params)
        expect(page.tasks).toHaveLength(1)
        expect(page.tasks[0]).not.toHaveProperty('artifacts')
      }
      const withArtifacts = await resultOf(target, 'ListTasks', { includeArtifacts: true })
      expect(withArtifacts.tasks[0].artifacts).toEqual(sent.artifacts)
    })

    it.each([[0], [101], ['x']])('ListTasks MUST refuse pageSize %j with -32602', async (pageSize) => {
      const target = await transport.start(echoAgent)
      await sendTask(target, 'a')
      expectError(await call(target, 'ListTasks', { pageSize }, { id: 'size' }), 'size', -32602)
    })

    it.each([
      ['a plain word', 'garbage'],
      ['a dashed word', 'invalid-token'],
      ['characters outside base64url', '!!!'],
      ['base64url of "not-a-time|not-a-task"', Buffer.from('not-a-time|not-a-task').toString('base64url')],
    ])('ListTasks MUST refuse a garbage pageToken (%s) with -32602', async (_what, pageToken) => {
      const target = await transport.start(echoAgent)
      await sendTask(target, 'a')
      expectError(await call(target, 'ListTasks', { pageToken }, { id: 'token' }), 'token', -32602)
    })
  })

  describe('ProtoJSON field names', () => {
    /** A v1.0 user message written with the .proto field names. */
    const snakeMessage = (text: string, extra: Record<string, unknown> = {}) => ({
      message_id: `v1-snake-${++messageCount}-${Math.random().toString(36).slice(2)}`,
      role: 'ROLE_USER',
      parts: [{ text }],
      ...extra,
    })

    it('SendMessage MUST accept message_id, context_id, task_id, history_length, return_immediately and accepted_output_modes as their lowerCamelCase names', async () => {
      const script = await startScripted(transport)
      const { target } = script
      const asked = await resultOf(target, 'SendMessage', {
        message: snakeMessage('ask', { context_id: 'ctx-snake' }),
        configuration: { history_length: 1 },
      })
      expect(asked.task.contextId).toBe('ctx-snake')
      expect(asked.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED')
      expect(asked.task.history.map((m: any) => m.role)).toEqual(['ROLE_AGENT'])

      const resumed = await resultOf(target, 'SendMessage', {
        message: snakeMessage('Ada', { task_id: asked.task.id }),
        configuration: { history_length: 0 },
      })
      expect(resumed.task.id).toBe(asked.task.id)
      expect(resumed.task.status.state).toBe('TASK_STATE_COMPLETED')
      expect(resumed.task.history ?? []).toEqual([])
      const full = await resultOf(target, 'GetTask', { id: asked.task.id })
      expect(full.history.map((m: any) => [m.role, m.parts[0].text, m.contextId])).toEqual([
        ['ROLE_USER', 'ask', 'ctx-snake'],
        ['ROLE_AGENT', 'What is your name?', 'ctx-snake'],
        ['ROLE_USER', 'Ada', 'ctx-snake'],
      ])
      expect(full.history[0].messageId).toMatch(/^v1-snake-/)

      const immediate = await within(
        call(target, 'SendMessage', { message: snakeMessage('wait'), configuration: { return_immediately: true } }),
        'the immediate answer',
        2000,
      )
      expect(immediate.body.result.task.status.state).toBe('TASK_STATE_WORKING')
      expect(await within(script.started, 'the agent starting')).toBe(immediate.body.result.task.id)
      script.release()

      const refused = await call(
        target,
        'SendMessage',
        { message: snakeMessage('x'), configuration: { accepted_output_modes: ['image/png'] } },
        { id: 'modes' },
      )
      expectError(refused, 'modes', -32005, 'CONTENT_TYPE_NOT_SUPPORTED')
    })

    it('SendMessage MUST read media_type on file parts as mediaType', async () => {
      const mirror = agent(
        (ctx, task) => {
          task.artifact(ctx.parts)
          task.complete()
        },
        { card: { defaultInputModes: ['*/*'] } },
      )
      const target = await transport.start(mirror)
      const parts = [
        { url: 'https://files.example.com/report.pdf', media_type: 'application/pdf', filename: 'report.pdf' },
        { raw: 'aGVsbG8=', media_type: 'text/plain' },
      ]
      const task = (await resultOf(target, 'SendMessage', { message: snakeMessage('x', { parts }) })).task
      expect(task.history[0].parts).toEqual([
        { url: 'https://files.example.com/report.pdf', mediaType: 'application/pdf', filename: 'report.pdf' },
        { raw: 'aGVsbG8=', mediaType: 'text/plain' },
      ])
    })

    it('GetTask MUST accept history_length as historyLength', async () => {
      const { target } = await startScripted(transport)
      const asked = await sendTask(target, 'ask')
      expect(
        (await resultOf(target, 'GetTask', { id: asked.id, history_length: 1 })).history.map((m: any) => m.role),
      ).toEqual(['ROLE_AGENT'])
      expect((await resultOf(target, 'GetTask', { id: asked.id, history_length: 0 })).history ?? []).toEqual([])
    })

    it('ListTasks MUST accept page_size, page_token, context_id, status_timestamp_after, include_artifacts and history_length', async () => {
      const target = await transport.start(echoAgent)
      const before = new Date(Date.now() - 1000).toISOString()
      const created = [
        await sendTask(target, 'a1', { message: { contextId: 'ctx-list' } }),
        await sendTask(target, 'a2', { message: { contextId: 'ctx-list' } }),
        await sendTask(target, 'a3', { message: { contextId: 'ctx-list' } }),
      ]
      await sendTask(target, 'elsewhere', { message: { contextId: 'ctx-other' } })
      const first = await resultOf(target, 'ListTasks', {
        context_id: 'ctx-list',
        page_size: 2,
        include_artifacts: true,
        history_length: 0,
        status_timestamp_after: before,
      })
      expect(first.pageSize).toBe(2)
      expect(first.totalSize).toBe(3)
      expect(first.tasks).toHaveLength(2)
      for (const task of first.tasks) {
        expect(task.contextId).toBe('ctx-list')
        expect(task.artifacts).toHaveLength(1)
        expect(task.history ?? []).toEqual([])
      }
      const second = await resultOf(target, 'ListTasks', {
        context_id: 'ctx-list',
        page_size: 2,
        page_token: first.nextPageToken,
      })
      expect(second.tasks).toHaveLength(1)
      expect(second.nextPageToken).toBe('')
      expect([...first.tasks, ...second.tasks].map((t: any) => t.id).sort()).toEqual(created.map((t) => t.id).sort())
      const later = await resultOf(target, 'ListTasks', {
        status_timestamp_after: new Date(Date.now() + 60_000).toISOString(),
      })
      expect(later.tasks).toEqual([])
    })

    it('The push config methods MUST accept task_id, and SendMessage task_push_notification_config', async () => {
      const receiver = await startReceiver()
      const pushing = agent(
        (ctx, task) => {
          task.artifact(`Echo: ${ctx.text}`)
          task.complete()
        },
        { card: { capabilities: { pushNotifications: true } } },
      )
      const target = await transport.start(pushing, { push: { allow: ['127.0.0.1'], allowHttp: true } })
      const sent = await resultOf(target, 'SendMessage', {
        message: snakeMessage('hooked'),
        configuration: { task_push_notification_config: { url: receiver.url, token: 'snake-token' } },
      })
      const taskId = sent.task.id
      await expect
        .poll(() => receiver.delivered.some((d) => d.body.statusUpdate?.status.state === 'TASK_STATE_COMPLETED'))
        .toBe(true)
      expect(receiver.delivered[0]!.headers['x-a2a-notification-token']).toBe('snake-token')

      const created = await resultOf(target, 'CreateTaskPushNotificationConfig', {
        task_id: taskId,
        id: 'snake-config',
        url: receiver.url,
      })
      expect(created).toMatchObject({ id: 'snake-config', taskId, url: receiver.url })
      const nested = await resultOf(target, 'CreateTaskPushNotificationConfig', {
        task_id: taskId,
        push_notification_config: { id: 'nested-config', url: receiver.url },
      })
      expect(nested).toMatchObject({ id: 'nested-config', taskId })
      expect(
        await resultOf(target, 'GetTaskPushNotificationConfig', { task_id: taskId, id: 'snake-config' }),
      ).toMatchObject({ id: 'snake-config', taskId })
      const listed = await resultOf(target, 'ListTaskPushNotificationConfigs', { task_id: taskId })
      expect(listed.configs.map((c: any) => c.id)).toEqual(expect.arrayContaining(['snake-config', 'nested-config']))
      const missing = await call(target, 'GetTaskPushNotificationConfig', { id: 'snake-config' }, { id: 'no-task' })
      expectError(missing, 'no-task', -32602)
      expect(missing.body.error.message).toContain('`params.taskId`')
      const wrong = await call(
        target,
        'GetTaskPushNotificationConfig',
        { task_id: 7, id: 'snake-config' },
        { id: 'bad-task' },
      )
      expect(wrong.body.error.message).toContain('`params.task_id`')
      await resultOf(target, 'DeleteTaskPushNotificationConfig', { task_id: taskId, id: 'snake-config' })
      expect(
        (await resultOf(target, 'ListTaskPushNotificationConfigs', { taskId })).configs.map((c: any) => c.id),
      ).not.toContain('snake-config')
    })

    it('A field given under both names with the same value MUST be accepted', async () => {
      const target = await transport.start(echoAgent)
      const message = snakeMessage('twice')
      const task = (
        await resultOf(target, 'SendMessage', {
          message: { ...message, messageId: message.message_id, contextId: 'ctx-2', context_id: 'ctx-2' },
          configuration: {
            historyLength: 1,
            history_length: 1,
            acceptedOutputModes: ['text/plain'],
            accepted_output_modes: ['text/plain'],
          },
        })
      ).task
      expect(task.contextId).toBe('ctx-2')
      expect(task.history).toHaveLength(1)
      expect(task.history[0].messageId).toBe(message.message_id)
    })

    it.each([
      [
        'message.messageId',
        (m: any) => ({ message: { ...m, messageId: 'one', message_id: 'two' } }),
        'params.message.messageId',
        'params.message.message_id',
      ],
      [
        'message.contextId',
        (m: any) => ({ message: { ...m, contextId: 'one', context_id: 'two' } }),
        'params.message.contextId',
        'params.message.context_id',
      ],
      [
        'configuration.historyLength',
        (m: any) => ({ message: m, configuration: { historyLength: 1, history_length: 2 } }),
        'params.configuration.historyLength',
        'params.configuration.history_length',
      ],
      [
        'configuration.acceptedOutputModes',
        (m: any) => ({
          message: m,
          configuration: { acceptedOutputModes: ['text/plain'], accepted_output_modes: ['text/plain', 'text/html'] },
        }),
        'params.configuration.acceptedOutputModes',
        'params.configuration.accepted_output_modes',
      ],
    ])(
      'SendMessage giving %s under both names with different values MUST answer -32602 naming both, and start no task',
      async (_field, params, camel, snake) => {
        const script = await startScripted(transport)
        const reply = await call(script.target, 'SendMessage', params(userMessage('twice')), { id: 'both' })
        expectError(reply, 'both', -32602)
        expect(reply.body.error.message).toContain(`\`${camel}\``)
        expect(reply.body.error.message).toContain(`\`${snake}\``)
        expect(script.counts.runs).toBe(0)
        expect(await totalTasks(script.target)).toBe(0)
      },
    )

    it('GetTask and ListTasks giving a field under both names with different values MUST answer -32602 naming both', async () => {
      const target = await transport.start(echoAgent)
      const task = await sendTask(target, 'x')
      const get = await call(
        target,
        'GetTask',
        { id: task.id, historyLength: 0, history_length: 1 },
        { id: 'get-both' },
      )
      expectError(get, 'get-both', -32602)
      expect(get.body.error.message).toContain('`params.history_length`')
      const list = await call(target, 'ListTasks', { pageSize: 1, page_size: 2 }, { id: 'list-both' })
      expectError(list, 'list-both', -32602)
      expect(list.body.error.message).toContain('`params.pageSize`')
      expect(list.body.error.message).toContain('`params.page_size`')
    })

    it('A wrong value under a .proto name MUST be refused with -32602 naming the field as the client wrote it', async () => {
      const target = await transport.start(echoAgent)
      const history = await call(
        target,
        'SendMessage',
        { message: userMessage('x'), configuration: { history_length: -1 } },
        { id: 'bad-history' },
      )
      expectError(history, 'bad-history', -32602)
      expect(history.body.error.message).toContain('`params.configuration.history_length`')
      const context = await call(
        target,
        'SendMessage',
        { message: { ...userMessage('x'), context_id: 7 } },
        { id: 'bad-context' },
      )
      expectError(context, 'bad-context', -32602)
      expect(context.body.error.message).toContain('`params.message.context_id`')
      const size = await call(target, 'ListTasks', { page_size: 0 }, { id: 'bad-size' })
      expectError(size, 'bad-size', -32602)
      expect(size.body.error.message).toContain('`params.page_size`')
      expect(await totalTasks(target)).toBe(0)
    })
  })

  describe('errors', () => {
    it.each([
      ['GetTask', { id: 'no-such-task' }],
      ['CancelTask', { id: 'no-such-task' }],
      ['SendMessage', sendParams('follow-up', { message: { taskId: 'no-such-task' } })],
    ])('%s on an unknown task MUST answer -32001 with ErrorInfo TASK_NOT_FOUND', async (method, params) => {
      const target = await transport.start(echoAgent)
      const reply = await call(target, method, params, { id: 'missing' })
      expect(reply.body).toEqual({
        jsonrpc: '2.0',
        id: 'missing',
        error: {
          code: -32001,
          message: expect.any(String),
          data: [
            {
              '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
              reason: 'TASK_NOT_FOUND',
              domain: 'a2a-protocol.org',
            },
          ],
        },
      })
    })

    it('CancelTask of a completed task MUST answer -32002 with ErrorInfo TASK_NOT_CANCELABLE', async () => {
      const { target } = await startScripted(transport)
      const task = await sendTask(target, 'done')
      expectError(
        await call(target, 'CancelTask', { id: task.id }, { id: 'late' }),
        'late',
        -32002,
        'TASK_NOT_CANCELABLE',
      )
      expect((await resultOf(target, 'GetTask', { id: task.id })).status.state).toBe('TASK_STATE_COMPLETED')
    })
  })

  describe('versioning (A2A-Version)', () => {
    it('A2A-Version 2.0 MUST answer -32009 VERSION_NOT_SUPPORTED with the request id', async () => {
      const script = await startScripted(transport)
      const reply = await call(script.target, 'SendMessage', sendParams('hi'), {
        id: 'v2',
        headers: { 'A2A-Version': '2.0' },
      })
      expectError(reply, 'v2', -32009, 'VERSION_NOT_SUPPORTED')
      expect(script.counts.runs).toBe(0)
      const numeric = await call(script.target, 'GetTask', { id: 'x' }, { id: 99, headers: { 'A2A-Version': '2.0' } })
      expectError(numeric, 99, -32009, 'VERSION_NOT_SUPPORTED')
    })

    it('A2A-Version 1.0.3 MUST be served as 1.0 (the patch is ignored)', async () => {
      const target = await transport.start(echoAgent)
      const reply = await call(target, 'SendMessage', sendParams('patch'), {
        id: 'patch',
        headers: { 'A2A-Version': '1.0.3' },
      })
      expect(reply.body.id).toBe('patch')
      expect(Object.keys(reply.body.result)).toEqual(['task'])
      expect(reply.body.result.task.status.state).toBe('TASK_STATE_COMPLETED')
      expect(reply.body.result.task.artifacts[0].parts).toEqual([{ text: 'Echo: patch' }])
      expect(kindPaths(reply.body.result)).toEqual([])
    })

    it('A2A-Version 0.3 with message/send MUST answer in the v0.3 (platform) shape', async () => {
      const target = await transport.start(echoAgent)
      const params = {
        message: { kind: 'message', role: 'user', messageId: 'm-03', parts: [{ kind: 'text', text: 'old' }] },
      }
      const reply = await call(target, 'message/send', params, { id: 'v03', headers: { 'A2A-Version': '0.3' } })
      expect(reply.body.id).toBe('v03')
      const task = reply.body.result
      expect(task.kind).toBe('task')
      expect(task.status.state).toBe('completed')
      expect(task.artifacts[0].parts).toEqual([{ kind: 'text', text: 'Echo: old' }])
      expect(task.history[0]).toMatchObject({ kind: 'message', role: 'user', parts: [{ kind: 'text', text: 'old' }] })
    })

    it('A2A-Version 1.0 with a slash method (message/send) MUST answer -32601', async () => {
      const target = await transport.start(echoAgent)
      const params = {
        message: { kind: 'message', role: 'user', messageId: 'm-slash', parts: [{ kind: 'text', text: 'x' }] },
      }
      expectError(await call(target, 'message/send', params, { id: 'slash' }), 'slash', -32601)
      expect(await totalTasks(target)).toBe(0)
    })

    it('Without A2A-Version a PascalCase method MUST still be served as v1.0', async () => {
      const target = await transport.start(echoAgent)
      const reply = await target.rpc('SendMessage', sendParams('lenient'), { id: 'no-header' })
      expect(reply.body.id).toBe('no-header')
      expect(Object.keys(reply.body.result)).toEqual(['task'])
      expect(reply.body.result.task.status.state).toBe('TASK_STATE_COMPLETED')
      expect(reply.body.result.task.artifacts[0].parts).toEqual([{ text: 'Echo: lenient' }])
    })

    it('Without A2A-Version a slash method MUST keep the platform shape', async () => {
      const target = await transport.start(echoAgent)
      const params = {
        message: { kind: 'message', role: 'user', messageId: 'm-plat', parts: [{ kind: 'text', text: 'platform' }] },
      }
      const reply = await target.rpc('message/send', params, { id: 'plat' })
      expect(reply.body.id).toBe('plat')
      const task = reply.body.result
      expect(task).not.toHaveProperty('task')
      expect(task.kind).toBe('task')
      expect(task.status.state).toBe('completed')
      expect(task.artifacts[0].parts).toEqual([{ kind: 'text', text: 'Echo: platform' }])
    })
  })

  describe('agent cards', () => {
    it('The v1.0 card (A2A-Version: 1.0) MUST carry the required fields and supportedInterfaces[0] = the real address, JSONRPC, 1.0', async () => {
      const target = await transport.start(echoAgent)
      const response = await target.fetch('/.well-known/agent-card.json', { headers: V1 })
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toMatch(/^application\/json\b/)
      const card = await response.json()
      expect(card).toMatchObject(TEST_CARD_FIELDS)
      expect(card.capabilities.pushNotifications ?? false).toBe(false)
      for (const skill of card.skills) expect(Array.isArray(skill.tags)).toBe(true)
      expect(card.supportedInterfaces[0]).toEqual({
        url: target.url,
        protocolBinding: 'JSONRPC',
        protocolVersion: '1.0',
      })
      // v1.0 names its protocol version per interface; a top-level protocolVersion is the v0.3 card's.
      expect(card).not.toHaveProperty('protocolVersion')
      expect(kindPaths(card)).toEqual([])
    })

    it('The card without A2A-Version MUST keep the v0.3 shape: protocolVersion 0.3.0, url, preferredTransport JSONRPC', async () => {
      const target = await transport.start(echoAgent)
      const response = await target.fetch('/.well-known/agent-card.json')
      expect(response.status).toBe(200)
      const card = await response.json()
      // POST / speaks the platform dialect to slash-named methods: v0.3 clients are sent to POST /v0.3, where the
      // whole v0.3 dialect (streams included) is served.
      const v03 = `${target.url}v0.3`
      expect(card).toMatchObject({
        protocolVersion: '0.3.0',
        url: v03,
        preferredTransport: 'JSONRPC',
        additionalInterfaces: [{ url: v03, transport: 'JSONRPC' }],
        ...TEST_CARD_FIELDS,
      })
      expect(card.supportedInterfaces).toContainEqual({ url: v03, protocolBinding: 'JSONRPC', protocolVersion: '0.3' })
      expect(card.supportedInterfaces[0]).toEqual({
        url: target.url,
        protocolBinding: 'JSONRPC',
        protocolVersion: '1.0',
      })
    })

    it('answers HEAD on both card paths as GET without the body (RFC 9110 §9.3.2): its status and ETag', async () => {
      const target = await transport.start(echoAgent)
      for (const [path, headers] of [
        ['/.well-known/agent.json', {}],
        ['/.well-known/agent-card.json', {}],
        ['/.well-known/agent-card.json', V1],
      ] as const) {
        const get = await target.fetch(path, { headers })
        await get.arrayBuffer()
        const head = await target.fetch(path, { method: 'HEAD', headers })
        expect(head.status).toBe(200)
        expect(head.headers.get('etag')).toBe(get.headers.get('etag'))
        expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'))
        expect(await head.text()).toBe('')
      }
    })

    it.each([
      ['v1.0', V1],
      ['v0.3', {}],
    ])(
      'The %s agent-card.json MUST carry Cache-Control with max-age, an ETag and Vary: A2A-Version',
      async (_name, headers) => {
        const target = await transport.start(echoAgent)
        const response = await target.fetch('/.well-known/agent-card.json', { headers })
        expect(response.status).toBe(200)
        expect(response.headers.get('cache-control')).toMatch(/(^|[,\s])max-age=[1-9]\d*\b/)
        expect(response.headers.get('etag')).toMatch(/^(W\/)?"[^"]+"$/)
        const vary = (response.headers.get('vary') ?? '').split(',').map((token) => token.trim().toLowerCase())
        expect(vary).toContain('a2a-version')
        // §8.6.1 MAY: Last-Modified, an HTTP date no later than now.
        const modified = Date.parse(response.headers.get('last-modified') ?? '')
        expect(modified).toBeLessThanOrEqual(Date.now())
        expect(response.headers.get('last-modified')).toMatch(
          /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/,
        )
        await response.text()
      },
    )

    it('The two agent-card.json shapes MUST have different ETags, and If-None-Match with the current ETag MUST answer 304 without a body', async () => {
      const target = await transport.start(echoAgent)
      const v1 = await target.fetch('/.well-known/agent-card.json', { headers: V1 })
      const v03 = await target.fetch('/.well-known/agent-card.json')
      const v1Tag = v1.headers.get('etag')!
      const v03Tag = v03.headers.get('etag')!
      await Promise.all([v1.text(), v03.text()])
      expect(v1Tag).toBeTruthy()
      expect(v03Tag).toBeTruthy()
      expect(v1Tag).not.toBe(v03Tag)

      const v1Again = await target.fetch('/.well-known/agent-card.json', { headers: { ...V1, 'If-None-Match': v1Tag } })
      expect(v1Again.status).toBe(304)
      expect(await v1Again.text()).toBe('')
      const v03Again = await target.fetch('/.well-known/agent-card.json', { headers: { 'If-None-Match': v03Tag } })
      expect(v03Again.status).toBe(304)
      expect(await v03Again.text()).toBe('')

      // The other shape's tag does not match: the client gets the card it asked for.
      const crossed = await target.fetch('/.well-known/agent-card.json', {
        headers: { ...V1, 'If-None-Match': v03Tag },
      })
      expect(crossed.status).toBe(200)
      expect((await crossed.json()).supportedInterfaces[0].protocolVersion).toBe('1.0')
    })

    it('The platform card at /.well-known/agent.json MUST keep its shape and carry Cache-Control and an ETag', async () => {
      const target = await transport.start(echoAgent)
      const response = await target.fetch('/.well-known/agent.json')
      expect(response.status).toBe(200)
      expect(response.headers.get('cache-control')).toMatch(/(^|[,\s])max-age=[1-9]\d*\b/)
      const etag = response.headers.get('etag')
      expect(etag).toMatch(/^(W\/)?"[^"]+"$/)
      const card = await response.json()
      expect(card).toMatchObject({
        name: 'Test Agent',
        url: target.url,
        version: '1.2.3',
        capabilities: { streaming: true, pushNotifications: false },
      })
      expect(card.supportedInterfaces).toEqual([{ url: target.url, protocolBinding: 'JSONRPC', transport: 'JSONRPC' }])
      expect(card).not.toHaveProperty('protocolVersion')
      // A2A-Version does not change the platform card.
      const withHeader = await target.fetch('/.well-known/agent.json', { headers: V1 })
      expect(await withHeader.json()).toEqual(card)
      const again = await target.fetch('/.well-known/agent.json', { headers: { 'If-None-Match': etag! } })
      expect(again.status).toBe(304)
      expect(await again.text()).toBe('')
    })
  })

  describe('authentication', () => {
    const bearerAgent = agent(
      (ctx, task) => {
        task.artifact(`Echo: ${ctx.text}`)
        task.complete()
      },
      { card: { authentication: { schemes: ['bearer'] as AuthScheme[] } } },
    )
    const startBearer = () => transport.start(bearerAgent, { auth: { bearerTokens: ['t'] } })

    it('A bearer-protected agent MUST declare securitySchemes and securityRequirements on the v1.0 card', async () => {
      const target = await startBearer()
      const response = await target.fetch('/.well-known/agent-card.json', { headers: V1 })
      expect(response.status).toBe(200)
      const card = await response.json()
      expect(card.securitySchemes).toEqual({ bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } })
      expect(card.securitySchemes.bearer.httpAuthSecurityScheme.scheme).toBe('Bearer')
      expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }])
    })

    it('A bearer-protected agent MUST declare securitySchemes and security on the v0.3 card', async () => {
      const target = await startBearer()
      const card = await (await target.fetch('/.well-known/agent-card.json')).json()
      expect(card.securitySchemes).toEqual({ bearer: { type: 'http', scheme: 'bearer' } })
      expect(card.security).toEqual([{ bearer: [] }])
    })

    it('v1.0 requests without the bearer token MUST get HTTP 401; with it they are served', async () => {
      const target = await startBearer()
      const denied = await call(target, 'SendMessage', sendParams('hi'), { id: 'auth' })
      expect(denied.status).toBe(401)
      expect(denied.body.error).toBeDefined()
      expect(denied.body.result).toBeUndefined()
      const deniedStream = await post(target, 'SendStreamingMessage', sendParams('hi'), { id: 'auth-s' })
      expect(deniedStream.status).toBe(401)
      await deniedStream.text()
      const wrong = await call(target, 'GetTask', { id: 'x' }, { headers: { Authorization: 'Bearer wrong' } })
      expect(wrong.status).toBe(401)

      const allowed = await call(target, 'SendMessage', sendParams('hi'), {
        id: 'auth',
        headers: { Authorization: 'Bearer t' },
      })
      expect(allowed.status).toBe(200)
      expect(allowed.body.result.task.status.state).toBe('TASK_STATE_COMPLETED')
      const list = await call(target, 'ListTasks', {}, { headers: { Authorization: 'Bearer t' } })
      expect(list.body.result.totalSize).toBe(1)
    })
  })
})
