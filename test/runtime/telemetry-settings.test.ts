import { trace } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { createA2AApp } from 'a2a-runtime'
import { describe, expect, it } from 'vitest'
import { otelTelemetry } from '../../runtime/src/entries/telemetry.ts'
import { ConfigurationError } from '../../runtime/src/errors.ts'
import type { Telemetry } from '../../runtime/src/telemetry/telemetry.ts'
import { agent, echoAgent } from './_agents.ts'
import { captureLogger } from './_logger.ts'
import { userMessage } from './_messages.ts'
import { callerSpan, recordedSpans } from './_telemetry.ts'

// How an app is told to trace (the option, A2A_TELEMETRY for a2a dev and a2a start), what it refuses, and the budget
// of tasks a follow-up can link to.

const spans = recordedSpans()

const send = (app: ReturnType<typeof createA2AApp>, params: unknown, headers: Record<string, string> = {}) =>
  app.fetch(
    new Request('http://localhost/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params }),
    }),
  )

const appWith = (options: Parameters<typeof createA2AApp>[1]) =>
  createA2AApp(echoAgent, { logger: captureLogger(), env: {}, ...options })

describe('turning telemetry on', () => {
  it('A2A_TELEMETRY=otel traces through the SDK the process registered, as the option does', async () => {
    const app = appWith({ env: { A2A_TELEMETRY: 'otel' } })
    const caller = callerSpan()
    await send(app, userMessage('hello'), { traceparent: caller.traceparent })
    const span = await spans.one('SendMessage')
    expect(span.spanContext().traceId).toBe(caller.traceId)
    expect(span.attributes['a2a.task.state']).toBe('TASK_STATE_COMPLETED')
    await app.close()
  })

  it('without the option or the variable (or with A2A_TELEMETRY=off) nothing is recorded, an SDK registered or not', async () => {
    for (const env of [{}, { A2A_TELEMETRY: 'off' }]) {
      const app = appWith({ env })
      const answer = await send(app, userMessage('hello'))
      expect(((await answer.json()) as any).result.status.state).toBe('completed')
      await app.close()
    }
    // A span of the test's own, after the sends, is the only one.
    trace.getTracer('test').startSpan('after').end()
    await expect.poll(() => spans.all().map((span) => span.name)).toEqual(['after'])
  })

  it('with no SDK registered the app answers as without telemetry, and traces once one is registered', async () => {
    const app = appWith({ telemetry: otelTelemetry() })
    trace.disable()
    const answer = await send(app, userMessage('hello'))
    expect(((await answer.json()) as any).result.status.state).toBe('completed')
    const exporter = new InMemorySpanExporter()
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    trace.setGlobalTracerProvider(provider)
    await send(app, userMessage('hello'))
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['SendMessage'])
    await provider.shutdown()
    await app.close()
  })

  it('the option wins over the variable', async () => {
    const app = appWith({ env: { A2A_TELEMETRY: 'off' }, telemetry: otelTelemetry() })
    await send(app, userMessage('hello'))
    await spans.one('SendMessage')
    await app.close()
  })

  it('refuses what it cannot use, naming the setting', () => {
    expect(() => appWith({ env: { A2A_TELEMETRY: 'jaeger' } })).toThrow(
      new ConfigurationError('telemetry (A2A_TELEMETRY) must be "otel" or "off" (got "jaeger")'),
    )
    expect(() => appWith({ telemetry: { name: 'home-made' } as Telemetry })).toThrow(
      new ConfigurationError('telemetry must be what otelTelemetry() of a2a-runtime/telemetry returns'),
    )
    expect(() => otelTelemetry({ captureContent: 'yes' as unknown as boolean })).toThrow(
      new ConfigurationError('captureContent must be true or false (got "yes")'),
    )
    expect(() => otelTelemetry({ maxLinkedTasks: -1 })).toThrow(
      new ConfigurationError('maxLinkedTasks must be a whole number, 0 or more (got -1)'),
    )
  })
})

describe('maxLinkedTasks', () => {
  const askingAgent = agent((ctx, task) => (ctx.text === 'ask' ? task.inputRequired('Which?') : task.complete('done')))

  it("keeps the first span of that many tasks, the oldest forgotten: a forgotten task's follow-up has no link", async () => {
    const app = createA2AApp(askingAgent, {
      logger: captureLogger(),
      env: {},
      telemetry: otelTelemetry({ maxLinkedTasks: 1 }),
    })
    const ask = async () => ((await (await send(app, userMessage('ask'))).json()) as any).result.id as string
    const older = await ask()
    const newer = await ask()
    await send(app, userMessage('blue', { taskId: older }))
    await send(app, userMessage('blue', { taskId: newer }))
    const followUp = (taskId: string) =>
      spans.one('SendMessage', { 'a2a.task.id': taskId, 'a2a.task.state': 'TASK_STATE_COMPLETED' })
    expect((await followUp(older)).links).toEqual([])
    const first = await spans.one('SendMessage', {
      'a2a.task.id': newer,
      'a2a.task.state': 'TASK_STATE_INPUT_REQUIRED',
    })
    expect((await followUp(newer)).links.map((link) => link.context)).toEqual([first.spanContext()])
    await app.close()
  })
})
