import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

// The runtime's build bundles its JavaScript (runtime/scripts/bundle.mjs): the entry files keep their paths and
// the modules move into chunks. What users import must not change with it, and a module that finds the package's
// own files must find them from whatever chunk it landed in. Run on the built package (after `npm run build`).

const runtimeDir = fileURLToPath(new URL('../../runtime/', import.meta.url))
const manifest = JSON.parse(readFileSync(`${runtimeDir}package.json`, 'utf8')) as {
  version: string
  exports: Record<string, { default: string }>
}

/** Runs an ES module's source in a Node process from the repository's root; resolves with what it prints. */
function runModule(source: string): string {
  return execFileSync(process.execPath, ['--input-type=module', '-e', source], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  })
}

const builtUrl = (target: string) => pathToFileURL(`${runtimeDir}${target.replace('./', '')}`).href

describe('the bundled a2a-runtime', () => {
  it('exports from each subpath exactly the names its source exports', async () => {
    const built = JSON.parse(
      runModule(`
        const entries = ${JSON.stringify(Object.entries(manifest.exports).map(([path, { default: file }]) => [path, builtUrl(file)]))}
        const names = {}
        for (const [path, url] of entries) names[path] = Object.keys(await import(url)).sort()
        console.log(JSON.stringify(names))
      `),
    ) as Record<string, string[]>
    for (const subpath of Object.keys(manifest.exports)) {
      const source = await import(/* @vite-ignore */ `a2a-runtime${subpath.slice(1)}`)
      expect(built[subpath], subpath).toEqual(Object.keys(source).sort())
    }
  }, 60_000)

  it("finds its package.json from a chunk: the spans' instrumentation scope carries the runtime's version", () => {
    const scope = JSON.parse(
      runModule(`
        import { trace } from '@opentelemetry/api'
        import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
        const exporter = new InMemorySpanExporter()
        trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))
        const { createA2AApp, defineAgent } = await import(${JSON.stringify(builtUrl(manifest.exports['.']!.default))})
        const { otelTelemetry } = await import(${JSON.stringify(builtUrl(manifest.exports['./telemetry']!.default))})
        const agent = defineAgent({
          card: { name: 'Scope', description: 'Echoes' },
          execute(ctx, task) { task.artifact(ctx.text); task.complete() },
        })
        const app = createA2AApp(agent, { env: {}, telemetry: otelTelemetry() })
        const body = { jsonrpc: '2.0', id: 1, method: 'message/send',
          params: { message: { role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hi' }] } } }
        const response = await app.fetch(new Request('http://127.0.0.1/', {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }))
        await response.text()
        console.log(JSON.stringify(exporter.getFinishedSpans().map((span) => span.instrumentationScope)))
      `),
    ) as Array<{ name: string; version?: string }>
    expect(scope.length).toBeGreaterThan(0)
    expect(scope[0]).toEqual({ name: 'a2a-runtime', version: manifest.version })
  }, 60_000)
})
