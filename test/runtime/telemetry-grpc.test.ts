import { Metadata } from '@grpc/grpc-js'
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { describe, expect, it } from 'vitest'
import { otelTelemetry } from '../../runtime/src/entries/telemetry.ts'
import { agent } from './_agents.ts'
import { protoMessage, rawClient, serveWithGrpc, unaryCall } from './_grpc.ts'
import { callerSpan, recordedSpans } from './_telemetry.ts'

// The gRPC binding's operations as SERVER spans: the trace context read from the call's metadata, the span named
// after the RPC, error.type the gRPC status the call ends with, a server stream's span ending with the stream.

const spans = recordedSpans()

const tracedAgent = agent(async (ctx, task) => {
  await trace.getTracer('the-agent').startActiveSpan('agent.execute', async (span) => {
    task.artifact(`Echo: ${ctx.text}`)
    task.complete()
    span.end()
  })
})

const serve = () => serveWithGrpc(tracedAgent, { telemetry: otelTelemetry() })

describe('gRPC operations as SERVER spans', () => {
  it('SendMessage and GetTask, in the trace the metadata carries, the agent under them', async () => {
    const target = await serve()
    const client = rawClient(target.grpcAddress)
    const caller = callerSpan()
    const message = protoMessage('hello')
    const sent = await unaryCall(client, 'SendMessage', { message }, { traceparent: caller.traceparent })
    const task = sent.response.task
    const send = await spans.one('SendMessage', { 'a2a.task.id': task.id })
    expect(send.kind).toBe(SpanKind.SERVER)
    expect(send.spanContext().traceId).toBe(caller.traceId)
    expect(send.parentSpanContext?.spanId).toBe(caller.spanId)
    expect(send.attributes).toMatchObject({
      'a2a.method.name': 'SendMessage',
      'a2a.message.id': message.messageId,
      'a2a.task.state': 'TASK_STATE_COMPLETED',
      'a2a.protocol.version': '1.0',
      'gen_ai.conversation.id': task.contextId,
      'gen_ai.agent.name': 'Test Agent',
    })
    const execute = await spans.one('agent.execute')
    expect(execute.parentSpanContext?.spanId).toBe(send.spanContext().spanId)

    await unaryCall(client, 'GetTask', { id: task.id })
    const get = await spans.one('GetTask', { 'a2a.task.id': task.id })
    expect(get.attributes['a2a.task.state']).toBe('TASK_STATE_COMPLETED')
  })

  it("a failed call: error.type is the gRPC status code (NOT_FOUND is 5), the client's mistake no ERROR", async () => {
    const target = await serve()
    const { error } = await unaryCall(rawClient(target.grpcAddress), 'GetTask', { id: 'no-such-task' })
    expect(error?.code).toBe(5)
    const get = await spans.one('GetTask', { 'a2a.task.id': 'no-such-task' })
    expect(get.attributes['error.type']).toBe('5')
    expect(get.status.code).toBe(SpanStatusCode.UNSET)
  })

  it("SendStreamingMessage: the span ends with the server stream, in the caller's trace", async () => {
    const target = await serve()
    const caller = callerSpan()
    const metadata = new Metadata()
    metadata.set('traceparent', caller.traceparent)
    const stream = rawClient(target.grpcAddress).SendStreamingMessage({ message: protoMessage('hi') }, metadata)
    const responses: any[] = []
    stream.on('data', (response: any) => responses.push(response))
    await new Promise((resolve, reject) => {
      stream.on('end', resolve)
      stream.on('error', reject)
    })
    const taskId: string = responses[0].task.id
    const sent = await spans.one('SendStreamingMessage', { 'a2a.task.id': taskId })
    expect(sent.kind).toBe(SpanKind.SERVER)
    expect(sent.spanContext().traceId).toBe(caller.traceId)
    expect(sent.parentSpanContext?.spanId).toBe(caller.spanId)
    expect(sent.attributes['a2a.task.state']).toBe('TASK_STATE_COMPLETED')
    expect(sent.events.map((event) => event.name)).toContain('a2a.task.artifact_update')
  })
})
