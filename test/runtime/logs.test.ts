import { createA2AApp } from 'a2a-runtime'
import { describe, expect, it } from 'vitest'
import { otelTelemetry } from '../../runtime/src/entries/telemetry.ts'
import { ConfigurationError } from '../../runtime/src/errors.ts'
import { agent } from './_agents.ts'
import {
  appOf,
  closeAfterTest,
  consoleWrites,
  failingAgent,
  SECRET_TEXT,
  send,
  serveWithSecretQuery,
} from './_failing-agent-logs.ts'
import { captureLogger } from './_logger.ts'
import { callerSpan, recordedSpans } from './_telemetry.ts'

// The runtime's console log: text for people, JSON (A2A_LOG_FORMAT=json) for log shippers, and the trace a line is
// written in (an operation's span, or a span of the agent's under it) named on the line once the app has telemetry.

const spans = recordedSpans()

const written = consoleWrites()

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe('text lines', () => {
  it('without telemetry are as they always were: no trace named', async () => {
    const task = await send(appOf({}))
    expect(task.status.state).toBe('failed')
    expect(written.error.join('\n')).toBe(
      [
        `[a2a] Agent "Test Agent" threw while running task ${task.id}; the task is failed: Error: boom`,
        '[a2a]   caused by: TypeError: the model answered nothing',
        "[a2a]   (the stack and the error's fields at debug level: A2A_LOG_LEVEL=debug or --log-level debug)",
      ].join('\n'),
    )
    expect(written.info).toEqual(['[a2a] The agent is at work'])
  })

  it('with telemetry name the trace and span active where each is written, the agent’s own span included', async () => {
    const caller = callerSpan()
    const task = await send(appOf({}, { telemetry: otelTelemetry() }), { traceparent: caller.traceparent })
    const operation = await spans.one('SendMessage')
    const work = await spans.one('agent-work')
    const { traceId, spanId } = operation.spanContext()
    expect(traceId).toBe(caller.traceId)
    // The turn runs in the operation's span: its failure is logged there.
    const [first, ...rest] = written.error[0]!.split('\n')
    expect(first).toBe(
      `[a2a] Agent "Test Agent" threw while running task ${task.id}; the task is failed: Error: boom` +
        ` (trace_id=${traceId} span_id=${spanId})`,
    )
    expect(rest).toHaveLength(2)
    // The agent's line is written in its own span, a child of the operation's.
    expect(work.parentSpanContext?.spanId).toBe(spanId)
    expect(written.info).toEqual([
      `[a2a] The agent is at work (trace_id=${traceId} span_id=${work.spanContext().spanId})`,
    ])
  })

  it('a logger of the app’s own hears the same lines, without a trace added', async () => {
    const logger = captureLogger()
    await send(appOf({ A2A_LOG_FORMAT: 'json' }, { telemetry: otelTelemetry(), logger }))
    await spans.one('SendMessage')
    expect(logger.lines.map((line) => line.message)).toEqual([
      'The agent is at work',
      expect.stringMatching(/^Agent "Test Agent" threw while running task [\w-]+; the task is failed$/),
    ])
    expect(Object.values(written).flat()).toEqual([])
  })
})

describe('JSON lines (A2A_LOG_FORMAT=json)', () => {
  it('are one object per line: time, level, message, the task, the trace and the error, never the message text', async () => {
    const task = await send(appOf({ A2A_LOG_FORMAT: 'json' }, { telemetry: otelTelemetry() }))
    const operation = (await spans.one('SendMessage')).spanContext()
    expect(written.error).toHaveLength(1)
    expect(written.error[0]).not.toContain('\n')
    const line = JSON.parse(written.error[0]!)
    expect(line).toEqual({
      timestamp: expect.stringMatching(ISO_TIME),
      level: 'error',
      message: `Agent "Test Agent" threw while running task ${task.id}; the task is failed`,
      task_id: task.id,
      trace_id: operation.traceId,
      span_id: operation.spanId,
      trace_flags: '01',
      error_name: 'Error',
      error_message: 'boom',
      error_causes: ['TypeError: the model answered nothing'],
    })
    expect(Math.abs(Date.parse(line.timestamp) - Date.now())).toBeLessThan(60_000)
    expect(JSON.parse(written.info[0]!)).toMatchObject({ level: 'info', message: 'The agent is at work' })
    expect(Object.values(written).flat().join('\n')).not.toContain(SECRET_TEXT)
  })

  it('at debug level add the stack, and carry what an agent gives its own line as its detail', async () => {
    const cycle: Record<string, unknown> = { name: 'loop' }
    cycle.self = cycle
    const app = createA2AApp(
      agent((ctx) => {
        ctx.logger.debug('Model usage', { inputTokens: 12, outputTokens: 10n, model: 'small' })
        ctx.logger.debug('A cycle', cycle)
        ctx.logger.debug('Long', 'x'.repeat(5000))
        throw new Error('gave up')
      }),
      { env: { A2A_LOG_FORMAT: 'json', A2A_LOG_LEVEL: 'debug' } },
    )
    closeAfterTest(() => app.close())
    await send(app)
    const lines = written.debug.map((text) => JSON.parse(text))
    expect(lines.find((line) => line.message === 'Model usage').detail).toEqual({
      inputTokens: 12,
      outputTokens: '10',
      model: 'small',
    })
    // A detail JSON cannot hold, or too long to, is given as cut text, and the line stays JSON.
    expect(lines.find((line) => line.message === 'A cycle').detail).toBe('[object Object]')
    expect(lines.find((line) => line.message === 'Long').detail).toMatch(/^"x{239}… \(5002 characters\)$/)
    const failure = JSON.parse(written.error[0]!)
    expect(failure).toMatchObject({ error_name: 'Error', error_message: 'gave up' })
    expect(failure.error_stack).toMatch(/^Error: gave up\n {4}at /)
    expect([...lines, failure].every((line) => line.trace_id === undefined)).toBe(true)
  })

  it('give the request log its fields apart, and never the query string', async () => {
    const { server, answer } = await serveWithSecretQuery({ A2A_LOG_FORMAT: 'json' })
    expect(answer.status).toBe(200)
    const requestLine = () => written.info.map((text) => JSON.parse(text)).find((line) => line.route !== undefined)
    await expect.poll(requestLine).toBeDefined()
    expect(requestLine()).toEqual({
      timestamp: expect.stringMatching(ISO_TIME),
      level: 'info',
      message: expect.stringMatching(/^POST \/ 200 \d+\.\d ms$/),
      method: 'POST',
      route: '/',
      status: 200,
      duration_ms: expect.any(Number),
    })
    const listening = JSON.parse(written.info[0]!)
    expect(listening.message).toBe(
      `Agent "Test Agent" listening on ${server.url} (card at ${server.url}.well-known/agent.json)`,
    )
    expect(Object.values(written).flat().join('\n')).not.toContain('s3cret')
  })

  it('refuse a format they do not know, naming the variable', () => {
    expect(() => createA2AApp(failingAgent, { env: { A2A_LOG_FORMAT: 'xml' } })).toThrow(
      new ConfigurationError('A2A_LOG_FORMAT must be one of text, json (got "xml")'),
    )
  })
})
