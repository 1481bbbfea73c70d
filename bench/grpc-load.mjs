// The gRPC load rows, run as their own process on the load core: A2A v1.0 `SendMessage` (unary) or
// `SendStreamingMessage` (server stream) of lf.a2a.v1.A2AService, on @grpc/grpc-js with the runtime's own
// descriptors (runtime/src/grpc/_descriptors.ts, generated from the spec's proto, read from the sources: the build
// bundles it into a chunk) and @bufbuild/protobuf.
// Cheapest for the load core: the request is encoded once and sent as the same bytes every call (as load.mjs sends
// one body), grpc-js hands the answers over as bytes, and each is decoded once to check it. argv[2] is a JSON config:
//   { address, method: 'send' | 'stream', concurrency, channels, durationSec, maxCalls, warmupSec, text, expected }
// `concurrency` loops each keep one call in flight, spread over `channels` channels (each its own HTTP/2
// connection). On a bare grpc-js server answering fixed bytes, 16 calls on one channel left both processes partly
// idle (7-9k calls/s, the load core 60-80% busy); on 4 channels the load core was the limit (11-12k calls/s); on 16,
// each channel's own work made it 8-9k. Every answer is checked: status OK, a completed task with the `expected` text in an artifact (a
// stream: an artifact update with it, and a completed status update last). Prints one JSON line shaped as
// load.mjs's (send) or stream-load.mjs's (stream), with the load process's own CPU use.
import { performance } from 'node:perf_hooks'
import { fromBinary, fromJson, toBinary } from '@bufbuild/protobuf'
import { Client, credentials, Metadata, status as Status } from '@grpc/grpc-js'
import { createJiti } from 'jiti'
import { Samples } from './_stats.mjs'

const { a2aFile } = await createJiti(import.meta.url).import('../runtime/src/grpc/_descriptors.ts')
const config = JSON.parse(process.argv[2])
const CALL_TIMEOUT_MS = 10_000 // as load.mjs's autocannon timeout
const COMPLETED = 3 // lf.a2a.v1.TaskState TASK_STATE_COMPLETED

const schema = (name) => a2aFile.messages.find((message) => message.name === name)
const SendMessageRequest = schema('SendMessageRequest')
const SendMessageResponse = schema('SendMessageResponse')
const StreamResponse = schema('StreamResponse')

const request = Buffer.from(
  toBinary(
    SendMessageRequest,
    fromJson(SendMessageRequest, {
      message: { role: 'ROLE_USER', messageId: 'bench-message', parts: [{ text: config.text }] },
    }),
  ),
)
const metadata = new Metadata()
metadata.set('a2a-version', '1.0')
const same = (bytes) => bytes
const path = (name) => `/lf.a2a.v1.A2AService/${name}`

const hasText = (artifact) => artifact?.parts?.some((part) => part.content.value === config.expected) === true

/** The unary answer is a completed task holding the expected text; a reason otherwise. */
function checkSend(bytes) {
  const answer = fromBinary(SendMessageResponse, bytes)
  const task = answer.payload.case === 'task' ? answer.payload.value : undefined
  if (task?.status?.state !== COMPLETED) return `not a completed task: ${answer.payload.case}`
  if (!task.artifacts.some(hasText)) return 'no artifact with the echoed text'
  return undefined
}

/** A stream's messages: an artifact update with the expected text, a completed status update last. */
function checkStream(messages) {
  const events = messages.map((bytes) => fromBinary(StreamResponse, bytes).payload)
  const last = events.at(-1)
  if (last?.case !== 'statusUpdate' || last.value.status?.state !== COMPLETED) return 'no completed status last'
  if (!events.some((event) => event.case === 'artifactUpdate' && hasText(event.value.artifact)))
    return 'no artifact update with the echoed text'
  return undefined
}

function oneSend(client) {
  return new Promise((resolve) => {
    const started = performance.now()
    client.makeUnaryRequest(
      path('SendMessage'),
      same,
      same,
      request,
      metadata,
      { deadline: Date.now() + CALL_TIMEOUT_MS },
      (error, bytes) => {
        const total = performance.now() - started
        if (error) resolve({ good: false, code: error.code, error: error.details ?? error.message })
        else {
          const wrong = checkSend(bytes)
          resolve(wrong ? { good: false, wrong } : { good: true, total })
        }
      },
    )
  })
}

