import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { context, propagation, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { createFileStore } from 'a2a-runtime/file-store'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { connect } from '../../runtime/src/client/client.ts'
import { otelTelemetry } from '../../runtime/src/entries/telemetry.ts'
import { rpc } from '../_rpc.ts'
import { agent } from './_agents.ts'
import { captureLogger } from './_logger.ts'
import { userMessage } from './_messages.ts'
import { readEvents } from './_sse.ts'
import { served } from './_telemetry.ts'

// An SDK that throws (a span processor whose onStart or onEnd fails: the API calls them bare) never fails, repeats or
// changes what it records: the operation, its store calls, its task's events and a client's call answer as without
// telemetry, and the first failure is logged once.

let failing: 'start' | 'end' = 'end'
let provider: BasicTracerProvider | undefined
const broken: SpanProcessor = {
  onStart: () => {
    if (failing === 'start') throw new Error('exporter broke on start')
  },
  onEnd: () => {
    if (failing === 'end') throw new Error('exporter broke on end')
  },
  forceFlush: async () => {},
  shutdown: async () => {},
}
const dirs: string[] = []
beforeEach(() => {
  provider = new BasicTracerProvider({ spanProcessors: [broken] })
  trace.setGlobalTracerProvider(provider)
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
})
afterEach(async () => {
  trace.disable()
  context.disable()
  propagation.disable()
  await provider?.shutdown()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

let runs = 0
const countingAgent = agent((ctx, task) => {
  runs++
  task.artifact(`Echo: ${ctx.text}`)
  task.complete()
})

const warnings = (logger: ReturnType<typeof captureLogger>) =>
  logger.lines.filter((line) => line.level === 'warn' && line.message.startsWith('Telemetry failed'))

describe('an instrumentation that throws', () => {
  for (const where of ['start', 'end'] as const) {
    it(`(on ${where}) a send with the file store completes once, its task stored, and is logged once`, async () => {
      failing = where
      runs = 0
      const dir = mkdtempSync(join(tmpdir(), 'a2a-telemetry-guarded-'))
      dirs.push(dir)
      const logger = captureLogger()
      const server = await served(countingAgent, {
        telemetry: otelTelemetry(),
        store: createFileStore({ dir }),
        logger,
      })
      const sent = await rpc(server.url, 'message/send', userMessage('hi'))
      expect(sent.body.error).toBeUndefined()
      expect(sent.body.result.status.state).toBe('completed')
      const got = await rpc(server.url, 'tasks/get', { id: sent.body.result.id })
      expect(got.body.result.status.state).toBe('completed')
      await rpc(server.url, 'message/send', userMessage('again'))
      expect(runs).toBe(2)
      expect(warnings(logger)).toHaveLength(1)
    })
  }

  it('a stream sends every event and closes', async () => {
    failing = 'end'
    const logger = captureLogger()
    const server = await served(countingAgent, { telemetry: otelTelemetry(), logger })
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/stream', params: userMessage('hi') }),
    })
    const { events } = await readEvents(response)
    expect(JSON.stringify(events.at(-1))).toContain('completed')
    expect(warnings(logger)).toHaveLength(1)
  })

  it("a client's call answers what the agent answered", async () => {
    failing = 'end'
    const server = await served(countingAgent)
    const client = await connect({ agentCard: server.url, telemetry: otelTelemetry() })
    const result = await client.sendMessage({
      message: { role: 'ROLE_USER', parts: [{ text: 'hi' }], messageId: 'm1' },
    })
    expect(JSON.stringify(result)).toContain('Echo: hi')
  })
})
