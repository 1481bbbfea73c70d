import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Task } from 'a2a-runtime'
import { createFileStore } from 'a2a-runtime/file-store'
import { afterEach, describe, expect, it } from 'vitest'
import { floodThenKill, getEach, type Restarted, restart } from './_file-restart.ts'
import { type FloodAgent, flood, rpc, startFloodAgent } from './_flood.ts'
import { procfs } from './_load-process.ts'
import { captureLogger } from './_logger.ts'
import { userMessage } from './_messages.ts'
import { MiB, mib } from './_slow-readers.ts'
import { logBytes } from './_task-log-files.ts'

// The file store read back after a crash is bounded by the store's budget, not by its log: an agent process on a
// 512 MiB heap, killed (SIGKILL) in the middle of a flood, starts again on the same directory within 10 s, its
// memory near the budget, and serves. The full-strength form is test/soak/file-restart.soak.ts.
// A2A_RUNTIME_ENTRY runs the same tests on another build.

const runtimeEntry: Record<string, string> = process.env.A2A_RUNTIME_ENTRY
  ? { A2A_RUNTIME_ENTRY: process.env.A2A_RUNTIME_ENTRY }
  : {}
const HEAP = { NODE_OPTIONS: '--max-old-space-size=512' }
const NOT_FOUND = { code: -32602, message: 'Task not found' }

const agents: FloodAgent[] = []
const dirs: string[] = []
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.kill()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function storeDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-file-restart-'))
  dirs.push(dir)
  return dir
}

async function start(env: Record<string, string>): Promise<FloodAgent> {
  const agent = await startFloodAgent({ ...runtimeEntry, ...HEAP, ...env })
  agents.push(agent)
  return agent
}

async function restartOn(env: Record<string, string>): Promise<Restarted> {
  const restarted = await restart({ ...runtimeEntry, ...HEAP, ...env })
  agents.push(restarted.agent)
  return restarted
}

