import { describe, expect, it } from 'vitest'
import { fetchTransport } from '../../runtime/src/push/_webhook-transport.ts'
import { startReceiver } from './_webhook.ts'

// The transport push delivery uses on Cloudflare Workers (fetch), run here on Node's fetch against a receiver on
// 127.0.0.1: what it reports for each kind of answer decides whether the notification is retried. (On workerd it
// is exercised end to end by test/cross-runtime/behaviour.test.ts.)

const post = (url: string, timeoutMs = 10_000) =>
  fetchTransport().post(
    new URL(url),
    { 'content-type': 'application/json', 'x-a2a-notification-token': 't' },
    '{"kind":"task"}',
    timeoutMs,
  )

describe('the fetch webhook transport', () => {
  it('delivers with the headers and body given, on a 2xx', async () => {
    const receiver = await startReceiver(() => 204)
    expect(await post(receiver.url)).toEqual({ delivered: true, status: 204 })
    expect(receiver.delivered[0]).toMatchObject({
      raw: '{"kind":"task"}',
      headers: { 'x-a2a-notification-token': 't', 'content-type': 'application/json' },
    })
  })

  it('does not follow a redirect, and does not retry it', async () => {
    const receiver = await startReceiver(() => 302)
    expect(await post(receiver.url)).toEqual({
      delivered: false,
      retry: false,
      reason: 'HTTP 302 (redirects are not followed)',
      status: 302,
    })
    expect(receiver.attempts).toHaveLength(1)
  })

  it('retries a 5xx, a 429 and a 408, not a 4xx', async () => {
    for (const [status, retry] of [
      [503, true],
      [429, true],
      [408, true],
      [404, false],
    ] as const) {
      const receiver = await startReceiver(() => status)
      expect(await post(receiver.url)).toEqual({ delivered: false, retry, reason: `HTTP ${status}`, status })
    }
  })

  it('gives up on a receiver that never answers after the timeout, to retry later', async () => {
    const receiver = await startReceiver(() => 'hang')
    expect(await post(receiver.url, 200)).toEqual({
      delivered: false,
      retry: true,
      reason: 'no complete answer within 200 ms',
      error: 'timeout',
    })
  })

  it('reports an unreachable receiver, to retry later', async () => {
    const receiver = await startReceiver()
    const closedPort = new URL(receiver.url)
    closedPort.port = '1'
    const outcome = await post(closedPort.href)
    expect(outcome).toMatchObject({ delivered: false, retry: true })
  })
})
