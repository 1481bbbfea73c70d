import { expect, it } from 'vitest'
import { MiB, mib, pollUntil, rssOf, sampleRss } from '../runtime/_slow-readers.ts'
import { rpc, startBudgetsAgent, userText } from '../runtime/_task-budgets.ts'

/**
 * `npm run soak -- running-bytes`: 800 tasks of 1 MiB held running at once, with the runtime's DEFAULT budgets
 * (maxRunningBytes 256 MiB, or a quarter of the heap limit when less: 140 MiB on the soaks' 512 MiB heap;
 * maxRunningTasks 1,000), against an agent process. Before the budget all of them ran (the streaming template died
 * at ~760, under maxRunningTasks); now those that fit run and every other send gets 429 naming maxRunningBytes,
 * until the running ones finish. The short form runs in `npm test` (test/runtime/task-budgets.test.ts).
 */

const SENDS = 800
/** Below half of maxBodyBytesInFlight's 64 MiB, which bodies over 64 KiB may fill: no send is refused for its body. */
const AT_ONCE = 24
/**
 * What the running tasks may add to the agent's RSS: their 256 MiB of messages, and the garbage of parsing them and
 * the refused sends' bodies (+451 MiB measured; +929 MiB before the budget, when all 800 ran).
 */
const RSS_CEILING = 640 * MiB

it(`800 running tasks of 1 MiB (default settings): as many run as the budget has MiB, the rest get 429 naming maxRunningBytes, RSS + under ${RSS_CEILING / MiB} MiB; after they finish new sends run`, {
  timeout: 600_000,
}, async () => {
  const agent = await startBudgetsAgent({ A2A_MAX_TASK_BYTES: '', A2A_MAX_RUNNING_BYTES: '' })
  try {
    await agent.probe({ gc: true })
    const before = rssOf(agent.pid)!.rss
    const rss = sampleRss(agent.pid)
    // Just under 1 MiB of memory with the message's objects and ids and the agent's progress message.
    const hold = 'hold '.padEnd(MiB - 2048, 'x')
    let budget = 0
    const running: string[] = []
    const outcomes = { busy: 0, other: [] as string[] }
    const started = performance.now()
    for (let sent = 0; sent < SENDS; sent += AT_ONCE) {
      const wave = await Promise.all(
        Array.from({ length: Math.min(AT_ONCE, SENDS - sent) }, () =>
          rpc(agent.port, 'message/send', userText(hold, undefined, { blocking: false })),
        ),
      )
      for (const answer of wave) {
        if (answer.body.result?.status.state === 'working') running.push(answer.body.result.id)
        else if (
          answer.status === 429 &&
          /would pass maxRunningBytes \(\d+\); retry later$/.test(answer.body.error?.message ?? '')
        ) {
          outcomes.busy++
          budget = Number(/maxRunningBytes \((\d+)\)/.exec(answer.body.error!.message)![1])
        } else outcomes.other.push(`${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`)
      }
    }
    const took = performance.now() - started
    const peak = rss.stop()
    agent.release()
    // Counted by the agent: the store may not keep 256 MiB of ended tasks.
    const { completedHolds } = await pollUntil(
      () => agent.probe(),
      (probe) => probe.completedHolds >= running.length,
      60_000,
      250,
    )
    const again = await Promise.all(
      Array.from({ length: AT_ONCE }, () =>
        rpc(agent.port, 'message/send', userText(hold, undefined, { blocking: false })),
      ),
    )
    agent.release()
    console.log(
      [
        `${SENDS} sends of 1 MiB held running, default settings (maxRunningBytes ${mib(budget)}):`,
        `  ${running.length} ran, ${outcomes.busy} got 429, ${outcomes.other.length} other, in ${(took / 1000).toFixed(1)} s`,
        `  agent RSS ${mib(before)} before, peak ${mib(peak)} (+${mib(peak - before)}; ceiling +${mib(RSS_CEILING)})`,
        `  released: ${completedHolds} completed; ${again.filter((answer) => answer.body.result?.status.state === 'working').length} of ${AT_ONCE} new sends run`,
      ].join('\n'),
    )
    expect(outcomes.other).toEqual([])
    // The budget holds as many messages of just under 1 MiB (with their tasks' short status messages) as it has
    // MiB, not one more.
    expect(running).toHaveLength(Math.floor(budget / MiB))
    expect(outcomes.busy).toBe(SENDS - running.length)
    expect(peak - before).toBeLessThan(RSS_CEILING)
    expect(completedHolds).toBe(running.length)
    expect(again.every((answer) => answer.body.result?.status.state === 'working')).toBe(true)
  } finally {
    await agent.kill()
  }
})
