import { expect, it } from 'vitest'
import { flood, rpc, startFloodAgent } from '../runtime/_flood.ts'
import { MiB, mib, rssOf, sampleRss } from '../runtime/_slow-readers.ts'

/**
 * `npm run soak -- flood`: the "Done when" for the 1 MiB flood, with the runtime's DEFAULT settings (the
 * memory store: 10,000 tasks, 128 MiB, one task's event log 1 MiB) against the echo template's agent in its own
 * process: message/send with texts of 1 MiB, 4 at a time, to 3× the task retention count (FLOOD_TASKS, default
 * 30,000). The agent stays alive, its RSS (sampled every 50 ms) stays under 768 MiB throughout, every sender gets
 * its whole answer, the newest tasks are readable and the oldest answer Task not found. Measured: 30,000 tasks in
 * 26 minutes (19 tasks/s on a loaded 2-core machine), RSS peak 526 MiB, the store at 44 tasks and 126 of its 128 MiB.
 * Before the byte budget the process died of "Reached heap limit" after about 2,000 tasks. The short form runs in `npm
 * test`
 * (test/runtime/store-bytes.test.ts).
 */

const TASKS = Number(process.env.FLOOD_TASKS ?? 30_000)
const TEXT_CHARS = 1_000_000 // a 1 MiB request body (the default maxBodySize) holds this text and its envelope
const RSS_CEILING = 768 * MiB
const NOT_FOUND = { code: -32602, message: 'Task not found' }

it(`${TASKS} messages of 1 MiB, 4 at a time: the agent stays alive with RSS under 768 MiB throughout (default settings)`, {
  timeout: 120_000 + TASKS * 200,
}, async () => {
  const server = await startFloodAgent()
  try {
    const rss = sampleRss(server.pid)
    const started = performance.now()
    let reported = 0
    const result = await flood(server.port, {
      count: TASKS,
      concurrency: 4,
      textChars: TEXT_CHARS,
      onProgress: (done) => {
        if (done - reported < 1000) return
        reported = done
        const seconds = (performance.now() - started) / 1000
        console.log(
          `  ${done} answered in ${seconds.toFixed(0)} s (${(done / seconds).toFixed(1)}/s); RSS now ${mib(rssOf(server.pid)?.rss ?? 0)}, peak ${mib(rss.peak())}`,
        )
      },
    })
    const peak = rss.stop()
    const alive = server.alive()
    const probe = await server.probe({ gc: true })
    const newest = await Promise.all(
      result.acknowledged.slice(-3).map(async (id) => (await rpc(server.port, 'tasks/get', { id })).body),
    )
    const oldest = await Promise.all(
      result.acknowledged.slice(0, 3).map(async (id) => (await rpc(server.port, 'tasks/get', { id })).body),
    )
    console.log(
      [
        'the 1 MiB flood, default settings:',
        `  ${result.acknowledged.length} of ${TASKS} answered whole in ${(result.ms / 1000).toFixed(0)} s (${((TASKS * 1000) / result.ms).toFixed(1)} tasks/s), ${result.problemCount} problems`,
        `  RSS peak ${mib(peak)} (the ceiling is 768 MiB), ${mib(rssOf(server.pid)?.rss ?? 0)} at the end after a collection`,
        `  the store keeps ${probe.storeSize} tasks, ${mib(probe.storeBytes)} counted (the budget is 128 MiB)`,
      ].join('\n'),
    )
    expect(alive).toBe(true)
    expect(result.problems).toEqual([])
    expect(result.acknowledged).toHaveLength(TASKS)
    expect(peak).toBeLessThan(RSS_CEILING)
    expect(probe.storeBytes).toBeLessThanOrEqual(128 * MiB)
    for (const body of newest) expect(body.result.artifacts[0].parts[0].text).toHaveLength('Echo: '.length + TEXT_CHARS)
    for (const body of oldest) expect(body.error).toEqual(NOT_FOUND)
    expect(probe.logged).toMatchObject({ warn: 0, error: 0 })
  } finally {
    await server.kill()
  }
})
