import { expect, it } from 'vitest'
import { MiB, mib, rssOf, sampleRss } from '../runtime/_slow-readers.ts'
import { chatText, GET_TASK_DIALECTS, rpc, startBudgetsAgent } from '../runtime/_task-budgets.ts'

/**
 * `npm run soak -- follow-ups`: the "1,000+ large follow-ups on one task" with the runtime's DEFAULT
 * budgets (maxTaskBytes 8 MiB) against an agent process. Before the budget every follow-up was taken: after ~520
 * of 1 MiB the task could no longer be serialised and tasks/get answered -32603 for good. Now the first eight
 * fit, every later one is refused with -32602 naming maxTaskBytes, the agent's memory stays flat and tasks/get
 * answers the task in every dialect. The short form runs in `npm test` (test/runtime/task-budgets.test.ts).
 */

const FOLLOW_UPS = 1_000
/** What the attack may add to the agent's RSS: one task of 8 MiB and the garbage of parsing 1 MiB bodies. */
const RSS_CEILING = 192 * MiB

it(`1,000 follow-ups of 1 MiB on one task (default settings): 8 accepted, the rest refused with -32602, RSS + under ${RSS_CEILING / MiB} MiB, tasks/get works at the end`, {
  timeout: 600_000,
}, async () => {
  const agent = await startBudgetsAgent({ A2A_MAX_TASK_BYTES: '', A2A_MAX_RUNNING_BYTES: '' })
  try {
    const first = await rpc(agent.port, 'message/send', {
      message: { role: 'user', messageId: 'soak-0', parts: [{ kind: 'text', text: 'chat start' }] },
    })
    const taskId: string = first.body.result.id
    await agent.probe({ gc: true })
    const before = rssOf(agent.pid)!.rss
    const rss = sampleRss(agent.pid)
    // Just under 1 MiB of memory a turn, with the messages' objects and ids and the agent's question: 8 fit in 8 MiB.
    const text = chatText(MiB - 1536)
    const outcomes = { accepted: 0, refused: 0, other: [] as string[] }
    const started = performance.now()
    let slowest = 0
    for (let i = 1; i <= FOLLOW_UPS; i++) {
      const answer = await rpc(agent.port, 'message/send', {
        message: { role: 'user', messageId: `soak-${i}`, taskId, parts: [{ kind: 'text', text }] },
      })
      slowest = Math.max(slowest, answer.ms)
      if (answer.body.result?.status.state === 'input-required') outcomes.accepted++
      else if (
        answer.body.error?.code === -32602 &&
        /more than maxTaskBytes \(8388608\); start a new task$/.test(answer.body.error.message)
      )
        outcomes.refused++
      else outcomes.other.push(JSON.stringify(answer.body).slice(0, 300))
    }
    const took = performance.now() - started
    const peak = rss.stop()
    const gets = []
    for (const { dialect, method, headers } of GET_TASK_DIALECTS) {
      const got = await rpc(agent.port, method, { id: taskId }, headers)
      gets.push({ dialect, got })
    }
    const probe = await agent.probe()
    console.log(
      [
        `${FOLLOW_UPS} follow-ups of 1 MiB on one task, default settings (maxTaskBytes 8 MiB):`,
        `  ${outcomes.accepted} accepted, ${outcomes.refused} refused (-32602), ${outcomes.other.length} other, in ${(took / 1000).toFixed(1)} s (slowest answer ${slowest.toFixed(0)} ms)`,
        `  agent RSS ${mib(before)} before, peak ${mib(peak)} (+${mib(peak - before)}; ceiling +${mib(RSS_CEILING)})`,
        ...gets.map(
          ({ dialect, got }) =>
            `  ${dialect} tasks/get: ${got.status}, ${got.chars} characters in ${got.ms.toFixed(0)} ms`,
        ),
      ].join('\n'),
    )
    expect(outcomes.other).toEqual([])
    expect(outcomes.accepted).toBe(8)
    expect(outcomes.refused).toBe(FOLLOW_UPS - 8)
    expect(peak - before).toBeLessThan(RSS_CEILING)
    for (const { dialect, got } of gets) {
      expect(got.status, dialect).toBe(200)
      expect(got.body.error, dialect).toBeUndefined()
      expect(got.body.result.history, dialect).toHaveLength(2 + 2 * 8)
    }
    expect(probe.logged).toMatchObject({ warn: 0, error: 0 })
  } finally {
    await agent.kill()
  }
})