describe.skipIf(!procfs)('the file store started again on a log larger than its budget', () => {
  it('answers within 10 s after a SIGKILL in the middle of a flood of 1 MiB messages and messages of ~37,000 tiny parts (A2A_STORE_MAX_BYTES 32 MiB, 512 MiB heap): RSS stays under 192 MiB while it reads the log back, the newest tasks acknowledged are there whole, the oldest answer Task not found, and it takes new sends', async () => {
    const dir = storeDir()
    const env = { A2A_STORE: `file:${dir}`, A2A_STORE_MAX_BYTES: String(32 * MiB) }
    const first = await start(env)
    const flooded = await floodThenKill(first, { concurrency: 4, until: (answered) => answered >= 60 })
    expect(flooded.problems).toEqual([])
    const onDisk = logBytes(dir)

    const { agent, ms, peakRss } = await restartOn(env)
    const probe = await agent.probe({ gc: true })
    console.info(
      `${flooded.acknowledged.length} messages acknowledged (1 MiB texts and ~37,000 tiny parts), killed with ${flooded.inFlight} under way; the log holds ${mib(onDisk)}. Started again in ${(ms / 1000).toFixed(2)} s, RSS peak ${mib(peakRss)}; heap ${mib(probe.memory.heapUsed)} after a collection; the store keeps ${probe.storeSize} tasks, ${mib(probe.storeBytes)} (budget 32 MiB)`,
    )
    expect(ms).toBeLessThan(10_000)
    expect(peakRss).toBeLessThan(192 * MiB)
    expect(probe.storeBytes).toBeLessThanOrEqual(32 * MiB)

    const answers = await getEach(
      agent.port,
      flooded.acknowledged.map((task) => task.id),
    )
    // Whatever is there is whole, and retention kept the newest: none is older than a task let go, but for the
    // few answered out of order (4 at a time).
    const found = answers.flatMap((answer, i) => (answer.task ? [i] : []))
    for (const i of found) {
      expect(answers[i]!.task.status.state).toBe('completed')
      expect(answers[i]!.task.artifacts[0].parts[0].text).toHaveLength(flooded.acknowledged[i]!.echoChars)
    }
    const newestMissing = answers.findLastIndex((answer) => !answer.task)
    expect(answers[newestMissing]!.error).toEqual(NOT_FOUND)
    expect(found.filter((i) => i < newestMissing - 4)).toEqual([])
    expect(found.length).toBeGreaterThanOrEqual(3)
    expect(found).toContain(answers.length - 1)
    for (const answer of answers.slice(0, 10)) expect(answer.error).toEqual(NOT_FOUND)

    const next = await flood(agent.port, { count: 4, concurrency: 2, textChars: 1_000_000 })
    expect(next.problems).toEqual([])
    expect((await rpc(agent.port, 'tasks/get', { id: next.acknowledged.at(-1) })).body.result.status.state).toBe(
      'completed',
    )
    expect(probe.logged.last.join('\n')).not.toMatch(/skipping|damaged|missing|could not/)
  }, 180_000)

  it('keeps, on a log written with a larger budget (128 MiB, ~100 MiB of log), only what the smaller one holds (16 MiB): RSS under 160 MiB while it reads the log back, the heap near the budget, the tasks let go named in one warning, the log compacted, and the next start reads less', async () => {
    const dir = storeDir()
    const first = await start({ A2A_STORE: `file:${dir}`, A2A_STORE_MAX_BYTES: String(128 * MiB) })
    const flooded = await floodThenKill(first, { concurrency: 2, until: () => logBytes(dir) >= 100 * MiB })
    expect(flooded.problems).toEqual([])
    const onDisk = logBytes(dir)

    const small = { A2A_STORE: `file:${dir}`, A2A_STORE_MAX_BYTES: String(16 * MiB) }
    const { agent, ms, peakRss } = await restartOn(small)
    const probe = await agent.probe({ gc: true })
    console.info(
      `${flooded.acknowledged.length} tasks acknowledged (1 MiB texts and ~37,000 tiny parts) in ${mib(onDisk)} of log (budget 128 MiB), killed with ${flooded.inFlight} under way, started again with 16 MiB in ${(ms / 1000).toFixed(2)} s: RSS peak ${mib(peakRss)}, heap ${mib(probe.memory.heapUsed)} after a collection; the store keeps ${probe.storeSize} tasks, ${mib(probe.storeBytes)}`,
    )
    expect(ms).toBeLessThan(10_000)
    expect(peakRss).toBeLessThan(160 * MiB)
    expect(probe.memory.heapUsed).toBeLessThan(64 * MiB)
    expect(probe.storeBytes).toBeLessThanOrEqual(16 * MiB)
    expect(probe.storeSize).toBeGreaterThanOrEqual(3)

    const answers = await getEach(
      agent.port,
      flooded.acknowledged.map((task) => task.id),
    )
    // The newest are kept (2 at a time: neighbours may have settled in either order), whole.
    const found = answers.flatMap((answer, i) => (answer.task ? [i] : []))
    const newestMissing = answers.findLastIndex((answer) => !answer.task)
    expect(found.filter((i) => i < newestMissing - 2)).toEqual([])
    expect(found).toContain(answers.length - 1)
    for (const i of found)
      expect(answers[i]!.task.artifacts[0].parts[0].text).toHaveLength(flooded.acknowledged[i]!.echoChars)
    for (const answer of answers.slice(0, 10)) expect(answer.error).toEqual(NOT_FOUND)
    // One warning names the tasks let go: how many (those acknowledged and not kept, and any of the sends under way
    // that reached the log), their bytes, and the newest 10 of them by id.
    // Besides it, only the sends under way that reached the log: failed, as the process stopped.
    const [warning, ...others] = probe.logged.last.filter(
      (line) => !/when the server stopped; it is failed$/.test(line),
    )
    expect(others).toEqual([])
    expect(probe.logged.warn).toBe(probe.logged.last.length)
    const [, count] =
      new RegExp(
        `^\\[warn\\] Task store: (\\d+) tasks of the log \\(\\d+ bytes\\) did not fit the store's budget \\(maxBytes ${16 * MiB}, maxTasks 10000\\) with the newer ones and were dropped at start`,
      ).exec(warning!) ?? []
    const dropped = answers.length - found.length
    expect(Number(count)).toBeGreaterThanOrEqual(dropped)
    expect(Number(count)).toBeLessThanOrEqual(dropped + flooded.inFlight)
    expect(warning).toContain(`and ${Number(count) - 10} more`)
    for (const answer of answers) if (warning!.includes(answer.id)) expect(answer.error).toEqual(NOT_FOUND)

    // The log is compacted to about twice what is kept (and a segment), so the next start reads less.
    await expect.poll(() => logBytes(dir), { timeout: 30_000 }).toBeLessThan(2 * 16 * MiB + 2 * 8 * MiB)
    const compacted = logBytes(dir)
    await agent.kill()
    const again = await restartOn(small)
    const reprobe = await again.agent.probe({ gc: true })
    console.info(
      `compacted to ${mib(compacted)}; the next start took ${(again.ms / 1000).toFixed(2)} s, RSS peak ${mib(again.peakRss)}, ${reprobe.storeSize} tasks kept`,
    )
    expect(reprobe.storeSize).toBe(probe.storeSize)
    expect(reprobe.logged.warn).toBe(0)
    const last = flooded.acknowledged.at(-1)!
    expect(
      (await rpc(again.agent.port, 'tasks/get', { id: last.id })).body.result.artifacts[0].parts[0].text,
    ).toHaveLength(last.echoChars)
    expect((await rpc(again.agent.port, 'message/send', userMessage('still here'))).body.result.status.state).toBe(
      'completed',
    )
  }, 180_000)
})

