import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { createA2AApp, createMemoryStore } from 'a2a-runtime'
import { describe, expect, it } from 'vitest'
import { otelTelemetry } from '../../runtime/src/entries/telemetry.ts'
import { rpc } from '../_rpc.ts'
import { agent, deferred } from './_agents.ts'
import { captureLogger } from './_logger.ts'
import { userMessage, userMessageV1 } from './_messages.ts'
import { eventReader, readEvents } from './_sse.ts'
import { callerSpan, recordedSpans, served } from './_telemetry.ts'

// The A2A semantic conventions' SERVER span for every operation of every JSON-RPC dialect and of HTTP+JSON, over
// real HTTP, read back from an in-memory exporter: its name and attributes, its parent (the caller's traceparent),
// the agent's own spans under it, the task's events on it, links between a task's turns, and what it never holds.

const spans = recordedSpans()

const CARD = { name: 'Traced Agent', description: 'Answers under a trace', version: '2.1.0' }

/** Spans of its own under the operation's (the global tracer, as a framework would), by what the user says. */
function tracedAgent(gate = deferred()) {
  const tracer = () => trace.getTracer('the-agent')
  return agent(
    async (ctx, task) => {
      await tracer().startActiveSpan('agent.execute', async (span) => {
        try {
          if (ctx.text === 'ask') return task.inputRequired('Which colour?')
          if (ctx.text === 'slow') {
            task.working('on it')
            await gate.promise
            tracer().startSpan('agent.late').end()
          }
          if (ctx.text === 'baggage') {
            const entry = propagation.getBaggage(context.active())?.getEntry('tenant-of-caller')
            return task.complete(`baggage: ${entry?.value}`)
          }
          task.artifact(`Echo: ${ctx.text}`)
          task.complete()
        } finally {
          span.end()
        }
      })
    },
    { card: CARD, cancel: () => {} },
  )
}

const serve = (options: { captureContent?: boolean } = {}) =>
  served(tracedAgent(), { telemetry: otelTelemetry(options) })

const post = (url: string, method: string, params: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })

/** The span is the caller's child: in its trace, with its span as parent. */
function expectChildOf(span: ReadableSpan, caller: { traceId: string; spanId: string }) {
  expect(span.spanContext().traceId).toBe(caller.traceId)
  expect(span.parentSpanContext?.spanId).toBe(caller.spanId)
  expect(span.parentSpanContext?.isRemote).toBe(true)
}

const agentAttributes = {
  'gen_ai.agent.name': CARD.name,
  'gen_ai.agent.description': CARD.description,
  'gen_ai.agent.version': CARD.version,
}

/**
 * The SERVER span of the SendMessage of `messageId` that completed `task`, the caller's child, with the attributes of
 * the message, the task and the agent, and the protocol version where the binding says one.
 */
async function expectCompletedSend(
  task: { id: string; contextId: string },
  messageId: string,
  caller: { traceId: string; spanId: string },
  version: { 'a2a.protocol.version'?: string },
) {
  const send = await spans.one('SendMessage', { 'a2a.task.id': task.id })
  expect(send.kind).toBe(SpanKind.SERVER)
  expectChildOf(send, caller)
  expect(send.attributes).toEqual({
    'a2a.method.name': 'SendMessage',
    'a2a.message.id': messageId,
    'a2a.task.id': task.id,
    'a2a.task.state': 'TASK_STATE_COMPLETED',
    'gen_ai.conversation.id': task.contextId,
    ...agentAttributes,
    ...version,
  })
  return send
}

