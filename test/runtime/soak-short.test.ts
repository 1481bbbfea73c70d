import { it } from 'vitest'
import { expectSoakHeld, runMixedSoak } from '../soak/_mixed.ts'

/**
 * The mixed soak of `npm run soak` (test/soak/_mixed.ts), for 5 s at a lower concurrency, so `npm test` covers
 * what load.test.ts does not: cancels mid-run, multi-turn, resubscribing and resuming with Last-Event-ID,
 * clients leaving mid-stream and mid-request, bad requests, all at once with retention evicting under them;
 * then no task lost or stuck, the stream and running-task counts back (the caps are set low), memory back
 * after retention and file descriptors back to baseline. The report is in the failure message.
 */
it('runs a 5 s mixed soak: no task lost or stuck, no 5xx, memory back after retention, file descriptors back to baseline', {
  timeout: 90_000,
}, async () => {
  const result = await runMixedSoak({
    seconds: 5,
    concurrency: 8,
    maxTasks: 500,
    ttlMs: 1_500,
    maxRunning: 32,
    maxStreams: 32,
    warmupMs: 500,
    patienceMs: 3_000,
  })
  expectSoakHeld(result)
})
