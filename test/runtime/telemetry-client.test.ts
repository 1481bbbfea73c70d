import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { describe, expect, it } from 'vitest'
import { type A2AClient, connect } from '../../runtime/src/client/client.ts'
import type { Message, StreamResponse } from '../../runtime/src/client/types.ts'
import { otelTelemetry } from '../../runtime/src/entries/telemetry.ts'
import { agent, deferred } from './_agents.ts'
import { callerSpan, recordedSpans, served } from './_telemetry.ts'

// The client core's CLIENT spans (`connect({ telemetry })`) against an agent of this runtime with server telemetry,
// in one process and one in-memory exporter: each call's span, its parent (the caller's span), the trace context it
// sends (the agent's SERVER span is its child), a polled GetTask a sibling of the SendMessage, a failure's error.type,
// a stream's events, and no content unless asked for.

const spans = recordedSpans()

const CARD = { name: 'Called Agent', description: 'Answers a client that traces', version: '3.0.1' }
const SECRET_WORDS = 'the launch code is tangerine'

/** Echoes; "slow" works until the test lets it go. */
function calledAgent(gate = deferred()) {
  return agent(
    async (ctx, task) => {
      if (ctx.text === 'slow') {
        task.working('on it')
        await gate.promise
      }
      task.artifact(`Echo: ${ctx.text}`)
      task.complete()
    },
    { card: { ...CARD, capabilities: { streaming: true } } },
  )
}

const userMessage = (text: string, extra: Partial<Message> = {}): Message => ({
  messageId: crypto.randomUUID(),
  role: 'ROLE_USER',
  parts: [{ text }],
  ...extra,
})

/** A message of the platform's own dialect (`message/send`). */
const legacyMessage = (text: string) => ({
  kind: 'message',
  messageId: crypto.randomUUID(),
  role: 'user',
  parts: [{ kind: 'text', text }],
})

/** An agent served with server telemetry, and a client with client telemetry speaking `binding` to it. */
async function connected(
  binding: string,
  options: { captureContent?: boolean; gate?: ReturnType<typeof deferred<void>> } = {},
) {
  const server = await served(calledAgent(options.gate), { telemetry: otelTelemetry() })
  const client = await connect({
    agentCard: server.url,
    transports: [binding],
    telemetry: otelTelemetry({ captureContent: options.captureContent ?? false }),
  })
  return { server, client }
}

