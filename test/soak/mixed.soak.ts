import { it } from 'vitest'
import { expectSoakHeld, runMixedSoak } from './_mixed.ts'

/**
 * `npm run soak` (SOAK_SECONDS, default 60): the mixed soak of the hardening issue against an agent process
 * with small retention. What each operation checks and how a lost task is told from an evicted one:
 * test/soak/_mixed.ts. The report goes to stdout. A 5 s version runs in `npm test`
 * (test/runtime/soak-short.test.ts).
 */

const seconds = Number(process.env.SOAK_SECONDS ?? 60)
if (!Number.isFinite(seconds) || seconds <= 0)
  throw new Error(`SOAK_SECONDS must be a positive number of seconds (got ${process.env.SOAK_SECONDS})`)

it(`runs a ${seconds} s mixed soak: no task lost or stuck, no 5xx, memory back under its ceiling after retention, file descriptors back to baseline`, {
  timeout: (seconds + 120) * 1000,
}, async () => {
  const result = await runMixedSoak({
    seconds,
    concurrency: 24,
    maxTasks: 2_000,
    ttlMs: 5_000,
    maxRunning: 128,
    maxStreams: 128,
    print: (report) => console.log(report),
  })
  expectSoakHeld(result)
})
