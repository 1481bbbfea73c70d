import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

/**
 * `node bench/telemetry-ab.mjs --smoke --json` as a process, on this clone's build: the echo agent without telemetry
 * (A) and with `telemetry: otelTelemetry()` (B), first with no OpenTelemetry SDK registered, then with one exporting
 * nowhere. The script itself fails on a wrong answer, and when B's spans (one per request it answered) or its
 * request-duration metric did not reach the SDK's exporters; here every workload of both cases has its figures.
 */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const workloads = ['message/send', 'message/stream', 'GetTask', 'SendMessage (v1.0)']

interface Row {
  workload: string
  AMedianMicros: number
  BMedianMicros: number
  geomean: number
  low: number
  high: number
}

// A few seconds: 10 blocks of 20 requests per app and workload, after 200 requests of warm-up each.
it('measures both cases on every workload (--smoke) and traces every request of the app with telemetry', {
  timeout: 120_000,
}, async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(repoRoot, 'bench/telemetry-ab.mjs'), '--smoke', '--json'],
    { cwd: repoRoot, timeout: 110_000, maxBuffer: 16 * 1024 * 1024 },
  )
  const results = JSON.parse(stdout.trim().split('\n').at(-1)!)
  expect(results.problems).toEqual([])
  for (const name of ['none', 'sdk']) {
    const rows: Row[] = results.cases[name]
    expect(rows.map((row) => row.workload)).toEqual(workloads)
    for (const row of rows)
      for (const figure of ['AMedianMicros', 'BMedianMicros', 'geomean', 'low', 'high'] as const)
        expect(row[figure], `${name} ${row.workload} ${figure}`).toBeGreaterThan(0)
  }
  expect(results.exported.spans).toBe(results.exported.requestsOfB)
  expect(results.exported.spanNames.sort()).toEqual(['GetTask', 'SendMessage', 'SendStreamingMessage'])
  expect(results.exported.metrics).toContain('a2a.server.request.duration')
})