/** Runs `work` under a span of the caller's own (an agent's tool call, say), and answers that span with the result. */
async function asCaller<T>(work: () => Promise<T>): Promise<{ caller: ReadableSpan; result: T }> {
  const span = trace.getTracer('the-caller').startSpan('caller')
  const result = await context.with(trace.setSpan(context.active(), span), work)
  span.end()
  const caller = spans.all().find((ended) => ended.spanContext().spanId === span.spanContext().spanId)!
  return { caller, result }
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
const idOf = (span: ReadableSpan) => span.spanContext().spanId

/** The agent's SERVER span is the client's span's child, in its trace. */
function expectServedUnder(server: ReadableSpan, client: ReadableSpan) {
  expect(server.kind).toBe(SpanKind.SERVER)
  expect(server.spanContext().traceId).toBe(client.spanContext().traceId)
  expect(parentOf(server)).toBe(idOf(client))
  expect(server.parentSpanContext?.isRemote).toBe(true)
}

/** The one ended CLIENT span named `name` whose attributes include `attributes`. */
async function clientSpan(name: string, attributes: Record<string, unknown> = {}): Promise<ReadableSpan> {
  const matching = () =>
    spans
      .named(name)
      .filter(
        (span) =>
          span.kind === SpanKind.CLIENT &&
          Object.entries(attributes).every(([key, value]) => span.attributes[key] === value),
      )
  await expect.poll(() => matching().length, { message: `a CLIENT span ${name}` }).toBe(1)
  return matching()[0]!
}
const serverSpan = async (name: string, client: ReadableSpan) => {
  await expect.poll(() => spans.named(name).filter((span) => parentOf(span) === idOf(client)).length).toBe(1)
  return spans.named(name).find((span) => parentOf(span) === idOf(client))!
}

describe.each(['JSONRPC', 'HTTP+JSON'])('the client over %s', (binding) => {
  it('SendMessage is a CLIENT span under the caller, and the SERVER span of the agent is its child', async () => {
    const { server, client } = await connected(binding)
    const sent = userMessage('hello', { contextId: 'ctx-of-caller' })
    const { caller, result } = await asCaller(() => client.sendMessage({ message: sent }))
    const task = result.task!
    const send = await clientSpan('SendMessage')
    expect(parentOf(send)).toBe(idOf(caller))
    expect(send.spanContext().traceId).toBe(caller.spanContext().traceId)
    const { port } = new URL(server.url)
    expect(send.attributes).toEqual({
      'a2a.method.name': 'SendMessage',
      'a2a.protocol.version': '1.0',
      'a2a.message.id': sent.messageId,
      'a2a.task.id': task.id,
      'a2a.task.state': 'TASK_STATE_COMPLETED',
      'gen_ai.conversation.id': 'ctx-of-caller',
      'gen_ai.agent.name': CARD.name,
      'gen_ai.agent.description': CARD.description,
      'gen_ai.agent.version': CARD.version,
      'server.address': '127.0.0.1',
      'server.port': Number(port),
    })
    expect(send.status.code).toBe(SpanStatusCode.UNSET)
    const served = await serverSpan('SendMessage', send)
    expectServedUnder(served, send)
    expect(served.attributes['a2a.task.id']).toBe(task.id)
  })

  it('a polled GetTask is a sibling of the SendMessage: both children of the caller', async () => {
    const gate = deferred()
    const { client } = await connected(binding, { gate })
    const { caller } = await asCaller(async () => {
      const sent = await client.sendMessage({
        message: userMessage('slow'),
        configuration: { returnImmediately: true },
      })
      const id = sent.task!.id
      await client.getTask({ id })
      gate.resolve()
      await expect.poll(async () => (await client.getTask({ id })).status.state).toBe('TASK_STATE_COMPLETED')
    })
    const send = await clientSpan('SendMessage')
    const gets = spans.named('GetTask').filter((span) => span.kind === SpanKind.CLIENT)
    expect(gets.length).toBeGreaterThanOrEqual(2)
    for (const span of [send, ...gets]) expect(parentOf(span)).toBe(idOf(caller))
    for (const get of gets) {
      expect(get.attributes['a2a.task.id']).toBe(send.attributes['a2a.task.id'])
      expectServedUnder(await serverSpan('GetTask', get), get)
    }
    expect(gets.at(-1)!.attributes['a2a.task.state']).toBe('TASK_STATE_COMPLETED')
  })

  it("an unknown task: error.type is the code the agent answered, as the agent's span says; status ERROR", async () => {
    const { client } = await connected(binding)
    await expect(client.getTask({ id: 'no-such-task' })).rejects.toMatchObject({ name: 'TaskNotFoundError' })
    const get = await clientSpan('GetTask', { 'a2a.task.id': 'no-such-task' })
    expect(get.attributes['error.type']).toBe(binding === 'JSONRPC' ? '-32001' : '404')
    expect(get.status.code).toBe(SpanStatusCode.ERROR)
    const served = await serverSpan('GetTask', get)
    expect(served.attributes['error.type']).toBe(get.attributes['error.type'])
  })

  it('a stream is one span until its last event, with an event per response and no content', async () => {
    const { client } = await connected(binding)
    const events: StreamResponse[] = []
    const { caller } = await asCaller(async () => {
      for await (const { response } of client.sendStreamingMessage({ message: userMessage(SECRET_WORDS) }))
        events.push(response)
    })
    const stream = await clientSpan('SendStreamingMessage')
    expect(parentOf(stream)).toBe(idOf(caller))
    const taskId = 'task' in events[0]! ? events[0].task.id : undefined
    expect(stream.attributes['a2a.task.id']).toBe(taskId)
    expect(stream.attributes['a2a.task.state']).toBe('TASK_STATE_COMPLETED')
    expect(stream.events.map((event) => event.name)).toEqual(
      events.map((event) =>
        'task' in event ? 'a2a.task' : 'statusUpdate' in event ? 'a2a.task.status_update' : 'a2a.task.artifact_update',
      ),
    )
    expect(stream.events.at(-1)!.attributes).toEqual({ 'a2a.task.state': 'TASK_STATE_COMPLETED' })
    expectServedUnder(await serverSpan('SendStreamingMessage', stream), stream)
    // Nothing the user or the agent said, on any span of either side.
    expect(JSON.stringify(spans.all().map(({ attributes, events }) => ({ attributes, events })))).not.toContain(
      'tangerine',
    )
  })
})

describe('an agent calling another through the client', () => {
  it('one trace: the caller, the first agent, its CLIENT span, the second agent, each the child of the one before', async () => {
    const second = await served(calledAgent(), { telemetry: otelTelemetry() })
    const telemetry = otelTelemetry()
    const first = await served(
      agent(async (ctx, task) => {
        // The agent's execute runs in its SERVER span's context: the call it makes is that span's child.
        const client = await connect({ agentCard: second.url, telemetry })
        const answer = await client.sendMessage({ message: userMessage(`asked by the first: ${ctx.text}`) })
        task.artifact(`The second said: ${answer.task?.artifacts?.[0]?.parts[0]?.text}`)
        task.complete()
      }),
      { telemetry },
    )
    const caller = callerSpan()
    const answer = await fetch(first.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: caller.traceparent },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: legacyMessage('hi') } }),
    })
    expect(((await answer.json()) as { result: { status: { state: string } } }).result.status.state).toBe('completed')
    await expect.poll(() => spans.named('SendMessage').length).toBe(3)
    const sends = spans.named('SendMessage')
    const outer = sends.find(
      (span) => span.kind === SpanKind.SERVER && span.attributes['gen_ai.agent.name'] === 'Test Agent',
    )!
    const call = sends.find((span) => span.kind === SpanKind.CLIENT)!
    const inner = sends.find((span) => span.kind === SpanKind.SERVER && span !== outer)!
    expect(outer.parentSpanContext?.spanId).toBe(caller.spanId)
    expect(parentOf(call)).toBe(idOf(outer))
    expect(call.attributes['gen_ai.agent.name']).toBe(CARD.name)
    expectServedUnder(inner, call)
    for (const span of sends) expect(span.spanContext().traceId).toBe(caller.traceId)
  })
})

