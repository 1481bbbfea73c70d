import { type ChildProcess, execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, realpathSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type StandInLlm, startStandInLlm } from '../../generator/templates/llm/test/llm-stand-in.ts'
import { SLOW, startProject } from '../_served-project.ts'
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../fixtures/otlp-receiver.ts'
import { installScripts } from './_install-scripts.ts'

/**
 * A project generated with --telemetry, installed and served as its README says, exporting to an OTLP/HTTP
 * receiver on 127.0.0.1: the A2A request's SERVER span in the caller's trace, the AI SDK's spans under it, the
 * runtime's metrics and log records, each signal over http/json, and nothing at all without the OTEL_* variables. The ai-sdk template: its framework
 * emits spans, on the stand-in model server its own tests use.
 */

const bin = fileURLToPath(new URL('../../generator/bin/create-a2a-agent.mjs', import.meta.url))
const exec = promisify(execFile)
const INSTALL_TIMEOUT = 180_000
const PACKAGE = 'traced-agent'

let workspace: string
let project: string
let llm: StandInLlm
let receiver: OtlpReceiver
const running = new Set<ChildProcess>()

beforeAll(async () => {
  workspace = mkdtempSync(join(realpathSync(tmpdir()), 'create-a2a-agent-telemetry-'))
  llm = await startStandInLlm()
  receiver = await startOtlpReceiver()
  const { stdout } = await exec(
    process.execPath,
    [bin, PACKAGE, '--pm', 'npm', '--no-git', '--json', '--yes', '--template', 'ai-sdk', '--telemetry'],
    {
      cwd: workspace,
      timeout: INSTALL_TIMEOUT,
      env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
    },
  )
  const summary = JSON.parse(stdout.trim().split('\n').at(-1)!)
  expect(summary.installed).toBe(true)
  project = summary.dir
}, INSTALL_TIMEOUT + 60_000)

afterAll(async () => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL')
  await Promise.all([llm?.close(), receiver?.close()])
  await rm(workspace, { recursive: true, force: true, maxRetries: 3 })
}, 600_000)

/** The model's settings, and the OTEL_* variables a person sets to export to the receiver. */
const modelEnv = () => ({ OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: llm.apiKey })
const otelEnv = (extra: Record<string, string> = {}) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  ...extra,
})

/** A2A v1.0 SendStreamingMessage over JSON-RPC, carrying the caller's trace; resolves with the events read. */
async function sendStreaming(url: string, text: string, traceparent: string): Promise<any[]> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', traceparent },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendStreamingMessage',
      params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text }] } },
    }),
  })
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
  const body = await response.text()
  return body
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice(5)).result)
}

/** The chain of parents of a span within what was received, nearest first. */
function ancestors(span: ReceivedSpan, spans: ReceivedSpan[]): ReceivedSpan[] {
  const chain: ReceivedSpan[] = []
  for (let parent = spans.find((s) => s.spanId === span.parentSpanId); parent; ) {
    chain.push(parent)
    const next = parent.parentSpanId
    parent = spans.find((s) => s.spanId === next)
  }
  return chain
}

const hex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex')

/** A key the stand-in model refuses (401), and words a message says that no record may repeat. */
const WRONG_KEY = 'not-the-stand-in-key'
const PRIVATE_TEXT = 'words only the caller and the model may read'

/** The first data point received of the metric `name` whose attributes include `attributes`. */
const metricPoint = (name: string, attributes: Record<string, unknown>) =>
  receiver.metrics
    .filter((metric) => metric.name === name)
    .flatMap((metric) => metric.points)
    .find((point) => Object.entries(attributes).every(([key, value]) => point[key] === value))

