import { SpanKind } from '@opentelemetry/api'
import { describe, expect, it } from 'vitest'
import { otelTelemetry } from '../../runtime/src/entries/telemetry.ts'
import { a2a, expectNoStack, oneDocument } from '../cli/_agent-commands.ts'
import { agent } from './_agents.ts'
import { callerSpan, recordedSpans, served } from './_telemetry.ts'

// The a2a client commands (the built CLI, as a process) put their requests in a trace given from outside: the agent,
// served here with server telemetry, records its SERVER spans as children of the span a script names in
// --traceparent, or in OpenTelemetry's TRACEPARENT (with TRACESTATE) environment variables. No SDK in the CLI.

const spans = recordedSpans()

const echo = agent((ctx, task) => {
  task.artifact(`Echo: ${ctx.text}`)
  task.complete()
})

const serve = () => served(echo, { telemetry: otelTelemetry() })

/**
 * The agent's SERVER spans of the task (a2a send streams the message, and may read the task back), once its
 * `names` have ended.
 */
async function spansOfTask(taskId: string, names: string[]) {
  const ofTask = () => spans.all().filter((span) => span.attributes['a2a.task.id'] === taskId)
  await expect.poll(() => names.every((name) => ofTask().some((span) => span.name === name))).toBe(true)
  for (const span of ofTask()) expect(span.kind).toBe(SpanKind.SERVER)
  return ofTask()
}

/** Nothing of the test's own environment decides the trace. */
const NO_TRACE = { TRACEPARENT: '', TRACESTATE: '' }

describe('a2a send and a2a task get in a trace given from outside', () => {
  it("--traceparent: the agent's SERVER span is a child of the span it names", async () => {
    const server = await serve()
    const caller = callerSpan()
    const sent = await a2a(['send', '-a', server.url, '-o', 'json', '--traceparent', caller.traceparent, 'hello'], {
      env: NO_TRACE,
    })
    expect(sent.code, sent.stderr).toBe(0)
    for (const span of await spansOfTask(oneDocument(sent.stdout).task.id, ['SendStreamingMessage'])) {
      expect(span.spanContext().traceId).toBe(caller.traceId)
      expect(span.parentSpanContext?.spanId).toBe(caller.spanId)
      expect(span.parentSpanContext?.isRemote).toBe(true)
    }
  })

  it("TRACEPARENT and TRACESTATE: the trace and its vendors' state, as a traced script sets them", async () => {
    const server = await serve()
    const caller = callerSpan()
    const env = { TRACEPARENT: caller.traceparent, TRACESTATE: 'vendor=opaque-value' }
    const sent = await a2a(['send', '-a', server.url, '-o', 'json', 'hello'], { env })
    expect(sent.code, sent.stderr).toBe(0)
    const taskId = oneDocument(sent.stdout).task.id
    const got = await a2a(['task', 'get', taskId, '-a', server.url, '-o', 'json'], { env })
    expect(got.code, got.stderr).toBe(0)
    for (const span of await spansOfTask(taskId, ['SendStreamingMessage', 'GetTask'])) {
      expect(span.spanContext().traceId).toBe(caller.traceId)
      expect(span.parentSpanContext?.spanId).toBe(caller.spanId)
      expect(span.spanContext().traceState?.get('vendor')).toBe('opaque-value')
    }
  })

  it('without either, the agent starts a trace of its own', async () => {
    const server = await serve()
    const sent = await a2a(['send', '-a', server.url, '-o', 'json', 'hello'], { env: NO_TRACE })
    expect(sent.code, sent.stderr).toBe(0)
    for (const span of await spansOfTask(oneDocument(sent.stdout).task.id, ['SendStreamingMessage']))
      expect(span.parentSpanContext).toBeUndefined()
  })

  it('a value that is not a traceparent is a usage error naming where it came from, and nothing is sent', async () => {
    const server = await serve()
    const flagged = await a2a(['send', '-a', server.url, '--traceparent', 'not-a-trace', 'hello'], { env: NO_TRACE })
    expect(flagged.code).toBe(2)
    expect(flagged.stderr).toMatch(/--traceparent: 'not-a-trace' is not a W3C traceparent/)
    expectNoStack(flagged.stderr)
    const zeros = `00-${'0'.repeat(32)}-${'1'.repeat(16)}-01`
    const fromEnv = await a2a(['send', '-a', server.url, 'hello'], { env: { TRACEPARENT: zeros } })
    expect(fromEnv.code).toBe(2)
    expect(fromEnv.stderr).toMatch(/TRACEPARENT: '00-0+-1+-01' is not a W3C traceparent/)
    expect(spans.all()).toEqual([])
  })
})
