import { expect, it } from 'vitest'
import { AMPLIFIED_SHAPES, type AmplifiedResult, sendAmplified } from '../runtime/_amplified.ts'
import { flood, startFloodAgent } from '../runtime/_flood.ts'
import { MiB, mib, sampleRss } from '../runtime/_slow-readers.ts'

/**
 * `npm run soak -- amplification`: the width-amplification attack at full strength. 300 sends of ~1 MB of
 * each amplifying shape (AMPLIFY_SENDS) against the echo agent on a 512 MiB heap with default settings, then the
 * 1 MiB text flood on the same process: it stays alive with RSS under 768 MiB throughout. Before the budgets
 * counted the heap, 99 sends of the first shape killed an agent on a 2 GiB heap in 30 s.
 */

const SENDS = Number(process.env.AMPLIFY_SENDS ?? 300)
const FLOOD_TASKS = Number(process.env.AMPLIFY_FLOOD_TASKS ?? 1000)

it(`${SENDS} sends of each amplifying shape, then ${FLOOD_TASKS} messages of 1 MiB: an agent on a 512 MiB heap stays alive, RSS under 768 MiB`, {
  timeout: 60_000 + SENDS * AMPLIFIED_SHAPES.length * 500 + FLOOD_TASKS * 500,
}, async () => {
  const server = await startFloodAgent({ NODE_OPTIONS: '--max-old-space-size=512' })
  try {
    const rss = sampleRss(server.pid)
    const results: Array<AmplifiedResult & { name: string; ms: number; peak: number }> = []
    for (const shape of AMPLIFIED_SHAPES) {
      const started = performance.now()
      const result = await sendAmplified(server.port, shape, SENDS)
      results.push({ name: shape.name, ...result, ms: performance.now() - started, peak: rss.peak() })
      console.log(
        `  ${shape.name}: ${result.completed} completed, ${result.refused} refused, ${result.problems.length} problems; RSS peak so far ${mib(rss.peak())}`,
      )
    }
    const text = await flood(server.port, { count: FLOOD_TASKS, concurrency: 4, textChars: 1_000_000 })
    const peak = rss.stop()
    const probe = await server.probe({ gc: true })
    console.log(
      [
        `width amplification at full strength, 512 MiB heap: RSS peak ${mib(peak)} (the ceiling is 768 MiB)`,
        ...results.map(
          (r) => `  ${r.name}: ${r.completed} completed, ${r.refused} refused in ${(r.ms / 1000).toFixed(0)} s`,
        ),
        `  then ${text.acknowledged.length} of ${FLOOD_TASKS} messages of 1 MiB answered whole in ${(text.ms / 1000).toFixed(0)} s`,
        `  the store: ${probe.storeSize} tasks, ${mib(probe.storeBytes)} counted; heap ${mib(probe.memory.heapUsed)} after a collection`,
      ].join('\n'),
    )
    expect(server.alive()).toBe(true)
    expect(results.flatMap((r) => r.problems)).toEqual([])
    for (const r of results) expect(r.name.startsWith('metadata') ? r.refused : r.completed, r.name).toBe(SENDS)
    expect(text.problems).toEqual([])
    expect(peak).toBeLessThan(768 * MiB)
    expect(probe.storeBytes).toBeLessThanOrEqual(128 * MiB)
  } finally {
    await server.kill()
  }
})
