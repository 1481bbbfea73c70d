// The message/stream load row, run as its own process on the load core. autocannon sees only whole
// responses, so this small client measures what a streaming client feels: time to the first complete SSE
// event and to the end of the stream. argv[2] is a JSON config:
//   { url, path, headers, body, concurrency, durationSec, maxStreams, warmupSec, expect: { text, final } }
// `concurrency` loops each keep one stream open at a time over a keep-alive Agent with that many sockets.
// Every stream is checked: HTTP 200, text/event-stream, the echoed `text` somewhere, `final` in the last
// event. Streams still open when the time is up are awaited (counted if good), never cut.
import { Agent, request } from 'node:http'
import { performance } from 'node:perf_hooks'
import { Samples } from './_stats.mjs'

const config = JSON.parse(process.argv[2])
const target = new URL(config.path ?? '/', config.url)
const body = Buffer.from(config.body)
const headers = { ...config.headers, 'content-length': body.length }

function oneStream(agent) {
  return new Promise((resolve) => {
    const started = performance.now()
    let firstEvent = NaN
    let text = ''
    const req = request(target, { method: 'POST', agent, headers }, (res) => {
      res.setEncoding('utf8')
      const ok = res.statusCode === 200 && String(res.headers['content-type']).startsWith('text/event-stream')
      res.on('data', (chunk) => {
        text += chunk
        // The first event is complete once its blank line has arrived.
        if (Number.isNaN(firstEvent) && text.includes('\n\n')) firstEvent = performance.now() - started
      })
      res.once('end', () => {
        const total = performance.now() - started
        // A block with a data field is an event (it may carry an `id:` line before it, as v1.0 streams do).
        const events = text.split('\n\n').filter((block) => block.startsWith('data:') || block.includes('\ndata:'))
        const good =
          ok && events.length > 0 && text.includes(config.expect.text) && events.at(-1).includes(config.expect.final)
        resolve({
          good,
          status: res.statusCode,
          firstEvent,
          total,
          events: events.length,
          sample: good ? undefined : text.slice(0, 500),
        })
      })
      res.once('error', () => resolve({ good: false, error: 'response error' }))
    })
    req.once('error', (error) => resolve({ good: false, error: error.message }))
    req.end(body)
  })
}

async function run({ durationSec, record }) {
  const agent = new Agent({ keepAlive: true, maxSockets: config.concurrency })
  const firstEvents = new Samples()
  const totals = new Samples()
  const eventCounts = new Map()
  const failures = []
  let streams = 0
  let started = 0
  const begin = performance.now()
  const cpu = process.cpuUsage()
  const deadline = begin + durationSec * 1000
  async function loop() {
    while (performance.now() < deadline && started < config.maxStreams) {
      started++
      const result = await oneStream(agent)
      if (!result.good) {
        if (failures.length < 5) failures.push(result)
        failures.count = (failures.count ?? 0) + 1
        continue
      }
      streams++
      if (record) {
        firstEvents.push(result.firstEvent)
        totals.push(result.total)
        eventCounts.set(result.events, (eventCounts.get(result.events) ?? 0) + 1)
      }
    }
  }
  await Promise.all(Array.from({ length: config.concurrency }, loop))
  const elapsedSec = (performance.now() - begin) / 1000
  const used = process.cpuUsage(cpu)
  agent.destroy()
  return {
    streams,
    elapsedSec,
    firstEvents,
    totals,
    eventCounts,
    failures,
    clientCpu: (used.user + used.system) / 1e6 / elapsedSec,
  }
}

const warm = config.warmupSec > 0 ? await run({ durationSec: config.warmupSec, record: false }) : undefined
const r = await run({ durationSec: config.durationSec, record: true })
const first = r.firstEvents.summary()
const total = r.totals.summary()
// The usual number of events per stream, and every count seen (they should all be the same).
const counts = Object.fromEntries([...r.eventCounts].sort((a, b) => b[1] - a[1]))
process.stdout.write(
  `${JSON.stringify({
    streams: r.streams,
    streamsPerSec: r.streams / r.elapsedSec,
    firstEventP50: first.p50,
    firstEventP99: first.p99,
    totalP50: total.p50,
    totalP99: total.p99,
    eventsPerStream: r.eventCounts.size === 1 ? Number(Object.keys(counts)[0]) : NaN,
    eventCounts: counts,
    elapsedSec: r.elapsedSec,
    clientCpu: r.clientCpu,
    failed: r.failures.count ?? 0,
    failures: r.failures,
    warmupCount: warm?.streams ?? 0,
  })}\n`,
)