describe('a project generated with --telemetry', { timeout: 300_000 }, () => {
  it('installs OpenTelemetry without an install script, and its own typecheck and tests pass without the OTEL_* variables', async () => {
    expect(installScripts(join(project, 'node_modules'))).toEqual([])
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'))
    expect(Object.keys(manifest.dependencies)).toEqual(
      expect.arrayContaining(['@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-proto']),
    )
    expect(readFileSync(join(project, 'src/agent.ts'), 'utf8')).toMatch(/^(\/\/[^\n]*\n)*import '\.\/telemetry\.ts'\n/)
    const env = { ...process.env }
    for (const name of Object.keys(env)) if (name.startsWith('OTEL_')) delete env[name]
    await exec('npm', ['run', 'typecheck'], { cwd: project, env, timeout: INSTALL_TIMEOUT })
    await exec('npm', ['test'], { cwd: project, env, timeout: INSTALL_TIMEOUT })
  })

  it('exports, for one SendStreamingMessage carrying a traceparent, its SERVER span in that trace with the A2A attributes and the model call under it, flushed on SIGTERM', async () => {
    const traceId = hex(16)
    const callerSpanId = hex(8)
    // Nothing is exported on a timer in this run (delays of 10 min): what arrives was flushed by the shutdown.
    const server = await startProject(project, running, {
      ...modelEnv(),
      ...otelEnv({ OTEL_BSP_SCHEDULE_DELAY: '600000', OTEL_METRIC_EXPORT_INTERVAL: '600000' }),
    })
    const events = await sendStreaming(server.url, 'ping', `00-${traceId}-${callerSpanId}-01`)
    const final = events.at(-1)
    expect(final.statusUpdate?.status.state ?? final.task?.status.state).toBe('TASK_STATE_COMPLETED')
    const taskId = events.find((event) => event.task)?.task.id
    const contextId = events.find((event) => event.task)?.task.contextId
    expect(taskId).toEqual(expect.any(String))
    expect(await server.stop()).toBe(true)

    await expect.poll(() => receiver.spans.filter((span) => span.traceId === traceId).length).toBeGreaterThan(1)
    const inTrace = receiver.spans.filter((span) => span.traceId === traceId)
    const serverSpan = inTrace.find((span) => span.name === 'SendStreamingMessage')!
    expect(serverSpan).toBeDefined()
    expect(serverSpan.kind).toBe(2)
    expect(serverSpan.parentSpanId).toBe(callerSpanId)
    expect(serverSpan.attributes).toMatchObject({
      'a2a.method.name': 'SendStreamingMessage',
      'a2a.task.id': taskId,
      'a2a.task.state': 'TASK_STATE_COMPLETED',
      'gen_ai.conversation.id': contextId,
    })
    // The service is the project's name (no OTEL_SERVICE_NAME set).
    expect(serverSpan.resource['service.name']).toBe(PACKAGE)
    // The AI SDK's spans sit under the A2A span: the agent's run, a child of it, and the model call (a CLIENT span).
    const agentSpans = inTrace.filter((span) => span !== serverSpan)
    for (const span of agentSpans) expect(ancestors(span, inTrace)).toContain(serverSpan)
    const run = agentSpans.find((span) => span.attributes['gen_ai.operation.name'] === 'invoke_agent')
    expect(run?.parentSpanId).toBe(serverSpan.spanId)
    const modelCall = agentSpans.find((span) => span.attributes['gen_ai.operation.name'] === 'chat')
    expect(modelCall?.kind).toBe(3)
    expect(ancestors(modelCall!, inTrace)).toContain(run)
    // Metrics went out by the same flush: the runtime's request and task durations, the AI SDK's model-call one.
    // Polled: the metrics go out in a request of their own, beside the spans'. The message lists what came, for a miss.
    const seen = () => JSON.stringify(receiver.metrics.map(({ name, points }) => ({ name, points })))
    await expect
      .poll(() => metricPoint('a2a.server.request.duration', { 'a2a.method.name': 'SendStreamingMessage' }), {
        message: `request durations received: ${seen()}`,
      })
      .toMatchObject({ 'a2a.protocol.binding': 'JSONRPC', 'a2a.protocol.version': '1.0' })
    expect(metricPoint('a2a.server.task.duration', { 'a2a.task.state': 'TASK_STATE_COMPLETED' })).toBeDefined()
    expect(receiver.metrics.find((metric) => metric.name === 'a2a.server.task.duration')).toMatchObject({
      unit: 's',
      scope: 'a2a-runtime',
      resource: { 'service.name': PACKAGE },
    })
    expect(receiver.metrics.map((metric) => metric.name)).toContain('gen_ai.client.inference.duration')
    // Prompts and answers stay out of every span's attributes (content capture is off).
    for (const span of inTrace) expect(JSON.stringify(span.attributes)).not.toContain('You said')
    expect(receiver.refused).toEqual([])
  })

  it('exports the runtime’s log lines as records: a failed model call’s error in the caller’s trace, the request line with its fields', async () => {
    const traceId = hex(16)
    // The stand-in model refuses this key: the AI SDK's call fails, and the runtime logs it while the task runs.
    const server = await startProject(project, running, {
      ...modelEnv(),
      OPENAI_API_KEY: WRONG_KEY,
      A2A_REQUEST_LOG: 'info',
      ...otelEnv(),
    })
    const events = await sendStreaming(server.url, PRIVATE_TEXT, `00-${traceId}-${hex(8)}-01`)
    const final = events.at(-1)
    expect(final.statusUpdate?.status.state ?? final.task?.status.state).toBe('TASK_STATE_FAILED')
    const taskId = events.find((event) => event.task)?.task.id
    expect(taskId).toEqual(expect.any(String))
    expect(await server.stop()).toBe(true)

    const failure = () => receiver.logs.find((record) => record.attributes['a2a.task.id'] === taskId)
    await expect.poll(failure).toBeDefined()
    const serverSpan = receiver.spans.find((span) => span.traceId === traceId && span.name === 'SendStreamingMessage')
    expect(failure()).toMatchObject({
      body: `AI SDK: the run of task ${taskId} failed; the task is failed`,
      severityNumber: 17,
      severityText: 'error',
      // Written while the agent ran, in the A2A span's context.
      traceId,
      spanId: serverSpan?.spanId,
      attributes: { 'exception.type': expect.stringMatching(/APICallError/), 'exception.message': 'bad key' },
      resource: { 'service.name': PACKAGE },
      scope: 'a2a-runtime',
    })
    // The request line (A2A_REQUEST_LOG=info), its fields under HTTP's names.
    expect(receiver.logs.find((record) => record.attributes['http.route'] === '/')).toMatchObject({
      body: expect.stringMatching(/^POST \/ 200 \d+\.\d ms$/),
      severityText: 'info',
      attributes: { 'http.request.method': 'POST', 'http.response.status_code': 200 },
    })
    // Neither the key nor what the message said is in any record.
    expect(JSON.stringify(receiver.logs)).not.toContain(WRONG_KEY)
    expect(JSON.stringify(receiver.logs)).not.toContain(PRIVATE_TEXT)
    expect(receiver.refused).toEqual([])
  })

  it('without the OTEL_* variables loads no OpenTelemetry SDK, registers nothing and leaves A2A_TELEMETRY unset; with one, registers the three signals', async () => {
    // The agent module loaded as `a2a start` loads it (jiti), then what the process holds.
    const probe = `
      const { createJiti } = require('jiti')
      const jiti = createJiti(require('node:url').pathToFileURL(process.cwd() + '/').href)
      jiti.import(require('node:path').resolve('src/agent.ts')).then(() => {
        const api = globalThis[Symbol.for('opentelemetry.js.api.1')] ?? {}
        const sdk = Object.keys(require.cache).filter((file) => /@opentelemetry[\\\\/]sdk-/.test(file))
        console.log(JSON.stringify({
          registered: Object.keys(api).filter((key) => key !== 'version').sort(),
          sdkModules: sdk.length,
          telemetry: process.env.A2A_TELEMETRY ?? null,
        }))
      })`
    const env = { ...process.env }
    for (const name of Object.keys(env)) if (name.startsWith('OTEL_') || name === 'A2A_TELEMETRY') delete env[name]
    const run = async (extra: Record<string, string>) =>
      JSON.parse((await exec('node', ['-e', probe], { cwd: project, env: { ...env, ...extra }, timeout: SLOW })).stdout)
    expect(await run({})).toEqual({ registered: [], sdkModules: 0, telemetry: null })
    const on = await run(otelEnv())
    expect(on.registered).toEqual(expect.arrayContaining(['context', 'metrics', 'propagation', 'trace']))
    expect(on.sdkModules).toBeGreaterThan(0)
    expect(on.telemetry).toBe('otel')
  })

  it('refuses OTLP over gRPC at start in one line naming the variable', async () => {
    const failed = await exec('npx', ['a2a', 'start'], {
      cwd: project,
      env: { ...process.env, PORT: '0', ...otelEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }) },
      timeout: SLOW,
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    )
    expect(failed.code).toBe(1)
    expect(failed.stderr).toContain('OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (got "grpc")')
    expect(failed.stderr).not.toMatch(/^\s+at /m)
  })
})
