import { expect, it } from 'vitest'
import { MiB, mib } from '../runtime/_slow-readers.ts'
import { startStreamingAgent, streamingFlood } from '../runtime/_streaming-flood.ts'

/**
 * `npm run soak -- streaming-flood`: the streaming template's agent on a 512 MiB heap, default settings, flooded
 * with 1 MiB messages from 8 clients for SOAK_SECONDS (default 600): RSS stays under 768 MiB and, after its first
 * minute, flat: each later minute's peak within 10% of their mean. Before what running tasks produce counted, RSS
 * grew from 1.5 to 3.6 GiB over 41 minutes on a 4 GiB heap and was still rising.
 */

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600)

it(`${SECONDS} s of 1 MiB messages to the streaming agent on a 512 MiB heap: RSS flat after the first minute, under 768 MiB`, {
  timeout: (SECONDS + 120) * 1000,
}, async () => {
  const server = await startStreamingAgent()
  try {
    const result = await streamingFlood(server, SECONDS)
    const probe = await server.probe()
    const minutes: number[] = []
    for (let start = 60; start + 60 <= result.rss.length; start += 60)
      minutes.push(Math.max(...result.rss.slice(start, start + 60)))
    const mean = minutes.reduce((sum, peak) => sum + peak, 0) / minutes.length
    console.log(
      [
        `streaming flood, ${SECONDS} s: ${result.taken} taken, ${result.busy} refused busy, ${result.problems.length} problems`,
        `  RSS peak of each minute after the first: ${minutes.map(mib).join(', ')} (mean ${mib(mean)})`,
        `  the store: ${probe.storeSize} tasks, ${mib(probe.storeBytes)}; ${probe.logged.warn} warnings (tasks failed past their share)`,
      ].join('\n'),
    )
    expect(server.alive()).toBe(true)
    expect(result.problems).toEqual([])
    expect(Math.max(...result.rss)).toBeLessThan(768 * MiB)
    expect(minutes.length).toBeGreaterThan(0)
    for (const peak of minutes) expect(Math.abs(peak - mean) / mean).toBeLessThan(0.1)
  } finally {
    await server.kill()
  }
})
