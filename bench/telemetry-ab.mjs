// What telemetry costs the hot path, on one build inside one process (the method of fetch-ab.mjs): the echo agent
// (servers/_echo-agent.mjs) on two apps of the same createA2AApp, A without telemetry and B with
// `telemetry: otelTelemetry()`, requests handed to app.fetch in short blocks that alternate between them, the order
// swapped every block, the CPU time of each block (process.cpuUsage) paired with the other app's block next to it.
//
// Two cases, in this order (an SDK, once registered, stays for the rest of the process), and a control:
//   same  (only when asked: --case same) B is a second app without telemetry: how far two identical apps read apart.
//   none  no OpenTelemetry SDK registered: B's instrumentation finds the API's no-op providers.
//   sdk   an SDK as a deployment registers one, exporting nowhere: a BasicTracerProvider with a BatchSpanProcessor
//         over an exporter that drops every span, the AsyncLocalStorage context manager, W3C trace context and
//         baggage, and a MeterProvider with a periodic reader every 60 s (the SDK's default) over an exporter that
//         drops what it is given. On Node 20 an enabled AsyncLocalStorage puts a hook on every promise of the
//         process, A's too: during A's blocks the context manager's storage is disabled (as in a process without
//         telemetry, where nothing enables it), and B's first `context.with` enables it again. `--shared-context`
//         leaves it on for A as well: B−A is then the instrumentation and the SDK alone, without the hook.
// Workloads: message/send, message/stream (read to the end) and GetTask (tasks/get of one task created before the
// blocks) in the platform's JSON-RPC, and SendMessage in A2A v1.0 (JSON-RPC, A2A-Version: 1.0); `concurrency`
// requests in flight; every answer's body checked. After the sdk case, B's spans and its request-duration metric
// must have reached the exporters: one span per request B answered (A answers with none).
//
// node bench/telemetry-ab.mjs [--runtime <runtime/dist/index.js>] [--case same|none|sdk]… [--blocks 1000]
//   [--requests 100] [--concurrency 16] [--only <name part>]… [--shared-context] [--smoke] [--json]
//   [--side A|B] [--floor]
// --floor: the SDK alone, without the runtime: what one echo send records (its span, attributes, three events, two
// histogram points) in a loop through the same SDK, best of 7 runs of 200,000, then exits.
// --side A|B drives that app alone through the same blocks (no ratios): for `node --cpu-prof`, to see where B's
// extra time goes. --smoke: a few blocks of each, in seconds. --json: the results as one JSON line at the end.
// Pin it: `taskset -c 0 node bench/telemetry-ab.mjs`.
import { existsSync, readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { geomeanInterval, median } from './_stats.mjs'
import { platform, v1 } from './_targets.mjs'
import { echoDefinition, silentLogger } from './servers/_echo-agent.mjs'

const { values } = parseArgs({
  options: {
    runtime: { type: 'string', default: new URL('../runtime/dist/index.js', import.meta.url).pathname },
    case: { type: 'string', multiple: true },
    blocks: { type: 'string' },
    requests: { type: 'string' },
    concurrency: { type: 'string', default: '16' },
    only: { type: 'string', multiple: true },
    'shared-context': { type: 'boolean', default: false },
    side: { type: 'string' },
    smoke: { type: 'boolean', default: false },
    floor: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
})
const CASES = ['same', 'none', 'sdk']
/** Issue 37's budgets: B/A under these (`same` has none: it says how far two identical apps read apart). */
const BUDGETS = { none: 1.02, sdk: 1.1 }
const cases = CASES.filter((name) => (values.case ?? ['none', 'sdk']).includes(name))
for (const name of values.case ?? []) if (!CASES.includes(name)) fail(`--case must be same, none or sdk, got ${name}`)
if (values.side !== undefined && !['A', 'B'].includes(values.side)) fail(`--side must be A or B, got ${values.side}`)
const blocks = positive('blocks', values.blocks ?? (values.smoke ? '10' : '1000'))
const perBlock = positive('requests', values.requests ?? (values.smoke ? '20' : '100'))
const concurrency = positive('concurrency', values.concurrency)
// Not counted: the JIT warms, and the store fills to its retention limit (10,000 tasks), where it then stays.
const warmup = values.smoke ? 200 : 12_000

function positive(name, text) {
  const value = Number(text)
  if (!Number.isInteger(value) || value < 1) fail(`--${name} must be a whole number, 1 or more, got ${text}`)
  return value
}

function fail(line) {
  console.error(line)
  process.exit(2)
}

const entry = resolve(values.runtime)
const telemetryEntry = new URL('./entries/telemetry.js', pathToFileURL(entry))
if (!existsSync(entry) || !existsSync(telemetryEntry))
  fail(`--runtime: no built runtime with a2a-runtime/telemetry at ${entry} (npm run build --workspace a2a-runtime)`)
const { createA2AApp, defineAgent } = await import(pathToFileURL(entry).href)
const { otelTelemetry } = await import(telemetryEntry.href)

const apps = {
  A: createA2AApp(defineAgent(echoDefinition), { logger: silentLogger }),
  B: createA2AApp(defineAgent(echoDefinition), { logger: silentLogger, telemetry: otelTelemetry() }),
  /** B of the `same` case: a second app without telemetry. */
  control: createA2AApp(defineAgent(echoDefinition), { logger: silentLogger }),
}

const contains = (expected) => (body) => expected.every((part) => body.includes(part))
const request = (shape) => () => new Request('http://127.0.0.1/', { method: 'POST', ...shape })
const allWorkloads = [
  { name: 'message/send', request: () => request(platform.send), check: contains(platform.sendExpect) },
  {
    name: 'message/stream',
    request: () => request(platform.stream),
    check: contains([platform.streamExpect.text, platform.streamExpect.final, '"final":true']),
  },
  {
    name: 'GetTask',
    // The task is created before the blocks: it stays the newest, so retention keeps it.
    request: async (app) => {
      answered.set(app, answered.get(app) + 1)
      const answer = await (await app.fetch(request(platform.send)())).json()
      if (!answer.result?.id) throw new Error(`GetTask: the task to read was not created: ${JSON.stringify(answer)}`)
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: answer.result.id } })
      return request({ headers: platform.send.headers, body })
    },
    check: contains(platform.sendExpect),
  },
  { name: 'SendMessage (v1.0)', request: () => request(v1.send), check: contains(v1.sendExpect) },
]
const workloads = values.only
  ? allWorkloads.filter((workload) => values.only.some((part) => workload.name.includes(part)))
  : allWorkloads
