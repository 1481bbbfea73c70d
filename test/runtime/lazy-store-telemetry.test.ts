import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { otelTelemetry } from '../../runtime/src/entries/telemetry.ts'
import { rpc } from '../_rpc.ts'
import { echoAgent } from './_agents.ts'
import { userMessage } from './_messages.ts'
import { callerSpan, recordedSpans, served } from './_telemetry.ts'

// The store an app makes from A2A_STORE loads after the app is instrumented (stores/_lazy-store.ts): its calls are
// still the app's store calls, spans under the operation that made them.

const spans = recordedSpans()
const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

it('the file store named by A2A_STORE: its writes are spans under the send, as when it is passed made', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-lazy-store-telemetry-'))
  dirs.push(dir)
  const server = await served(echoAgent, { telemetry: otelTelemetry(), store: `file:${dir}` })
  const headers = { traceparent: callerSpan().traceparent }
  const task = (await rpc(server.url, 'message/send', userMessage('hi'), { headers })).body.result
  expect(task.status.state).toBe('completed')
  const send = await spans.one('SendMessage', { 'a2a.task.id': task.id })
  const creates = spans
    .named('file create')
    .filter((span) => span.parentSpanContext?.spanId === send.spanContext().spanId)
  expect(creates.map((span) => span.attributes['a2a.task.id'])).toEqual([task.id])
})
