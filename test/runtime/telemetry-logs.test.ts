import { logs } from '@opentelemetry/api-logs'
import {
  InMemoryLogRecordExporter,
  LoggerProvider,
  type ReadableLogRecord,
  SimpleLogRecordProcessor,
} from '@opentelemetry/sdk-logs'
import { createA2AApp } from 'a2a-runtime'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { otelTelemetry } from '../../runtime/src/entries/telemetry.ts'
import { agent } from './_agents.ts'
import { appOf, closeAfterTest, consoleWrites, SECRET_TEXT, send, serveWithSecretQuery } from './_failing-agent-logs.ts'
import { captureLogger } from './_logger.ts'
import { callerSpan, recordedSpans } from './_telemetry.ts'

// With telemetry on, each line the runtime's console logger writes is also an OpenTelemetry log record of the
// LoggerProvider the process registers: severity from the level, the message as body, the line's fields as
// attributes, in the trace of the context it was written in. The console output stays as it was.

const spans = recordedSpans()

/** A LoggerProvider exporting to memory, registered for a test (or not: `unregister`), and unregistered after it. */
let exporter: InMemoryLogRecordExporter
const providers: LoggerProvider[] = []
const register = () => {
  // A provider's shutdown stops its exporter for good: each registration has its own.
  exporter = new InMemoryLogRecordExporter()
  const provider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter })] })
  providers.push(provider)
  logs.setGlobalLoggerProvider(provider)
}
beforeEach(register)
afterEach(async () => {
  logs.disable()
  await Promise.all(providers.splice(0).map((provider) => provider.shutdown()))
})
const unregister = () => logs.disable()
const records = (): ReadableLogRecord[] => exporter.getFinishedLogRecords()

const written = consoleWrites()

const failureOf = (taskId: string) => `Agent "Test Agent" threw while running task ${taskId}; the task is failed`

describe('log records', () => {
  it('carry a failing agent’s error line in the operation’s trace, and its own line in its span; the console as before', async () => {
    const caller = callerSpan()
    const task = await send(appOf({}, { telemetry: otelTelemetry() }), { traceparent: caller.traceparent })
    expect(task.status.state).toBe('failed')
    const operation = (await spans.one('SendMessage')).spanContext()
    const work = (await spans.one('agent-work')).spanContext()
    await expect.poll(() => records().length).toBe(2)
    const [own, failure] = records()

    expect(failure!.body).toBe(failureOf(task.id))
    expect(failure!.severityNumber).toBe(17)
    expect(failure!.severityText).toBe('error')
    expect(failure!.spanContext).toMatchObject({ traceId: caller.traceId, spanId: operation.spanId, traceFlags: 1 })
    expect(failure!.attributes).toEqual({
      'a2a.task.id': task.id,
      'exception.type': 'Error',
      'exception.message': 'boom',
      error_causes: ['TypeError: the model answered nothing'],
    })
    expect(failure!.instrumentationScope.name).toBe('a2a-runtime')

    expect(own!.body).toBe('The agent is at work')
    expect(own!.severityNumber).toBe(9)
    expect(own!.spanContext).toMatchObject({ traceId: caller.traceId, spanId: work.spanId })
    expect(own!.attributes).toEqual({})

    // The console says what it said without records.
    expect(written.error.join('\n')).toBe(
      [
        `[a2a] ${failureOf(task.id)}: Error: boom (trace_id=${operation.traceId} span_id=${operation.spanId})`,
        '[a2a]   caused by: TypeError: the model answered nothing',
        "[a2a]   (the stack and the error's fields at debug level: A2A_LOG_LEVEL=debug or --log-level debug)",
      ].join('\n'),
    )
    expect(written.info).toEqual([`[a2a] The agent is at work (trace_id=${operation.traceId} span_id=${work.spanId})`])
    expect(JSON.stringify(records().map((record) => [record.body, record.attributes]))).not.toContain(SECRET_TEXT)
  })

  it('with A2A_TELEMETRY=otel, give the request line its fields under HTTP’s names, never the query string', async () => {
    const { server, answer } = await serveWithSecretQuery({ A2A_TELEMETRY: 'otel' })
    expect(answer.status).toBe(200)
    const requestRecord = () => records().find((record) => record.attributes['http.route'] !== undefined)
    await expect.poll(requestRecord).toBeDefined()
    expect(requestRecord()!.body).toMatch(/^POST \/ 200 \d+\.\d ms$/)
    expect(requestRecord()!.severityText).toBe('info')
    expect(requestRecord()!.attributes).toEqual({
      'http.request.method': 'POST',
      'http.route': '/',
      'http.response.status_code': 200,
      duration_ms: expect.any(Number),
    })
    expect(records()[0]!.body).toBe(
      `Agent "Test Agent" listening on ${server.url} (card at ${server.url}.well-known/agent.json)`,
    )
    expect(JSON.stringify(records().map((record) => [record.body, record.attributes]))).not.toContain('s3cret')
  })

  it('at debug level carry the stack, and what an agent gives its own line as JSON text', async () => {
    const app = createA2AApp(
      agent((ctx) => {
        ctx.logger.debug('Model usage', { inputTokens: 12, outputTokens: 10n })
        ctx.logger.warn('Slow model', 'the answer took 9 s')
        throw new Error('gave up')
      }),
      { env: { A2A_LOG_LEVEL: 'debug' }, telemetry: otelTelemetry() },
    )
    closeAfterTest(() => app.close())
    const task = await send(app)
    const named = (body: string) => records().find((record) => record.body === body)
    await expect.poll(() => named(failureOf(task.id))).toBeDefined()
    expect(named('Model usage')).toMatchObject({ severityText: 'debug', severityNumber: 5 })
    expect(named('Model usage')!.attributes).toEqual({ detail: '{"inputTokens":12,"outputTokens":"10"}' })
    expect(named('Slow model')).toMatchObject({ severityNumber: 13, attributes: { detail: 'the answer took 9 s' } })
    expect(named(failureOf(task.id))!.attributes['exception.stacktrace']).toMatch(/^Error: gave up\n {4}at /)
  })
})

describe('no log records', () => {
  it('without telemetry, or from a logger of the app’s own', async () => {
    const plain = await send(appOf({}))
    const own = await send(appOf({}, { telemetry: otelTelemetry(), logger: captureLogger() }))
    expect([plain.status.state, own.status.state]).toEqual(['failed', 'failed'])
    // The lines were written (the console's, and the other logger's) while a provider was registered.
    expect(written.error[0]).toContain(failureOf(plain.id))
    // A later line that does become a record shows the earlier ones had their chance to arrive.
    await send(appOf({}, { telemetry: otelTelemetry() }))
    await expect.poll(() => records().filter((record) => record.severityText === 'error').length).toBe(1)
    expect(records().map((record) => record.body)).not.toContain(failureOf(plain.id))
    expect(records().map((record) => record.body)).not.toContain(failureOf(own.id))
  })

  it('while no LoggerProvider is registered; one registered later hears the lines written from then on', async () => {
    unregister()
    const app = appOf({}, { telemetry: otelTelemetry() })
    const before = await send(app)
    expect(written.error[0]).toContain(failureOf(before.id))
    register()
    const after = await send(app)
    await expect.poll(() => records().filter((record) => record.severityText === 'error').length).toBe(1)
    expect(records().find((record) => record.severityText === 'error')!.body).toBe(failureOf(after.id))
    expect(records().map((record) => record.body)).not.toContain(failureOf(before.id))
  })
})