describe('a SERVER span per A2A operation, named after its A2A v1.0 method', () => {
  // Each JSON-RPC dialect: where it is served, its method names and message shape, what it says as its version.
  const dialects = [
    {
      name: 'the platform dialect (POST /)',
      path: '',
      headers: {},
      methods: { send: 'message/send', get: 'tasks/get', cancel: 'tasks/cancel' },
      message: userMessage,
      taskOf: (result: any) => result,
      version: undefined,
    },
    {
      name: 'A2A v0.3 (POST /v0.3)',
      path: 'v0.3',
      headers: {},
      methods: { send: 'message/send', get: 'tasks/get', cancel: 'tasks/cancel' },
      message: userMessage,
      taskOf: (result: any) => result,
      version: '0.3',
    },
    {
      name: 'A2A v1.0 JSON-RPC',
      path: '',
      headers: { 'a2a-version': '1.0' },
      methods: { send: 'SendMessage', get: 'GetTask', cancel: 'CancelTask' },
      message: userMessageV1,
      taskOf: (result: any) => result.task,
      version: '1.0',
    },
  ] as const

  for (const dialect of dialects) {
    it(`${dialect.name}: SendMessage, GetTask and CancelTask, each in the caller's trace`, async () => {
      const server = await serve()
      const url = `${server.url}${dialect.path}`
      const version = dialect.version ? { 'a2a.protocol.version': dialect.version } : {}

      const caller = callerSpan()
      const sent = dialect.message('hello')
      const answer = await rpc(url, dialect.methods.send, sent, {
        headers: { ...dialect.headers, traceparent: caller.traceparent },
      })
      const task = dialect.taskOf(answer.body.result)
      const send = await expectCompletedSend(task, sent.message.messageId, caller, version)
      expect(send.status.code).toBe(SpanStatusCode.UNSET)

      const getCaller = callerSpan()
      await rpc(
        url,
        dialect.methods.get,
        { id: task.id },
        { headers: { ...dialect.headers, traceparent: getCaller.traceparent } },
      )
      const get = await spans.one('GetTask', { 'a2a.task.id': task.id })
      expectChildOf(get, getCaller)
      expect(get.kind).toBe(SpanKind.SERVER)
      expect(get.attributes).toMatchObject({
        'a2a.method.name': 'GetTask',
        'a2a.task.state': 'TASK_STATE_COMPLETED',
        'gen_ai.conversation.id': task.contextId,
        ...agentAttributes,
        ...version,
      })

      // A task waiting for input is canceled: the cancel's span hears the state change.
      const asked = dialect.taskOf(
        (await rpc(url, dialect.methods.send, dialect.message('ask'), { headers: dialect.headers })).body.result,
      )
      await rpc(url, dialect.methods.cancel, { id: asked.id }, { headers: dialect.headers })
      const cancel = await spans.one('CancelTask', { 'a2a.task.id': asked.id })
      expect(cancel.attributes['a2a.task.state']).toBe('TASK_STATE_CANCELED')
      expect(cancel.events.map((event) => [event.name, event.attributes?.['a2a.task.state']])).toEqual([
        ['a2a.task.status_update', 'TASK_STATE_CANCELED'],
      ])
    })

    it(`${dialect.name}: SendStreamingMessage and SubscribeToTask end when their stream closes`, async () => {
      const gate = deferred()
      const server = await served(tracedAgent(gate), { telemetry: otelTelemetry() })
      const url = `${server.url}${dialect.path}`
      const stream = dialect.methods.send === 'SendMessage' ? 'SendStreamingMessage' : 'message/stream'
      const subscribe = dialect.methods.send === 'SendMessage' ? 'SubscribeToTask' : 'tasks/resubscribe'
      const caller = callerSpan()
      const streaming = await post(url, stream, dialect.message('slow'), {
        ...dialect.headers,
        traceparent: caller.traceparent,
      })
      const events = eventReader(streaming)
      const first = await events.next()
      const taskId: string = first.result?.task?.id ?? first.result?.id ?? first.params?.taskId
      const following = await post(url, subscribe, { id: taskId }, dialect.headers)
      const subscribed = eventReader(following)
      await subscribed.next()
      // Both streams are open: neither span has ended.
      expect(spans.named('SendStreamingMessage')).toEqual([])
      expect(spans.named('SubscribeToTask')).toEqual([])
      gate.resolve()
      while ((await events.next()) !== undefined);
      while ((await subscribed.next()) !== undefined);

      const sent = await spans.one('SendStreamingMessage', { 'a2a.task.id': taskId })
      expect(sent.kind).toBe(SpanKind.SERVER)
      expectChildOf(sent, caller)
      expect(sent.attributes).toMatchObject({
        'a2a.method.name': 'SendStreamingMessage',
        'a2a.task.state': 'TASK_STATE_COMPLETED',
        ...agentAttributes,
      })
      expect(sent.events.map((event) => event.name)).toEqual([
        'a2a.task.status_update',
        'a2a.task.status_update',
        'a2a.task.artifact_update',
        'a2a.task.status_update',
      ])
      expect(sent.events.map((event) => event.attributes?.['a2a.task.state'])).toEqual([
        'TASK_STATE_WORKING',
        'TASK_STATE_WORKING',
        undefined,
        'TASK_STATE_COMPLETED',
      ])
      const followed = await spans.one('SubscribeToTask', { 'a2a.task.id': taskId })
      expect(followed.attributes['a2a.task.state']).toBe('TASK_STATE_COMPLETED')
      // The agent's work after the first event still nests under the span of the stream that started it.
      const late = await spans.one('agent.late')
      const execute = await spans.one('agent.execute')
      expect(execute.parentSpanContext?.spanId).toBe(sent.spanContext().spanId)
      expect(late.parentSpanContext?.spanId).toBe(execute.spanContext().spanId)
      expect(late.spanContext().traceId).toBe(caller.traceId)
    })
  }

  it('every slash-named method is named by its A2A v1.0 method, its task read from its params', async () => {
    const server = await serve()
    const names = {
      'message/send': 'SendMessage',
      'message/stream': 'SendStreamingMessage',
      'tasks/get': 'GetTask',
      'tasks/cancel': 'CancelTask',
      'tasks/resubscribe': 'SubscribeToTask',
      'tasks/pushNotificationConfig/set': 'CreateTaskPushNotificationConfig',
      'tasks/pushNotificationConfig/get': 'GetTaskPushNotificationConfig',
      'tasks/pushNotificationConfig/list': 'ListTaskPushNotificationConfigs',
      'tasks/pushNotificationConfig/delete': 'DeleteTaskPushNotificationConfig',
      'agent/getAuthenticatedExtendedCard': 'GetExtendedAgentCard',
    }
    const taskId = 'task-named-in-params'
    for (const method of Object.keys(names)) {
      const params = method.startsWith('message/')
        ? userMessage('hello', { taskId })
        : method === 'tasks/pushNotificationConfig/set'
          ? { taskId, pushNotificationConfig: { url: 'https://example.com/hook' } }
          : { id: taskId }
      await (await post(`${server.url}v0.3`, method, params)).text()
    }
    await expect.poll(() => spans.all().length).toBe(Object.keys(names).length)
    expect(spans.all().map((span) => [span.name, span.attributes['a2a.method.name']])).toEqual(
      Object.values(names).map((name) => [name, name]),
    )
    // Each fails (no such task, no push, no extended card), each names the task its params name (but the card's).
    expect(spans.all().map((span) => span.attributes['a2a.task.id'])).toEqual([...Array(9).fill(taskId), undefined])
    for (const span of spans.all()) expect(span.attributes['error.type']).toMatch(/^-320\d\d$/)
  })

  it('A2A v1.0 JSON-RPC: ListTasks, with no task of its own', async () => {
    const server = await serve()
    await rpc(server.url, 'ListTasks', {}, { headers: { 'a2a-version': '1.0' } })
    const list = await spans.one('ListTasks')
    expect(list.attributes).toEqual({
      'a2a.method.name': 'ListTasks',
      'a2a.protocol.version': '1.0',
      ...agentAttributes,
    })
  })

  it('HTTP+JSON: the same spans, named by the operation a path and method choose', async () => {
    const server = await serve()
    const headers = { 'content-type': 'application/json', 'a2a-version': '1.0' }
    const caller = callerSpan()
    const sent = userMessageV1('hello')
    const answer = await fetch(`${server.url}message:send`, {
      method: 'POST',
      headers: { ...headers, traceparent: caller.traceparent },
      body: JSON.stringify(sent),
    })
    const { task } = (await answer.json()) as { task: { id: string; contextId: string } }
    await expectCompletedSend(task, sent.message.messageId, caller, { 'a2a.protocol.version': '1.0' })

    await fetch(`${server.url}tasks/${task.id}`, { headers })
    expect((await spans.one('GetTask', { 'a2a.task.id': task.id })).attributes['a2a.task.state']).toBe(
      'TASK_STATE_COMPLETED',
    )
    const streamed = await fetch(`${server.url}message:stream`, {
      method: 'POST',
      headers,
      body: JSON.stringify(userMessageV1('hi')),
    })
    const { events } = await readEvents(streamed, 'numbered')
    const streamedTask: string = events[0].task.id
    const stream = await spans.one('SendStreamingMessage', { 'a2a.task.id': streamedTask })
    expect(stream.attributes['a2a.task.state']).toBe('TASK_STATE_COMPLETED')
  })
})

