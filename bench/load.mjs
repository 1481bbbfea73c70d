// One request/response load row, run as its own process (pinned to the load core by the bench) so the load
// generator never competes with the server for a CPU. argv[2] is a JSON config:
//   { url, method, path, headers, body, connections, durationSec, maxRequests, warmupSec, expect: [substr] }
// The body is sent as is: the same messageId on every request (both servers accept duplicates and make a new
// task each time). A fresh id per request would cost the load core ~20% more per request and lower the
// ceiling it can measure (and autocannon 8.0.0's own `idReplacement` is broken: it sizes Content-Length for
// 33-character ids while its hyperid makes 24-character ones, so every request hangs).
// Every response body must contain each `expect` substring: a fast stream of error replies must not pass as
// throughput. Prints one JSON line: requests, req/s, latency p50/p99 (ms), failures, the warm-up's good answers,
// and the load process's own CPU use (near 100% means the figure is bounded by the client, not the server).

import { performance } from 'node:perf_hooks'
import autocannon from 'autocannon'
import { Samples } from './_stats.mjs'

const config = JSON.parse(process.argv[2])

function once({ durationSec, record }) {
  const samples = new Samples()
  const started = performance.now()
  const cpu = process.cpuUsage()
  const instance = autocannon(
    {
      url: config.url,
      connections: config.connections,
      // `amount` bounds the count; autocannon then ignores `duration`, so the timer below bounds the time.
      amount: config.maxRequests,
      timeout: 10,
      // autocannon only notices stop() (and a reached `amount`) at its sampling tick: 1 s by default.
      sampleInt: 100,
      requests: [
        { method: config.method ?? 'GET', path: config.path ?? '/', headers: config.headers ?? {}, body: config.body },
      ],
      verifyBody: config.expect?.length ? (body) => config.expect.every((part) => body.includes(part)) : undefined,
    },
    () => {},
  )
  // autocannon's own latency histogram has 1 ms resolution, too coarse for loopback: keep the raw times.
  if (record) instance.on('response', (_client, _status, _bytes, responseTime) => samples.push(responseTime))
  const timer = setTimeout(() => instance.stop(), durationSec * 1000)
  return new Promise((resolve, reject) => {
    instance.once('done', (result) => {
      clearTimeout(timer)
      const elapsedSec = (performance.now() - started) / 1000
      const used = process.cpuUsage(cpu)
      resolve({ result, samples, elapsedSec, clientCpu: (used.user + used.system) / 1e6 / elapsedSec })
    })
    instance.once('error', reject)
  })
}

const warm = config.warmupSec > 0 ? await once({ durationSec: config.warmupSec, record: false }) : undefined
const { result, samples, elapsedSec, clientCpu } = await once({ durationSec: config.durationSec, record: true })
const ok = result['2xx'] - result.mismatches
const latency = samples.summary()
process.stdout.write(
  `${JSON.stringify({
    requests: ok,
    rps: ok / elapsedSec,
    p50: latency.p50,
    p99: latency.p99,
    mean: latency.mean,
    elapsedSec,
    clientCpu,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches,
    // The good answers of the warm-up, which the server's CPU time over the whole run also paid for.
    warmupCount: warm ? warm.result['2xx'] - warm.result.mismatches : 0,
    statusCodes: result.statusCodeStats,
  })}\n`,
)