if (!workloads.length) fail(`--only matches no workload (${allWorkloads.map((w) => w.name).join(', ')})`)

/** Requests each app answered (the GetTask's task included), to hold the spans exported to B's. */
const answered = new Map(Object.values(apps).map((app) => [app, 0]))

/** `count` requests, `concurrency` at a time; a wrong answer ends the run. */
async function drive(app, makeRequest, check, count) {
  answered.set(app, answered.get(app) + count)
  let next = 0
  const worker = async () => {
    while (next++ < count) {
      const response = await app.fetch(makeRequest())
      const body = await response.text()
      if (response.status !== 200 || !check(body)) throw new Error(`HTTP ${response.status}: ${body.slice(0, 300)}`)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
}

const cpuMicros = () => {
  const { user, system } = process.cpuUsage()
  return user + system
}
const geomean = (list) => Math.exp(list.reduce((sum, value) => sum + Math.log(value), 0) / list.length)

/** Busy ticks of all CPUs (/proc/stat), to tell what other processes took while a workload ran. */
function busySeconds() {
  if (!existsSync('/proc/stat')) return NaN
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  return (fields.slice(0, 8).reduce((a, b) => a + b, 0) - fields[3] - (fields[4] ?? 0)) / 100
}

/**
 * The SDK of the sdk case, registered globally as an app's telemetry setup does, with exporters that count what
 * they are given and drop it. `spans` and `metrics` say what reached them.
 */
async function registerSdk() {
  const api = await import('@opentelemetry/api')
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks')
  const { CompositePropagator, ExportResultCode, W3CBaggagePropagator, W3CTraceContextPropagator } = await import(
    '@opentelemetry/core'
  )
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base')
  const { AggregationTemporality, MeterProvider, PeriodicExportingMetricReader } = await import(
    '@opentelemetry/sdk-metrics'
  )
  const received = { spans: 0, spanNames: new Set(), metricNames: new Set() }
  const success = { code: ExportResultCode.SUCCESS }
  const spanExporter = {
    export(spans, done) {
      received.spans += spans.length
      for (const span of spans) received.spanNames.add(span.name)
      done(success)
    },
    shutdown: async () => {},
    forceFlush: async () => {},
  }
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(spanExporter)] })
  api.trace.setGlobalTracerProvider(tracerProvider)
  const contextManager = new AsyncLocalStorageContextManager().enable()
  api.context.setGlobalContextManager(contextManager)
  api.propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  )
  const metricExporter = {
    export(resourceMetrics, done) {
      for (const scope of resourceMetrics.scopeMetrics)
        for (const metric of scope.metrics)
          if (metric.dataPoints.length) received.metricNames.add(metric.descriptor.name)
      done(success)
    },
    selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
    shutdown: async () => {},
    forceFlush: async () => {},
  }
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 60_000 })
  api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))
  return {
    received,
    /** A's blocks run without the promise hook an enabled AsyncLocalStorage puts on the process (Node 20). */
    contextOff: () => contextManager.disable(),
    async flush() {
      await tracerProvider.forceFlush()
      await reader.forceFlush()
    },
  }
}

