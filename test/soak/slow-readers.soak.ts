import { expect, it } from 'vitest'
import {
  call,
  MiB,
  message,
  mib,
  pollUntil,
  readingSubscriber,
  rpcBody,
  rssOf,
  sampleRss,
  stalledClients,
  startSlowReadersAgent,
} from '../runtime/_slow-readers.ts'

/**
 * `npm run soak -- slow-readers`: the "Done when" for clients that stop reading, with the runtime's
 * DEFAULT budgets (maxStreamBacklogBytes 1 MiB, maxPendingResponseBytes 64 MiB, writeTimeoutMs 30 s) against an
 * agent process: 500 subscribers that stop reading a busy stream and 300 `tasks/get` of a 7 MB task that are
 * never read, at the same time, add under 256 MiB to its RSS; the subscribers are dropped and the held answers
 * cut within the write timeout (and its sweep's two seconds); a reading subscriber gets every event and a reading
 * client the task. The short forms run in `npm test` (test/runtime/backpressure.test.ts).
 */

const DEADLINE_MS = 30_000 + 2_000

it('500 non-reading subscribers and 300 non-reading large tasks/get add under 256 MiB to RSS and are cut within the documented timeouts (default settings)', {
  timeout: 180_000,
}, async () => {
  const server = await startSlowReadersAgent()
  try {
    const ARTIFACTS = 640
    const TASK_CHARS = 7_000_000
    const large = JSON.parse(
      (await call(server.port, rpcBody('message/send', message(`big:${TASK_CHARS}`)))).text,
    ).result
    const busy = JSON.parse(
      (
        await call(
          server.port,
          rpcBody('message/send', { ...message(`burst:${ARTIFACTS}:16384`), configuration: { blocking: false } }),
        )
      ).text,
    ).result
    await server.probe({ gc: true })
    const before = rssOf(server.pid)!.rss
    const rss = sampleRss(server.pid)
    const subscribers = await stalledClients(server.port, rpcBody('tasks/resubscribe', { id: busy.id }), 500)
    const reader = readingSubscriber(server.port, rpcBody('tasks/resubscribe', { id: busy.id }))
    await pollUntil(
      () => server.probe(),
      (probe) => probe.connections >= 501,
      10_000,
    )
    server.release()
    const gets = stalledClients(server.port, rpcBody('tasks/get', { id: large.id }), 300)
    const attackStarted = performance.now()
    const [{ events }, getters] = await Promise.all([reader, gets])
    const held = getters.filter((client) => client.status === 200)
    const refused = getters.filter((client) => client.status === 503)
    const dropped = await pollUntil(
      () => server.probe(),
      (probe) => probe.dropped >= 500,
      15_000,
    )
    const droppedAfter = performance.now() - attackStarted
    const settled = await pollUntil(
      () => server.probe(),
      (probe) => probe.connections === 0,
      DEADLINE_MS + 10_000,
      250,
    )
    const settledAfter = performance.now() - attackStarted
    const peak = rss.stop()
    const got = await call(server.port, rpcBody('tasks/get', { id: large.id }))
    console.log(
      [
        'slow readers, default settings:',
        `  RSS ${mib(before)} before, peak ${mib(peak)} (+${mib(peak - before)}; the ceiling is +256 MiB)`,
        `  500 subscribers of a ${ARTIFACTS * 16} KiB stream: ${dropped.dropped} dropped within ${(droppedAfter / 1000).toFixed(1)} s; the reading subscriber got ${events.length} events`,
        `  300 tasks/get of a 7 MB task: ${held.length} answered 200 and held, ${refused.length} refused 503 (slowest ${Math.max(...refused.map((c) => c.ms)).toFixed(0)} ms); ${settled.cut} cut by the write timeout; every connection closed after ${(settledAfter / 1000).toFixed(1)} s`,
        `  a reading tasks/get afterwards: ${got.status} in ${got.ms.toFixed(0)} ms`,
      ].join('\n'),
    )
    expect(events.filter((event) => event.method === 'tasks/artifactUpdate')).toHaveLength(ARTIFACTS)
    expect(events.at(-1).params).toMatchObject({ final: true, status: { state: 'completed' } })
    expect(dropped.dropped).toBe(500)
    expect(held.length + refused.length).toBe(300)
    expect(settled.connections).toBe(0)
    expect(settledAfter).toBeLessThan(DEADLINE_MS + 10_000)
    expect(peak - before).toBeLessThan(256 * MiB)
    expect(got.status).toBe(200)
    expect(settled.logged).toMatchObject({ warn: 0, error: 0 })
    for (const client of [...subscribers, ...getters]) client.socket.destroy()
  } finally {
    await server.kill()
  }
})
