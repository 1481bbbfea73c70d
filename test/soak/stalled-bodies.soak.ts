import { expect, it } from 'vitest'
import { MiB, mib, pollUntil, rssOf, sampleRss } from '../runtime/_slow-readers.ts'
import { normalClient, outcomes, percentile, send, stalledBodies, startCapsAgent } from '../runtime/_stalled-bodies.ts'

/**
 * `npm run soak -- stalled-bodies`: the "Done when" for stalled request bodies, with the runtime's DEFAULT
 * settings (maxBodyBytesInFlight 64 MiB, maxConnections 4,096, maxConnectionsPerAddress 2,048, request timeout
 * 30 s) against an agent process: 1,500 connections from 127.0.0.2 that each declare a 1 MiB body and stall one
 * byte short are refused at once (503) or cut by the request timeout (408), while a normal client on 127.0.0.1
 * is served with p99 under 250 ms; the agent's RSS stays bounded and every connection is closed at the end. The
 * short form runs in `npm test` (test/runtime/connection-caps.test.ts).
 */

const REQUEST_TIMEOUT_MS = 30_000
const RSS_CEILING = 256 * MiB

it('1,500 stalled 1 MiB bodies from another address are held off while a normal client is served with p99 < 250 ms (default settings)', {
  timeout: 180_000,
}, async () => {
  const server = await startCapsAgent()
  try {
    expect((await send(server.port)).status).toBe(200)
    await server.probe({ gc: true })
    const before = rssOf(server.pid)!.rss
    const rss = sampleRss(server.pid)
    const normal = normalClient(server.port, { maxMs: 120_000, maxRequests: 20_000 })
    const started = performance.now()
    const stalled = await stalledBodies(server.port, 1_500, { declared: MiB, localAddress: '127.0.0.2' })
    const opened = performance.now() - started
    const refusedBy = await pollUntil(
      () => outcomes(stalled),
      (counts) => counts.refused + counts.unanswered >= 1_500 - 32,
      10_000,
      50,
    )
    const refusedAfter = performance.now() - started
    const allClosed = await pollUntil(
      () => stalled.every((connection) => connection.isClosed()),
      Boolean,
      REQUEST_TIMEOUT_MS + 30_000,
      100,
    )
    const closedAfter = performance.now() - started
    const traffic = await normal.stop()
    const peak = rss.stop()
    const ended = outcomes(stalled)
    const settled = await pollUntil(
      () => server.probe(),
      (probe) => probe.connections === 0,
      10_000,
      100,
    )
    const p50 = percentile(traffic.ms, 50)
    const p99 = percentile(traffic.ms, 99)
    console.log(
      [
        'stalled bodies, default settings:',
        `  1,500 connections from 127.0.0.2, each declaring 1 MiB and stalling one byte short, opened in ${(opened / 1000).toFixed(1)} s`,
        `  ${refusedBy.refused + refusedBy.unanswered} refused within ${(refusedAfter / 1000).toFixed(1)} s; in the end ${ended.refused} refused 503, ${ended.cut} cut 408, ${ended.unanswered} closed unanswered; all closed after ${(closedAfter / 1000).toFixed(1)} s`,
        `  agent RSS ${mib(before)} before, peak ${mib(peak)} (+${mib(peak - before)}; the ceiling is +${mib(RSS_CEILING)}; over 1.3 GiB without the budget)`,
        `  normal client on 127.0.0.1: ${traffic.ms.length} message/send, ${traffic.statuses.filter((status) => status === 200).length} answered 200, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...traffic.ms).toFixed(1)} ms`,
      ].join('\n'),
    )
    expect(stalled).toHaveLength(1_500)
    expect(allClosed).toBe(true)
    expect(ended.open + ended.other).toBe(0)
    expect(ended.cut).toBeLessThanOrEqual(32)
    expect(closedAfter).toBeLessThan(REQUEST_TIMEOUT_MS + 15_000)
    expect(peak - before).toBeLessThan(RSS_CEILING)
    expect(traffic.failures).toEqual([])
    expect(traffic.statuses.every((status) => status === 200)).toBe(true)
    expect(p99).toBeLessThan(250)
    expect(settled.connections).toBe(0)
    expect(settled.logged).toMatchObject({ warn: 0, error: 0 })
  } finally {
    await server.kill()
  }
})