function oneStream(client) {
  return new Promise((resolve) => {
    const started = performance.now()
    let firstEvent = NaN
    const messages = []
    const call = client.makeServerStreamRequest(path('SendStreamingMessage'), same, same, request, metadata, {
      deadline: Date.now() + CALL_TIMEOUT_MS,
    })
    call.on('data', (bytes) => {
      if (messages.length === 0) firstEvent = performance.now() - started
      messages.push(bytes)
    })
    // grpc-js ends a call with exactly one 'status' event, after the last message and after any 'error'.
    call.on('error', () => {})
    call.once('status', ({ code, details }) => {
      const total = performance.now() - started
      if (code !== Status.OK) return resolve({ good: false, code, error: details, events: messages.length })
      const wrong = checkStream(messages)
      resolve(
        wrong
          ? { good: false, wrong, events: messages.length }
          : { good: true, firstEvent, total, events: messages.length },
      )
    })
  })
}

async function run({ durationSec, record }) {
  // A local subchannel pool per client: each channel its own connection (they would share one otherwise).
  const clients = Array.from(
    { length: Math.min(config.channels, config.concurrency) },
    () => new Client(config.address, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 }),
  )
  for (const client of clients)
    await new Promise((resolve, reject) =>
      client.waitForReady(Date.now() + CALL_TIMEOUT_MS, (error) => (error ? reject(error) : resolve())),
    )
  const one = config.method === 'stream' ? oneStream : oneSend
  const firstEvents = new Samples()
  const totals = new Samples()
  const eventCounts = new Map()
  const failures = []
  let failed = 0
  let timeouts = 0
  let wrong = 0
  let good = 0
  let started = 0
  const begin = performance.now()
  const cpu = process.cpuUsage()
  const deadline = begin + durationSec * 1000
  async function loop(_, index) {
    const client = clients[index % clients.length]
    while (performance.now() < deadline && started < config.maxCalls) {
      started++
      const result = await one(client)
      if (!result.good) {
        failed++
        if (result.code === Status.DEADLINE_EXCEEDED) timeouts++
        if (result.wrong) wrong++
        if (failures.length < 5) failures.push(result)
        continue
      }
      good++
      if (!record) continue
      totals.push(result.total)
      if (config.method === 'stream') {
        firstEvents.push(result.firstEvent)
        eventCounts.set(result.events, (eventCounts.get(result.events) ?? 0) + 1)
      }
    }
  }
  // Calls still in flight when the time is up are awaited (counted if good), never cut.
  await Promise.all(Array.from({ length: config.concurrency }, loop))
  const elapsedSec = (performance.now() - begin) / 1000
  const used = process.cpuUsage(cpu)
  for (const client of clients) client.close()
  return {
    good,
    failed,
    timeouts,
    wrong,
    failures,
    elapsedSec,
    firstEvents,
    totals,
    eventCounts,
    clientCpu: (used.user + used.system) / 1e6 / elapsedSec,
  }
}

const warm = config.warmupSec > 0 ? await run({ durationSec: config.warmupSec, record: false }) : undefined
const r = await run({ durationSec: config.durationSec, record: true })
const total = r.totals.summary()
const line =
  config.method === 'stream'
    ? (() => {
        const first = r.firstEvents.summary()
        const counts = Object.fromEntries([...r.eventCounts].sort((a, b) => b[1] - a[1]))
        return {
          streams: r.good,
          streamsPerSec: r.good / r.elapsedSec,
          firstEventP50: first.p50,
          firstEventP99: first.p99,
          totalP50: total.p50,
          totalP99: total.p99,
          eventsPerStream: r.eventCounts.size === 1 ? Number(Object.keys(counts)[0]) : NaN,
          eventCounts: counts,
          elapsedSec: r.elapsedSec,
          clientCpu: r.clientCpu,
          failed: r.failed,
          failures: r.failures,
          warmupCount: warm?.good ?? 0,
        }
      })()
    : {
        requests: r.good,
        rps: r.good / r.elapsedSec,
        p50: total.p50,
        p99: total.p99,
        mean: total.mean,
        elapsedSec: r.elapsedSec,
        clientCpu: r.clientCpu,
        // In load.mjs's terms: a call that ended with a status other than OK is a non-2xx answer.
        non2xx: r.failed - r.timeouts - r.wrong,
        errors: 0,
        timeouts: r.timeouts,
        mismatches: r.wrong,
        failures: r.failures,
        warmupCount: warm?.good ?? 0,
      }
process.stdout.write(`${JSON.stringify(line)}\n`)
