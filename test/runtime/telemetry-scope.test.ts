import * as api from '@opentelemetry/api'
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base'
import { afterEach, describe, expect, it, vi } from 'vitest'

// The instrumentation scope the runtime records under (`a2a-runtime` and its version): the version is read from the
// runtime's package.json once, when an SDK first asks for the scope, never when the runtime is imported.

const fs = process.getBuiltinModule('node:fs')
const packageReads = (read: { mock: { calls: unknown[][] } }) =>
  read.mock.calls.filter(([file]) => String(file).endsWith('/package.json')).length

afterEach(() => {
  vi.restoreAllMocks()
  api.trace.disable()
})

describe('the instrumentation scope', () => {
  it("reads the runtime's version lazily, once, not when the runtime's telemetry modules are imported", async () => {
    const read = vi.spyOn(fs, 'readFileSync')
    vi.resetModules()
    const { RegisteredTracer, SCOPE_NAME } = await import('../../runtime/src/telemetry/_registered-tracer.ts')
    await import('../../runtime/src/telemetry/_logs-otel.ts')
    await import('../../runtime/src/entries/telemetry.ts')
    expect(packageReads(read)).toBe(0)

    const provider = new BasicTracerProvider()
    api.trace.setGlobalTracerProvider(provider)
    const tracer = new RegisteredTracer(api).now()
    new RegisteredTracer(api).now()
    expect(packageReads(read)).toBe(1)
    const span = tracer!.startSpan('probe') as unknown as { instrumentationScope: { name: string; version?: string } }
    const { version } = JSON.parse(fs.readFileSync(new URL('../../runtime/package.json', import.meta.url), 'utf8'))
    expect(span.instrumentationScope).toEqual({ name: SCOPE_NAME, version, schemaUrl: undefined })
  })
})
