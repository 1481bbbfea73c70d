import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { floodThenKill, getEach, restart } from '../runtime/_file-restart.ts'
import { rpc, startFloodAgent } from '../runtime/_flood.ts'
import { MiB, mib, rssOf } from '../runtime/_slow-readers.ts'
import { logBytes } from '../runtime/_task-log-files.ts'

/**
 * `npm run soak -- file-restart`: the file store can never crash-loop. DEFAULT settings (the store's budget: 128
 * MiB, a quarter of the 512 MiB heap) on A2A_STORE=file:<dir>, the echo template's agent in its own process on a
 * 512 MiB heap: a flood of 1 MiB messages and messages of ~37,000 tiny text parts, 4 at a time, SIGKILLed in the
 * middle ROUNDS times (default 3) after FILE_RESTART_MESSAGES answers each (default 300). Each start on the log
 * the last one left answers within 10 s, its RSS (the highest the process reached: its start and the restore)
 * under 768 MiB, the newest tasks are there whole, the oldest answer Task not found, and the flood goes on
 * against it. Measured on a loaded 2-core machine: ~300 answers in 9–11 s a round, a log of 131–142 MiB at each
 * kill, each start in 0.9 s with RSS peaks of 211–219 MiB (the build before the two-pass restore: 0.7–0.9 s and
 * 247–250 MiB), the store at 45–47 tasks and 119–124 of its 128 MiB. The short form runs in `npm test`
 * (test/runtime/file-restart.test.ts).
 */

const ROUNDS = Number(process.env.FILE_RESTART_ROUNDS ?? 3)
const MESSAGES = Number(process.env.FILE_RESTART_MESSAGES ?? 300)
const RSS_CEILING = 768 * MiB
const NOT_FOUND = { code: -32602, message: 'Task not found' }

it(`${ROUNDS} SIGKILLs in the middle of a flood of 1 MiB and tiny-part messages: each start within 10 s, RSS under 768 MiB (default settings, 512 MiB heap)`, {
  timeout: 120_000 + ROUNDS * MESSAGES * 500,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-file-restart-soak-'))
  // A2A_RUNTIME_ENTRY runs it on another build.
  const env = {
    A2A_STORE: `file:${dir}`,
    NODE_OPTIONS: '--max-old-space-size=512',
    ...(process.env.A2A_RUNTIME_ENTRY ? { A2A_RUNTIME_ENTRY: process.env.A2A_RUNTIME_ENTRY } : {}),
  }
  let agent = await startFloodAgent(env)
  try {
    let from = 0
    const lines: string[] = []
    for (let round = 1; round <= ROUNDS; round++) {
      const started = performance.now()
      const flooded = await floodThenKill(agent, { concurrency: 4, from, until: (answered) => answered >= MESSAGES })
      const seconds = (performance.now() - started) / 1000
      from += flooded.acknowledged.length + flooded.problems.length + 8
      const onDisk = logBytes(dir)
      expect(flooded.problems).toEqual([])

      const restarted = await restart(env)
      agent = restarted.agent
      const probe = await agent.probe({ gc: true })
      const ids = flooded.acknowledged.map((task) => task.id)
      const newest = await getEach(agent.port, ids.slice(-3))
      const oldest = await getEach(agent.port, ids.slice(0, 3))
      const line = `round ${round}: ${flooded.acknowledged.length} answered in ${seconds.toFixed(0)} s (RSS peak ${mib(flooded.peakRss)}), killed with ${flooded.inFlight} under way, log ${mib(onDisk)}; started again in ${(restarted.ms / 1000).toFixed(2)} s, RSS peak ${mib(restarted.peakRss)}, heap ${mib(probe.memory.heapUsed)} after a collection, the store keeps ${probe.storeSize} tasks, ${mib(probe.storeBytes)}; ${probe.logged.warn} warnings`
      lines.push(line)
      console.log(line)
      expect(restarted.ms).toBeLessThan(10_000)
      expect(restarted.peakRss).toBeLessThan(RSS_CEILING)
      expect(probe.storeBytes).toBeLessThanOrEqual(128 * MiB)
      for (const [i, answer] of newest.entries())
        expect(answer.task?.artifacts[0].parts[0].text).toHaveLength(flooded.acknowledged.at(i - 3)!.echoChars)
      for (const answer of oldest) expect(answer.error).toEqual(NOT_FOUND)
      expect(probe.logged.last.join('\n')).not.toMatch(/skipping|damaged|missing|could not/)
    }
    // The last start serves as the others did.
    const sent = (
      await rpc(agent.port, 'message/send', {
        message: { role: 'user', messageId: 'last', parts: [{ kind: 'text', text: 'still here' }] },
      })
    ).body
    expect(sent.result.status.state).toBe('completed')
    console.log(
      [
        'the file store killed mid-flood, default settings:',
        ...lines.map((line) => `  ${line}`),
        `  RSS at the end ${mib(rssOf(agent.pid)?.rss ?? 0)}`,
      ].join('\n'),
    )
  } finally {
    await agent.kill()
    rmSync(dir, { recursive: true, force: true })
  }
})