const TITLES = {
  same: 'Control: B is a second app without telemetry',
  none: 'Case 1: no OpenTelemetry SDK registered',
  sdk: 'Case 2: an SDK registered, exporting nowhere',
}

/** A row's line: the medians, the paired ratio with its interval, the budget's verdict, the machine's other load. */
function describe(row, budget) {
  const verdict = budget
    ? `${row.geomean < budget ? 'within' : 'OVER'} the budget (< ${Math.round((budget - 1) * 100)}%); `
    : ''
  return (
    `  ${row.workload}: CPU µs per request A ${row.AMedianMicros.toFixed(2)}, B ${row.BMedianMicros.toFixed(2)} ` +
    `(medians); B/A geometric mean ${row.geomean.toFixed(4)} (95% interval ${row.low.toFixed(4)}–` +
    `${row.high.toFixed(4)}), median ${row.medianRatio.toFixed(4)}; B−A median ${row.deltaMicros.toFixed(2)} µs; ` +
    `${verdict}other processes ${row.otherCores.toFixed(2)} cores`
  )
}

/**
 * The SDK's own cost of what the runtime records for one echo send, with no runtime around it: a SERVER span with the
 * same start attributes, the context set as an operation sets it, three attributes set later, three lifecycle events,
 * ended into the batch processor; the two histogram points. Yields every 100 sends so that the batch processor exports
 * (a loop that never yields would fill its queue and drop the rest, which costs less).
 */
async function sdkFloor() {
  await registerSdk()
  const api = await import('@opentelemetry/api')
  const tracer = api.trace.getTracer('a2a-runtime')
  const meter = api.metrics.getMeter('a2a-runtime')
  const requestDuration = meter.createHistogram('a2a.server.request.duration')
  const taskDuration = meter.createHistogram('a2a.server.task.duration')
  const operationKey = api.createContextKey('operation')
  const card = { 'gen_ai.agent.name': 'Echo', 'gen_ai.agent.description': 'Echoes', 'gen_ai.agent.version': '1.0.0' }
  const send = (i) => {
    const attributes = { 'a2a.method.name': 'SendMessage', ...card, 'a2a.message.id': 'bench-message' }
    const span = tracer.startSpan('SendMessage', { kind: api.SpanKind.SERVER, attributes }, api.ROOT_CONTEXT)
    api.trace.setSpan(api.ROOT_CONTEXT, span).setValue(operationKey, i)
    span.setAttribute('a2a.task.id', `task-${i}`)
    span.setAttribute('gen_ai.conversation.id', `context-${i}`)
    span.addEvent('a2a.task.status_update', { 'a2a.task.state': 'TASK_STATE_WORKING', 'a2a.event.final': false })
    span.addEvent('a2a.task.artifact_update', {
      'a2a.artifact.id': 'a',
      'a2a.artifact.append': false,
      'a2a.artifact.last_chunk': true,
    })
    span.addEvent('a2a.task.status_update', { 'a2a.task.state': 'TASK_STATE_COMPLETED', 'a2a.event.final': true })
    span.setAttribute('a2a.task.state', 'TASK_STATE_COMPLETED')
    span.end()
    requestDuration.record(0.0001, { 'a2a.method.name': 'SendMessage', 'a2a.protocol.binding': 'JSONRPC' })
    taskDuration.record(0.0001, { 'a2a.task.state': 'TASK_STATE_COMPLETED' })
  }
  const sends = values.smoke ? 2_000 : 200_000
  const run = async () => {
    const before = cpuMicros()
    for (let i = 0; i < sends; i++) {
      send(i)
      if (i % 100 === 99) await new Promise(setImmediate)
    }
    return (cpuMicros() - before) / sends
  }
  await run()
  const runs = []
  for (let round = 0; round < 7; round++) runs.push(await run())
  console.log(`the SDK alone: ${Math.min(...runs).toFixed(2)} µs of CPU per send (best of 7 runs of ${sends})`)
}
if (values.floor) {
  await sdkFloor()
  process.exit(0)
}