describe('the client with captureContent', () => {
  it("records the message sent and the agent's answer, as the GenAI conventions do", async () => {
    const { client } = await connected('JSONRPC', { captureContent: true })
    await client.sendMessage({ message: userMessage(SECRET_WORDS) })
    const send = await clientSpan('SendMessage')
    expect(JSON.parse(String(send.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: SECRET_WORDS }] },
    ])
    expect(JSON.parse(String(send.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: `Echo: ${SECRET_WORDS}` }] },
    ])
  })
})

describe('a stream left early, and a client without telemetry', () => {
  it('a stream its reader leaves ends its span there, without an error', async () => {
    const gate = deferred()
    const { client } = await connected('JSONRPC', { gate })
    for await (const _ of client.sendStreamingMessage({ message: userMessage('slow') })) break
    const stream = await clientSpan('SendStreamingMessage')
    expect(stream.status.code).toBe(SpanStatusCode.UNSET)
    expect(stream.events.map((event) => event.name)).toEqual(['a2a.task'])
    gate.resolve()
  })

  it('sends no trace context and records nothing: the agent starts a trace of its own', async () => {
    const server = await served(calledAgent(), { telemetry: otelTelemetry() })
    const plain: A2AClient = await connect({ agentCard: server.url })
    const { caller } = await asCaller(() => plain.sendMessage({ message: userMessage('hello') }))
    const send = await spans.one('SendMessage')
    expect(send.kind).toBe(SpanKind.SERVER)
    expect(send.parentSpanContext).toBeUndefined()
    expect(send.spanContext().traceId).not.toBe(caller.spanContext().traceId)
  })

  it('refuses a telemetry that otelTelemetry() did not make, in one line naming the option', async () => {
    await expect(connect({ agentCard: 'http://127.0.0.1:9', telemetry: { name: 'opentelemetry' } })).rejects.toThrow(
      /^telemetry must be what otelTelemetry\(\) of a2a-runtime\/telemetry returns$/,
    )
  })
})
