import { expect, it } from 'vitest'
import { MiB, mib } from './_slow-readers.ts'
import { startStreamingAgent, streamingFlood } from './_streaming-flood.ts'

/**
 * The streaming template's agent on a 512 MiB heap, default settings, flooded with 1 MiB messages for 30 s from 8
 * clients: each task it takes would stream its ~100,000 words for half an hour. The running tasks are bounded by
 * maxRunningBytes, what they stream counts toward it as it comes, and past it a task over its share is failed with
 * the reason. The full strength (10 minutes, RSS flat) is `npm run soak -- streaming-flood`.
 */

it('a flood of 1 MiB messages to the streaming agent on a 512 MiB heap: alive, under 768 MiB of RSS, tasks over their share failed with the reason', {
  timeout: 120_000,
}, async () => {
  const server = await startStreamingAgent()
  try {
    const result = await streamingFlood(server, 30)
    const peak = Math.max(...result.rss)
    const probe = await server.probe()
    console.log(
      `streaming flood, 30 s: ${result.taken} taken, ${result.busy} refused busy (429); RSS peak ${mib(peak)}; the store ${probe.storeSize} tasks, ${mib(probe.storeBytes)}; ${probe.logged.warn} warnings`,
    )
    expect(server.alive()).toBe(true)
    expect(result.problems).toEqual([])
    expect(result.taken).toBeGreaterThan(0)
    expect(result.busy).toBeGreaterThan(0)
    expect(peak).toBeLessThan(768 * MiB)
    // What the tasks streamed counted: past the running budget, tasks over their share were failed, with the reason.
    expect(
      probe.logged.last.some((line) => /is failed: The running tasks hold \d+ bytes, past maxRunningBytes/.test(line)),
    ).toBe(true)
    expect(probe.logged.errors).toEqual([])
    expect(probe.logged.error).toBe(0)
  } finally {
    await server.kill()
  }
})