describe('trace context', () => {
  it('a message without traceparent starts a trace of its own', async () => {
    const server = await serve()
    await rpc(server.url, 'message/send', userMessage('hello'))
    const send = await spans.one('SendMessage')
    expect(send.parentSpanContext).toBeUndefined()
  })

  it("under a transport's span (an HTTP instrumentation's), the A2A span is its INTERNAL child", async () => {
    const app = createA2AApp(tracedAgent(), { logger: captureLogger(), env: {}, telemetry: otelTelemetry() })
    // What an HTTP instrumentation does: its SERVER span, already in the caller's trace, active around the handler.
    const caller = callerSpan()
    const callerContext = trace.setSpanContext(context.active(), caller)
    const http = trace.getTracer('http').startSpan('POST /', { kind: SpanKind.SERVER }, callerContext)
    const request = new Request('http://localhost/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: caller.traceparent },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: userMessage('hello') }),
    })
    await context.with(trace.setSpan(context.active(), http), () => app.fetch(request))
    http.end()
    const send = await spans.one('SendMessage')
    expect(send.spanContext().traceId).toBe(http.spanContext().traceId)
    expect(send.parentSpanContext?.spanId).toBe(http.spanContext().spanId)
    expect(send.kind).toBe(SpanKind.INTERNAL)
    await app.close()
  })

  it("a server started under a span of the application's own still continues each caller's traceparent", async () => {
    const caller = callerSpan()
    // Node runs every request in the context listen() was called in: here the boot span's.
    const server = await trace.getTracer('the-app').startActiveSpan('boot', async (boot) => {
      const started = await serve()
      boot.end()
      return started
    })
    await rpc(server.url, 'message/send', userMessage('hello'), { headers: { traceparent: caller.traceparent } })
    const send = await spans.one('SendMessage')
    expectChildOf(send, caller)
    expect(send.kind).toBe(SpanKind.SERVER)
  })

  it("the caller's baggage is in the context the agent runs in", async () => {
    const server = await serve()
    const answer = await rpc(server.url, 'message/send', userMessage('baggage'), {
      headers: { traceparent: callerSpan().traceparent, baggage: 'tenant-of-caller=acme' },
    })
    expect(answer.body.result.status.message.parts[0].text).toBe('baggage: acme')
  })

  it("a follow-up's span links to the span that started its task, in another trace", async () => {
    const server = await serve()
    const first = callerSpan()
    const asked = await rpc(server.url, 'message/send', userMessage('ask'), {
      headers: { traceparent: first.traceparent },
    })
    const taskId: string = asked.body.result.id
    const started = await spans.one('SendMessage', {
      'a2a.task.id': taskId,
      'a2a.task.state': 'TASK_STATE_INPUT_REQUIRED',
    })
    expect(started.links).toEqual([])

    const second = callerSpan()
    await rpc(server.url, 'message/send', userMessage('blue', { taskId }), {
      headers: { traceparent: second.traceparent },
    })
    const followUp = await spans.one('SendMessage', { 'a2a.task.id': taskId, 'a2a.task.state': 'TASK_STATE_COMPLETED' })
    expectChildOf(followUp, second)
    expect(followUp.links.map((link) => link.context)).toEqual([started.spanContext()])
  })
})