const began = Date.now()
const results = { runtime: entry, node: process.version, blocks, perBlock, concurrency, loadavgBefore: loadavg()[0] }
results.cases = {}
const problems = []
console.log(`runtime ${entry}\nA: no telemetry; B: telemetry: otelTelemetry()`)
console.log(
  `${blocks} blocks of ${perBlock} requests per app, ${concurrency} at a time; load average ${loadavg()[0]}\n`,
)
let sdk
for (const caseName of cases) {
  if (caseName === 'sdk') {
    sdk = await registerSdk()
    for (const app of answered.keys()) answered.set(app, 0)
  }
  const contextOff = caseName === 'sdk' && !values['shared-context'] ? sdk.contextOff : () => {}
  const sides = values.side ? [values.side] : ['A', 'B']
  const pair = { A: apps.A, B: caseName === 'same' ? apps.control : apps.B }
  const rows = []
  console.log(
    TITLES[caseName] + (caseName === 'sdk' && values['shared-context'] ? ' (context storage on for A too)' : ''),
  )
  for (const workload of workloads) {
    const requests = {}
    for (const name of sides) {
      requests[name] = await workload.request(pair[name])
      if (name === 'A') contextOff()
      await drive(pair[name], requests[name], workload.check, warmup)
    }
    const cost = { A: [], B: [] }
    const busyBefore = busySeconds()
    const ownBefore = cpuMicros()
    const wallBefore = performance.now()
    for (let block = 0; block < blocks; block++) {
      for (const name of block % 2 ? [...sides].reverse() : sides) {
        if (name === 'A') contextOff()
        const before = cpuMicros()
        await drive(pair[name], requests[name], workload.check, perBlock)
        cost[name].push((cpuMicros() - before) / perBlock)
      }
    }
    const seconds = (performance.now() - wallBefore) / 1000
    // What the rest of the machine took meanwhile, in cores: all CPUs' busy time less this process's.
    const otherCores = (busySeconds() - busyBefore - (cpuMicros() - ownBefore) / 1e6) / seconds
    const row = { workload: workload.name, otherCores: Math.max(0, otherCores), seconds }
    for (const name of sides) row[`${name}MedianMicros`] = median(cost[name])
    if (sides.length === 2) {
      const ratios = cost.B.map((b, i) => b / cost.A[i])
      const [low, high] = geomeanInterval(ratios)
      Object.assign(row, {
        geomean: geomean(ratios),
        low,
        high,
        medianRatio: median(ratios),
        deltaMicros: median(cost.B.map((b, i) => b - cost.A[i])),
      })
      console.log(describe(row, BUDGETS[caseName]))
    } else {
      const name = sides[0]
      console.log(`  ${workload.name}: ${name} alone, CPU µs per request ${row[`${name}MedianMicros`].toFixed(2)}`)
    }
    rows.push(row)
  }
  results.cases[caseName] = rows
  if (caseName === 'sdk' && sides.includes('B')) {
    await sdk.flush()
    const { received } = sdk
    results.exported = {
      requestsOfB: answered.get(apps.B),
      spans: received.spans,
      spanNames: [...received.spanNames],
      metrics: [...received.metricNames],
    }
    const { requestsOfB, spans, spanNames, metrics } = results.exported
    console.log(`  exported (and dropped): ${spans} spans for ${requestsOfB} requests of B (${spanNames.join(', ')})`)
    console.log(`  metrics: ${metrics.join(', ')}`)
    // One SERVER span per request B answered, none for A's (the batch processor drops none at this pace).
    if (spans !== requestsOfB)
      problems.push(`the sdk case exported ${spans} spans for the ${requestsOfB} requests of B`)
    if (!received.metricNames.has('a2a.server.request.duration'))
      problems.push('the sdk case recorded no a2a.server.request.duration: B was not measured')
  }
  console.log('')
}
results.loadavgAfter = loadavg()[0]
results.seconds = (Date.now() - began) / 1000
results.problems = problems
console.log(`load average ${results.loadavgAfter.toFixed(2)} at the end; ${results.seconds.toFixed(0)} s`)
for (const problem of problems) console.error(`problem: ${problem}`)
if (values.json) console.log(JSON.stringify(results))
process.exit(problems.length ? 1 : 0)