describe('the file store read back in two passes', () => {
  const task = (name: string, chars: number): Task => ({
    kind: 'task',
    id: `${name}-${Math.random().toString(36).slice(2)}`,
    contextId: 'ctx',
    status: { state: 'completed', timestamp: new Date().toISOString() },
    artifacts: [],
    history: [{ kind: 'message', messageId: name, role: 'user', parts: [{ kind: 'text', text: 'x'.repeat(chars) }] }],
  })

  it('drops, with one warning naming it with its size and the budget, a task larger than the whole budget it starts with, keeps those that fit, and a dropped record keeps it from coming back', async () => {
    const dir = storeDir()
    const first = createFileStore({ dir, maxBytes: 64 * MiB })
    const older = task('older', 1000)
    const large = task('large', 2 * MiB)
    const newer = task('newer', 1000)
    for (const each of [older, large, newer]) {
      await first.create(each)
      // Settled one after another, so the order is theirs.
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    await first.close()

    const logger = captureLogger()
    const small = createFileStore({ dir, maxBytes: MiB, logger })
    expect(small.get(large.id)).toBeUndefined()
    expect(small.get(older.id)?.history).toEqual(older.history)
    expect(small.get(newer.id)?.id).toBe(newer.id)
    const warning = logger.text('warn')
    expect(warning).toMatch(
      new RegExp(
        `Task store: 1 task of the log \\((\\d+) bytes\\) did not fit the store's budget \\(maxBytes ${MiB}, maxTasks 10000\\) with the newer ones and was dropped at start, the longest settled first: ${large.id} \\(\\1 bytes\\)$`,
      ),
    )
    expect(Number(/\((\d+) bytes\)/.exec(warning)![1])).toBeGreaterThan(2 * MiB)
    await small.close()

    const again = createFileStore({ dir, maxBytes: 64 * MiB, logger: captureLogger() })
    expect(again.get(large.id)).toBeUndefined()
    expect(again.size).toBe(2)
    await again.close()
  })
})