describe('error.type', () => {
  it("is the code the failure is answered with, in each dialect and binding; a client's mistake is no ERROR", async () => {
    const server = await serve()
    const missing = { id: 'no-such-task' }
    await rpc(server.url, 'tasks/get', missing)
    await rpc(`${server.url}v0.3`, 'tasks/get', missing)
    await rpc(server.url, 'GetTask', missing, { headers: { 'a2a-version': '1.0' } })
    await fetch(`${server.url}tasks/no-such-task`, { headers: { 'a2a-version': '1.0' } })
    await expect.poll(() => spans.named('GetTask').length).toBe(4)
    const gets = spans.named('GetTask')
    // The platform answers an unknown task -32602, A2A -32001, HTTP+JSON 404.
    expect(gets.map((span) => span.attributes['error.type'])).toEqual(['-32602', '-32001', '-32001', '404'])
    for (const span of gets) {
      expect(span.status.code).toBe(SpanStatusCode.UNSET)
      expect(span.attributes['a2a.task.id']).toBe('no-such-task')
      expect(span.attributes['a2a.task.state']).toBeUndefined()
    }
  })

  it('a streaming operation refused before it streams fails its span', async () => {
    const server = await serve()
    await post(server.url, 'SubscribeToTask', { id: 'no-such-task' }, { 'a2a-version': '1.0' })
    const subscribe = await spans.one('SubscribeToTask')
    expect(subscribe.attributes['error.type']).toBe('-32001')
    expect(subscribe.status.code).toBe(SpanStatusCode.UNSET)
  })

  it("the server's own failure (a store that throws) is an ERROR span, in JSON-RPC and HTTP+JSON", async () => {
    const store = createMemoryStore()
    // The memory store with a get that fails as a disk would (its methods bound: it has private fields).
    const broken = new Proxy(store, {
      get: (target, key) => {
        if (key === 'get') return () => Promise.reject(new Error('disk gone'))
        const value = Reflect.get(target, key)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    const server = await served(tracedAgent(), { telemetry: otelTelemetry(), store: broken })
    await rpc(server.url, 'GetTask', { id: 't1' }, { headers: { 'a2a-version': '1.0' } })
    await fetch(`${server.url}tasks/t1`, { headers: { 'a2a-version': '1.0' } })
    await expect.poll(() => spans.named('GetTask').length).toBe(2)
    const gets = spans.named('GetTask')
    expect(gets.map((span) => span.attributes['error.type'])).toEqual(['-32603', '500'])
    for (const span of gets) expect(span.status.code).toBe(SpanStatusCode.ERROR)
  })
})

describe('content', () => {
  const text = (span: ReadableSpan) =>
    JSON.stringify([span.attributes, span.events.map((event) => event.attributes), span.status])

  it('no span holds what a message or an artifact says, unless captureContent is on', async () => {
    const server = await serve()
    await rpc(server.url, 'message/send', userMessage('a-secret-question'))
    await rpc(server.url, 'message/send', userMessage('ask'))
    await expect.poll(() => spans.named('SendMessage').length).toBe(2)
    for (const span of spans.all()) {
      expect(text(span)).not.toContain('a-secret-question')
      expect(text(span)).not.toContain('Which colour?')
    }
  })

  it('captureContent records the message, the artifacts and the status messages as the GenAI conventions do', async () => {
    const server = await serve({ captureContent: true })
    const answer = await rpc(server.url, 'message/send', userMessage('a-question'))
    const send = await spans.one('SendMessage', { 'a2a.task.id': answer.body.result.id })
    expect(JSON.parse(send.attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'a-question' }] },
    ])
    const artifact = send.events.find((event) => event.name === 'a2a.task.artifact_update')!
    expect(JSON.parse(artifact.attributes!['gen_ai.output.messages'] as string)).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Echo: a-question' }] },
    ])

    const asked = await rpc(server.url, 'message/send', userMessage('ask'))
    const question = await spans.one('SendMessage', { 'a2a.task.id': asked.body.result.id })
    const status = question.events.find((event) => event.attributes?.['a2a.task.state'] === 'TASK_STATE_INPUT_REQUIRED')
    expect(JSON.parse(status!.attributes!['gen_ai.output.messages'] as string)).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Which colour?' }] },
    ])
  })
  it("captureContent records a file's URI without its query, where a presigned URL keeps its signature", async () => {
    const server = await serve({ captureContent: true })
    const file = {
      kind: 'file',
      file: { uri: 'https://files.example/q3.pdf?X-Amz-Signature=s3cr3t#p2', mimeType: 'text/plain' },
    }
    const message = { ...userMessage('read this').message, parts: [{ kind: 'text', text: 'read this' }, file] }
    const answer = await rpc(server.url, 'message/send', { message })
    expect(answer.body.error).toBeUndefined()
    const send = await spans.one('SendMessage', { 'a2a.task.id': answer.body.result.id })
    expect(JSON.parse(send.attributes['gen_ai.input.messages'] as string)[0].parts[1]).toEqual({
      type: 'file',
      mime_type: 'text/plain',
      uri: 'https://files.example/q3.pdf',
    })
    expect(text(send)).not.toContain('s3cr3t')
  })
})

describe('streams', () => {
  it('a stream whose client leaves ends its span then, with an event saying so', async () => {
    const gate = deferred()
    const server = await served(tracedAgent(gate), { telemetry: otelTelemetry() })
    const leaving = new AbortController()
    const response = await post(server.url, 'message/stream', userMessage('slow'))
    const events = eventReader(response)
    const first = await events.next()
    const taskId: string = first.params.taskId
    const subscription = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/resubscribe', params: { id: taskId } }),
      signal: leaving.signal,
    })
    await eventReader(subscription).next()
    leaving.abort()
    const left = await spans.one('SubscribeToTask', { 'a2a.task.id': taskId })
    expect(left.events.map((event) => event.name)).toContain('a2a.stream.client_left')
    expect(left.status.code).toBe(SpanStatusCode.UNSET)
    // The task went on: the send's stream still ends with it.
    expect(spans.named('SendStreamingMessage')).toEqual([])
    gate.resolve()
    while ((await events.next()) !== undefined);
    expect((await spans.one('SendStreamingMessage')).attributes['a2a.task.state']).toBe('TASK_STATE_COMPLETED')
  })
})
