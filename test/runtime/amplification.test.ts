import { expect, it } from 'vitest'
import { AMPLIFIED_SHAPES, type AmplifiedResult, sendAmplified } from './_amplified.ts'
import { flood, startFloodAgent } from './_flood.ts'
import { MiB, mib, sampleRss } from './_slow-readers.ts'

/**
 * Width amplification against the echo agent in its own process on a 512 MiB heap, default settings: messages of
 * ~1 MB whose JSON parses to many times that (metadata of 330,000 empty objects is 21 MB of heap), 25 of each
 * shape. Priced as the heap pays, each hostile shape is refused with -32602 naming maxTaskBytes before anything
 * is kept; many tiny parts fit and are kept within the store's budget. Before the budgets counted the heap, 99 such
 * sends killed an agent on a 2 GiB heap. The full strength (300 of each) is `npm run soak -- amplification`.
 */

const SENDS = 25
const HEAP = '--max-old-space-size=512'
const RSS_CEILING = 768 * MiB

it(`${SENDS} sends of ~1 MB of each amplifying shape leave an agent on a 512 MiB heap alive, under 768 MiB of RSS`, {
  timeout: 300_000,
}, async () => {
  const server = await startFloodAgent({ NODE_OPTIONS: HEAP })
  try {
    const rss = sampleRss(server.pid)
    const results: Array<AmplifiedResult & { name: string; ms: number }> = []
    for (const shape of AMPLIFIED_SHAPES) {
      const started = performance.now()
      results.push({
        name: shape.name,
        ...(await sendAmplified(server.port, shape, SENDS)),
        ms: performance.now() - started,
      })
    }
    const peak = rss.stop()
    console.log(
      [
        `width amplification, ${SENDS} sends of each shape, 512 MiB heap: RSS peak ${mib(peak)}`,
        ...results.map(
          (r) => `  ${r.name}: ${r.completed} completed, ${r.refused} refused (${(r.ms / 1000).toFixed(1)} s)`,
        ),
      ].join('\n'),
    )
    expect(server.alive()).toBe(true)
    expect(results.flatMap((r) => r.problems)).toEqual([])
    for (const r of results) {
      // Metadata of tiny structures is refused; parts the runtime rebuilds (a text part is ~100 bytes of heap) fit.
      if (r.name.startsWith('metadata')) expect(r.refused, r.name).toBe(SENDS)
      else expect(r.completed, r.name).toBe(SENDS)
    }
    expect(peak).toBeLessThan(RSS_CEILING)
    // Honest clients are still served, in full.
    const after = await flood(server.port, { count: 4, concurrency: 2, textChars: 100_000 })
    expect(after.problems).toEqual([])
    const probe = await server.probe({ gc: true })
    expect(probe.storeBytes).toBeLessThanOrEqual(128 * MiB)
  } finally {
    await server.kill()
  }
})
