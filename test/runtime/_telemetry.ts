import { context, propagation, type SpanContext, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import { type Agent, type ServeOptions, serveAgent } from 'a2a-runtime'
import { afterEach, beforeEach, expect } from 'vitest'
import { captureLogger } from './_logger.ts'

/**
 * An OpenTelemetry SDK as an app registers one (a tracer provider exporting to memory, the AsyncLocalStorage context
 * manager, W3C trace context and baggage), registered for each test and unregistered after it.
 */
export function recordedSpans() {
  let exporter = new InMemorySpanExporter()
  let provider: BasicTracerProvider | undefined
  beforeEach(() => {
    // A provider's shutdown stops its exporter for good: each test has its own.
    exporter = new InMemorySpanExporter()
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    trace.setGlobalTracerProvider(provider)
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    propagation.setGlobalPropagator(
      new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
    )
  })
  afterEach(async () => {
    trace.disable()
    context.disable()
    propagation.disable()
    await provider?.shutdown()
  })
  const all = () => exporter.getFinishedSpans()
  return {
    all,
    /** The ended spans named `name`. */
    named: (name: string) => all().filter((span) => span.name === name),
    /** The one ended span named `name` whose attributes include `attributes`, once it has ended. */
    async one(name: string, attributes: Record<string, unknown> = {}): Promise<ReadableSpan> {
      const matching = () =>
        all().filter(
          (span) =>
            span.name === name && Object.entries(attributes).every(([key, value]) => span.attributes[key] === value),
        )
      await expect.poll(() => matching().length, { message: `a span ${name} ${JSON.stringify(attributes)}` }).toBe(1)
      return matching()[0]!
    },
  }
}

const hex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex')

/** A caller's span context, as another process would send it in `traceparent`. */
export function callerSpan(): SpanContext & { traceparent: string } {
  const traceId = hex(16)
  const spanId = hex(8)
  return { traceId, spanId, traceFlags: 1, traceparent: `00-${traceId}-${spanId}-01` }
}

/** `serveAgent` on 127.0.0.1 with a free port, closed after the test. */
export async function served(agent: Agent, options: ServeOptions = {}) {
  const server = await serveAgent(agent, {
    logger: captureLogger(),
    ...options,
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
  })
  closers.push(() => server.close())
  return server
}

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()))
})
