import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { describe, expect, it } from 'vitest'
import { otelTelemetry } from '../../runtime/src/entries/telemetry.ts'
import type { PushOptions } from '../../runtime/src/push/push-options.ts'
import { rpc } from '../_rpc.ts'
import { agent } from './_agents.ts'
import { userMessage } from './_messages.ts'
import { callerSpan, recordedSpans, served } from './_telemetry.ts'
import { recordedMetrics } from './_telemetry-metrics.ts'
import { startReceiver } from './_webhook.ts'

// Push deliveries as OpenTelemetry CLIENT spans, one per POST, in the trace of the operation whose task event they
// carry, announced to the webhook in `traceparent`; and their metrics. Over real HTTP to a loopback webhook.

const spans = recordedSpans()
const meters = recordedMetrics()

const LOOPBACK: PushOptions = { allow: ['127.0.0.1'], allowHttp: true, retryDelayMs: 10, timeoutMs: 10_000 }

const pushEcho = agent(
  (ctx, task) => {
    task.working('on it')
    task.artifact(`Echo: ${ctx.text}`)
    task.complete()
  },
  { card: { capabilities: { pushNotifications: true } } },
)

/** `00-<trace>-<span>-<flags>` read back. */
function parsed(traceparent: unknown) {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(String(traceparent))
  expect(match, `traceparent ${traceparent}`).not.toBeNull()
  return { traceId: match![1]!, spanId: match![2]! }
}

describe('push deliveries in the trace of their task', () => {
  it("each POST is a CLIENT span under the send's SERVER span, and the webhook receives its traceparent", async () => {
    const receiver = await startReceiver()
    const server = await served(pushEcho, { telemetry: otelTelemetry(), push: LOOPBACK })
    const caller = callerSpan()
    const params = { ...userMessage('hi'), configuration: { pushNotificationConfig: { url: receiver.url } } }
    const task = (await rpc(server.url, 'message/send', params, { headers: { traceparent: caller.traceparent } })).body
      .result
    await expect.poll(() => receiver.delivered.at(-1)?.body.status.state).toBe('completed')
    const send = await spans.one('SendMessage', { 'a2a.task.id': task.id })

    await expect.poll(() => spans.named('POST').length).toBe(receiver.attempts.length)
    for (const delivery of receiver.attempts) {
      const announced = parsed(delivery.headers.traceparent)
      expect(announced.traceId).toBe(caller.traceId)
      const post = spans.named('POST').find((span) => span.spanContext().spanId === announced.spanId)!
      expect(post.kind).toBe(SpanKind.CLIENT)
      expect(post.parentSpanContext?.spanId).toBe(send.spanContext().spanId)
      expect(post.attributes).toEqual({
        'http.request.method': 'POST',
        'server.address': '127.0.0.1',
        'server.port': Number(new URL(receiver.url).port),
        'url.scheme': 'http',
        'a2a.task.id': task.id,
        'http.response.status_code': 200,
      })
    }
    const delivered = await meters.count('a2a.server.push.deliveries', {})
    expect(delivered).toBe(receiver.delivered.length)
    expect(await meters.count('a2a.server.push.request.duration', { 'http.response.status_code': 200 })).toBe(delivered)
  })

  it("a webhook receives the trace context only, never the request's baggage", async () => {
    const receiver = await startReceiver()
    const server = await served(pushEcho, { telemetry: otelTelemetry(), push: LOOPBACK })
    const caller = callerSpan()
    const params = { ...userMessage('hi'), configuration: { pushNotificationConfig: { url: receiver.url } } }
    const headers = { traceparent: caller.traceparent, baggage: 'session-secret=s3cr3t' }
    await rpc(server.url, 'message/send', params, { headers })
    await expect.poll(() => receiver.delivered.at(-1)?.body.status.state).toBe('completed')
    for (const delivery of receiver.attempts) {
      expect(parsed(delivery.headers.traceparent).traceId).toBe(caller.traceId)
      expect(delivery.headers.baggage).toBeUndefined()
    }
  })

  it('a POST the webhook refuses is an ERROR span with error.type, its retry a span of its own with its resend count', async () => {
    // The first POST is answered 500, every later one 200.
    const receiver = await startReceiver((n) => (n === 0 ? 500 : 200))
    const server = await served(pushEcho, { telemetry: otelTelemetry(), push: LOOPBACK })
    const params = { ...userMessage('hi'), configuration: { pushNotificationConfig: { url: receiver.url } } }
    await rpc(server.url, 'message/send', params)
    await expect.poll(() => receiver.delivered.at(-1)?.body.status.state).toBe('completed')
    await expect.poll(() => spans.named('POST').length).toBe(receiver.attempts.length)

    const refused = spans.named('POST').filter((span) => span.attributes['http.response.status_code'] === 500)
    expect(refused).toHaveLength(1)
    expect(refused[0]!.attributes['error.type']).toBe('500')
    expect(refused[0]!.status.code).toBe(SpanStatusCode.ERROR)
    const retried = spans.named('POST').filter((span) => span.attributes['http.request.resend_count'] === 1)
    expect(retried).toHaveLength(1)
    expect(retried[0]!.attributes['http.response.status_code']).toBe(200)

    expect(
      await meters.count('a2a.server.push.request.duration', { 'http.response.status_code': 500, 'error.type': '500' }),
    ).toBe(1)
    expect(await meters.count('a2a.server.push.deliveries', {})).toBe(receiver.delivered.length)
  })
})
