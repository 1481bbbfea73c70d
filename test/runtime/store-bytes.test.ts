import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createMemoryStore } from 'a2a-runtime'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ConfigurationError } from '../../runtime/src/errors.ts'
import { DEFAULT_EVENT_LOG_BYTES, DEFAULT_STORE_MAX_BYTES } from '../../runtime/src/stores/memory.ts'
import { assertRuntimeBuilt, DIST_INDEX } from './_fixture-process.ts'
import { type FloodAgent, flood, rpc, startFloodAgent } from './_flood.ts'
import { procfs } from './_load-process.ts'
import { userMessage } from './_messages.ts'
import { MiB, mib, rssOf, sampleRss } from './_slow-readers.ts'
import { logBytes } from './_task-log-files.ts'

// The memory store counted in bytes, against an agent process whose memory is read from /proc: a flood of large
// messages past the store's byte budget (A2A_STORE_MAX_BYTES), a task larger than the whole budget, and one task's
// event log past its window (A2A_EVENT_LOG_BYTES). The full-strength flood is test/soak/flood.soak.ts.
// A2A_RUNTIME_ENTRY runs the same tests on another build (they fail on one without the budgets).

const runtimeEntry: Record<string, string> = process.env.A2A_RUNTIME_ENTRY
  ? { A2A_RUNTIME_ENTRY: process.env.A2A_RUNTIME_ENTRY }
  : {}
let server: FloodAgent | undefined
const dirs: string[] = []
afterEach(async () => {
  await server?.kill()
  server = undefined
  vi.unstubAllEnvs()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
const start = async (env: Record<string, string>) => (server = await startFloodAgent({ ...runtimeEntry, ...env }))

const NOT_FOUND = { code: -32602, message: 'Task not found' }
const TASK_BYTES_SOURCE = fileURLToPath(new URL('../../runtime/src/core/_task-bytes.ts', import.meta.url))
const TEXT_CHARS = 1_000_000 // a 1 MiB request body holds this text and its JSON-RPC envelope
const V1 = { 'A2A-Version': '1.0' }

/** A resubscription with Last-Event-ID: the events' JSON when it streams, else the JSON-RPC error. */
async function resume(
  port: number,
  method: string,
  id: string,
  lastEventId: number,
  headers: Record<string, string> = {},
): Promise<{ events?: any[]; ids?: number[]; error?: any }> {
  const response = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'Last-Event-ID': String(lastEventId), ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { id } }),
  })
  const text = await response.text()
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) return { error: JSON.parse(text).error }
  const frames = text.split('\n\n').filter((frame) => frame.includes('data: '))
  return {
    ids: frames.map((frame) => Number(/^id: (\d+)$/m.exec(frame)?.[1])),
    events: frames.map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6))),
  }
}

describe.skipIf(!procfs)('the memory store bounded in bytes (an agent process)', () => {
  it('keeps at most A2A_STORE_MAX_BYTES (16 MiB) under a flood of 240 messages of 1 MiB, 4 at a time: every sender gets its whole answer, RSS stays under 320 MiB (190–220 MiB measured; 575 MiB and growing with the tasks without the budget), the newest tasks are readable, the oldest answer Task not found, running tasks are never evicted', async () => {
    const agent = await start({ A2A_STORE_MAX_BYTES: String(16 * MiB) })
    // Two tasks that run through the whole flood.
    const running = await Promise.all(
      [1, 2].map(
        async () =>
          (await rpc(agent.port, 'message/send', { ...userMessage('hold'), configuration: { blocking: false } })).body
            .result.id as string,
      ),
    )
    const rss = sampleRss(agent.pid)
    const result = await flood(agent.port, { count: 240, concurrency: 4, textChars: TEXT_CHARS })
    const peak = rss.stop()
    expect(agent.alive()).toBe(true)
    const probe = await agent.probe({ gc: true })
    console.info(
      `240 messages of 1 MiB, 4 at a time, store budget 16 MiB: ${result.acknowledged.length} answered in ${(result.ms / 1000).toFixed(1)} s; RSS peak ${mib(peak)}, ${mib(rssOf(agent.pid)!.rss)} after; the store keeps ${probe.storeSize} tasks, ${mib(probe.storeBytes)}`,
    )
    expect(result.problems).toEqual([])
    expect(result.acknowledged).toHaveLength(240)
    expect(peak).toBeLessThan(320 * MiB)
    expect(probe.storeBytes).toBeLessThanOrEqual(16 * MiB)
    // Each echo task holds about 2 MB (the text and its echo): a handful fit, with the two running ones.
    expect(probe.storeSize).toBeGreaterThanOrEqual(2 + 3)
    expect(probe.storeSize).toBeLessThan(16)
    for (const id of result.acknowledged.slice(-3)) {
      const { body } = await rpc(agent.port, 'tasks/get', { id })
      expect(body.result.status.state).toBe('completed')
      expect(body.result.artifacts[0].parts[0].text).toHaveLength('Echo: '.length + TEXT_CHARS)
    }
    for (const id of result.acknowledged.slice(0, 10))
      expect((await rpc(agent.port, 'tasks/get', { id })).body.error).toEqual(NOT_FOUND)
    for (const id of running)
      expect((await rpc(agent.port, 'tasks/get', { id })).body.result.status.state).toBe('working')
    agent.release()
    for (const id of running) {
      await expect
        .poll(async () => (await rpc(agent.port, 'tasks/get', { id })).body.result?.status.state, { timeout: 15_000 })
        .toBe('completed')
    }
    expect(probe.logged).toMatchObject({ warn: 0, error: 0 })
  }, 180_000)

  it.each([
    ['small tasks', 2_000, 40],
    ['tasks of 64 KiB', 300, 64 * 1024],
  ])(
    'counts what its tasks take on the heap, never less (%s: heap growth after a collection against the count)',
    async (_, count, chars) => {
      await start({})
      const before = await server!.probe({ gc: true })
      const result = await flood(server!.port, { count, concurrency: 4, textChars: chars })
      expect(result.problems).toEqual([])
      const after = await server!.probe({ gc: true })
      const heap = after.memory.heapUsed - before.memory.heapUsed
      const counted = after.storeBytes - before.storeBytes
      console.log(
        `${count} tasks of ${chars} characters: heap +${mib(heap)}, the store counts ${mib(counted)} (${(counted / heap).toFixed(2)}x)`,
      )
      expect(after.storeSize - before.storeSize).toBe(count)
      expect(counted).toBeGreaterThanOrEqual(heap * 0.9)
      expect(counted).toBeLessThan(heap * 2.5)
    },
  )

  it('answers a task larger than the whole byte budget in full, then does not keep it: tasks/get answers Task not found, a small task is kept', async () => {
    const agent = await start({ A2A_STORE_MAX_BYTES: String(MiB) })
    // 600,000 characters and their echo: about 1.2 MB, more than the 1 MiB budget.
    const text = 'y'.repeat(600_000)
    const large = (await rpc(agent.port, 'message/send', userMessage(text))).body.result
    expect(large.status.state).toBe('completed')
    expect(large.artifacts[0].parts[0].text).toBe(`Echo: ${text}`)
    const small = (await rpc(agent.port, 'message/send', userMessage('small'))).body.result
    expect((await rpc(agent.port, 'tasks/get', { id: large.id })).body.error).toEqual(NOT_FOUND)
    expect((await rpc(agent.port, 'tasks/get', { id: small.id })).body.result.artifacts[0].parts[0].text).toBe(
      'Echo: small',
    )
    const probe = await agent.probe()
    expect(probe.storeSize).toBe(1)
    expect(probe.storeBytes).toBeLessThan(4096)
  }, 60_000)

  it('keeps the newest A2A_EVENT_LOG_BYTES of a task’s events: a resume inside the window gets the events after it, one from before is told to fetch the task, naming the method of its dialect', async () => {
    const agent = await start({ A2A_EVENT_LOG_BYTES: '16384' })
    // Event 1 is `working`, 2–41 the artifacts of about 1.2 KB each, 42 `completed`: the window holds the last dozen.
    const task = (await rpc(agent.port, 'message/send', userMessage('stream:40:1024'))).body.result
    expect(task.status.state).toBe('completed')
    const inside = await resume(agent.port, 'tasks/resubscribe', task.id, 38)
    expect(inside.ids).toEqual([39, 40, 41, 42])
    expect(inside.events!.at(-1).result ?? inside.events!.at(-1).params).toMatchObject({
      final: true,
      status: { state: 'completed' },
    })
    const before = await resume(agent.port, 'tasks/resubscribe', task.id, 5)
    expect(before.error.code).toBe(-32004)
    expect(before.error.message).toMatch(
      /^The events of task \S+ after 5 are no longer kept .*; fetch the task with tasks\/get for its current state/,
    )
    const beforeV1 = await resume(agent.port, 'SubscribeToTask', task.id, 5, V1)
    expect(beforeV1.error.code).toBe(-32004)
    expect(beforeV1.error.message).toMatch(
      /fetch the task with GetTask for its current state, then, if it is still running, SubscribeToTask without Last-Event-ID/,
    )
    // The task itself is whole: every artifact is in it.
    const got = (await rpc(agent.port, 'tasks/get', { id: task.id })).body.result
    expect(got.artifacts).toHaveLength(40)
  }, 60_000)

  it('holds one task’s event log to its 1 MiB window by default: 50,000 progress updates of 1 KB (50 MB of events) keep under 8 MiB of heap after a collection (under 2 MiB measured, RSS +27 MiB; 42 MiB of heap and RSS +61 MiB without the window)', async () => {
    const agent = await start({})
    const before = await agent.probe({ gc: true })
    const rssBefore = rssOf(agent.pid)!.rss
    const task = (await rpc(agent.port, 'message/send', userMessage('progress:50000:1024'))).body.result
    expect(task.status.state).toBe('completed')
    const after = await agent.probe({ gc: true })
    const rssAfter = rssOf(agent.pid)!.rss
    const heapGrowth = after.memory.heapUsed - before.memory.heapUsed
    console.info(
      `50,000 progress updates of 1 KB on one task: heap +${mib(heapGrowth)} after a collection, RSS ${mib(rssBefore)} → ${mib(rssAfter)} (+${mib(rssAfter - rssBefore)}); the store counts ${mib(after.storeBytes)}`,
    )
    expect(heapGrowth).toBeLessThan(8 * MiB)
    // RSS is stated, not asserted: it also carries garbage not yet returned, which a busy machine leaves longer.
    expect(after.storeBytes).toBeLessThan(MiB + 64 * 1024)
    // The newest events are there to resume from; the first ones are not.
    const last = 50_002
    expect((await resume(agent.port, 'tasks/resubscribe', task.id, last - 2)).ids).toEqual([last - 1, last])
    expect((await resume(agent.port, 'tasks/resubscribe', task.id, 1)).error.message).toMatch(
      /after 1 are no longer kept/,
    )
  }, 60_000)
  it('bounds the file store the same way: past A2A_STORE_MAX_BYTES (16 MiB) the oldest settled tasks leave memory, their records the log, and a restart keeps the newest within the budget', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'a2a-store-bytes-'))
    dirs.push(dir)
    const env = { A2A_STORE: `file:${dir}`, A2A_STORE_MAX_BYTES: String(16 * MiB) }
    let agent = await start(env)
    const result = await flood(agent.port, { count: 40, concurrency: 4, textChars: TEXT_CHARS })
    expect(result.problems).toEqual([])
    const probe = await agent.probe()
    expect(probe.storeBytes).toBeLessThanOrEqual(16 * MiB)
    // Each task counts about 3 MB (the text, its echo, and the echo's event in the log): 4 or 5 fit.
    expect(probe.storeSize).toBeGreaterThanOrEqual(4)
    expect(probe.storeSize).toBeLessThan(8)
    // On disk, the segments of tasks let go are deleted, or compacted once the log outweighs twice what it keeps.
    console.info(`40 tasks of ~3 MB through a 16 MiB budget: the log holds ${mib(logBytes(dir))}`)
    expect(logBytes(dir)).toBeLessThan(64 * MiB)
    const newest = result.acknowledged.at(-1)!
    expect((await rpc(agent.port, 'tasks/get', { id: result.acknowledged[0] })).body.error).toEqual(NOT_FOUND)
    await agent.kill()
    agent = await start(env)
    const restarted = await agent.probe()
    expect(restarted.storeSize).toBe(probe.storeSize)
    expect(restarted.storeBytes).toBeLessThanOrEqual(16 * MiB)
    expect((await rpc(agent.port, 'tasks/get', { id: newest })).body.result.artifacts[0].parts[0].text).toHaveLength(
      'Echo: '.length + TEXT_CHARS,
    )
    expect(restarted.logged).toMatchObject({ warn: 0, error: 0 })
  }, 120_000)
})

describe('the byte budgets of the memory store (configuration)', () => {
  it.each([
    ['maxBytes', 'A2A_STORE_MAX_BYTES'],
    ['eventLogBytes', 'A2A_EVENT_LOG_BYTES'],
  ] as const)(
    'refuses a bad %s from the option or %s with a ConfigurationError naming both and the value; the option wins over the variable',
    (option, env) => {
      vi.stubEnv(env, 'lots')
      expect(() => createMemoryStore()).toThrow(ConfigurationError)
      expect(() => createMemoryStore()).toThrow(
        `${option} (${env}) must be a whole number of bytes from 1 to ${Number.MAX_SAFE_INTEGER} (got "lots")`,
      )
      expect(createMemoryStore({ [option]: 4096 })[option]).toBe(4096)
      vi.stubEnv(env, '2048')
      expect(createMemoryStore()[option]).toBe(2048)
      expect(() => createMemoryStore({ [option]: 0.5 })).toThrow(
        `${option} (${env}) must be a whole number of bytes from 1 to ${Number.MAX_SAFE_INTEGER} (got 0.5)`,
      )
    },
  )

  it('shrinks the event logs of running tasks once they alone pass the budget: 100 tasks streaming 500 chunks each keep the store near its 4 MiB (26 MiB of logs otherwise)', () => {
    const store = createMemoryStore({ maxBytes: 4 * MiB, eventLogBytes: MiB })
    const tasks = Array.from({ length: 100 }, (_, i) => {
      const ids = { taskId: `running-${i}`, contextId: `context-${i}` }
      const task = {
        kind: 'task' as const,
        id: ids.taskId,
        contextId: ids.contextId,
        status: { state: 'working' as const, timestamp: new Date().toISOString() },
        artifacts: [] as any[],
        history: [
          {
            kind: 'message' as const,
            messageId: `m-${i}`,
            role: 'user' as const,
            parts: [{ kind: 'text' as const, text: 'stream' }],
            ...ids,
          },
        ],
      }
      store.create(task)
      return { task, ids }
    })
    for (let chunk = 0; chunk < 500; chunk++) {
      for (const { task, ids } of tasks) {
        const artifact = {
          artifactId: `a-${task.id}`,
          parts: [{ kind: 'text' as const, text: ` word${chunk}` }],
          lastChunk: false,
        }
        if (chunk === 0) task.artifacts.push({ ...artifact, parts: [...artifact.parts] })
        else
          task.artifacts[0].parts[0] = { kind: 'text', text: task.artifacts[0].parts[0].text + artifact.parts[0]!.text }
        store.append(task, {
          kind: 'artifact-update',
          seq: chunk + 1,
          ...ids,
          artifact,
          append: chunk > 0,
          lastChunk: false,
        })
      }
    }
    // Every task is running: none can go. Their logs gave way to about the budget (a walk frees at least a
    // sixteenth of it, or waits until the store has grown that much again).
    expect(store.size).toBe(100)
    expect(store.bytes).toBeLessThan(4 * MiB + MiB)
    // Each log still ends with its task's last event, so a resume from it is told it is up to date.
    expect(store.lastSeq('running-0')).toBe(500)
    expect(store.events('running-0', 499)).toHaveLength(1)
    expect(store.events('running-0', 1)).toBeUndefined()
  })

  it('counts the ids a client chooses by their length: a message with a 512 KiB messageId and contextId weighs over 1 MiB', () => {
    const store = createMemoryStore({ maxBytes: 64 * MiB })
    const long = 'x'.repeat(512 * 1024)
    const message = {
      kind: 'message' as const,
      messageId: long,
      role: 'user' as const,
      parts: [{ kind: 'text' as const, text: 'hi' }],
      taskId: 't-long-ids',
      contextId: long,
    }
    const task = {
      kind: 'task' as const,
      id: 't-long-ids',
      contextId: long,
      status: { state: 'submitted' as const, timestamp: new Date().toISOString() },
      artifacts: [],
      history: [message],
    }
    store.create(task)
    expect(store.bytes).toBeGreaterThan(3 * 512 * 1024)
    expect(store.bytes).toBeLessThan(Buffer.byteLength(JSON.stringify(task)) * 1.1)
  })

  it('keeps the newest event even when it alone is larger than the event-log window, so the task’s next turn is numbered after it', () => {
    const store = createMemoryStore({ eventLogBytes: 1024 })
    const ids = { taskId: 't-large-question', contextId: 'c-1' }
    const task = {
      kind: 'task' as const,
      id: ids.taskId,
      contextId: ids.contextId,
      status: { state: 'submitted' as const, timestamp: new Date().toISOString() },
      artifacts: [],
      history: [],
    }
    store.create(task)
    store.append(task, {
      kind: 'status-update',
      seq: 1,
      ...ids,
      status: { state: 'working', timestamp: new Date().toISOString() },
      final: false,
    })
    const question = {
      kind: 'message' as const,
      messageId: 'q',
      role: 'agent' as const,
      parts: [{ kind: 'text' as const, text: '?'.repeat(5000) }],
      ...ids,
    }
    store.append(task, {
      kind: 'status-update',
      seq: 2,
      ...ids,
      status: { state: 'input-required', timestamp: new Date().toISOString(), message: question },
      final: true,
    })
    expect(store.events(ids.taskId)!.map((event) => event.seq)).toEqual([2])
    expect(store.lastSeq(ids.taskId)).toBe(2)
    expect(store.events(ids.taskId, 1)!.map((event) => event.seq)).toEqual([2])
    expect(store.events(ids.taskId, 0)).toBeUndefined()
  })

  it('takes a quarter of the heap limit for the store and the running tasks when that is less than 128 and 256 MiB (a process on a 256 MiB heap)', () => {
    assertRuntimeBuilt()
    const script = `
      import { getHeapStatistics } from 'node:v8'
      const { createMemoryStore } = await import(${JSON.stringify(DIST_INDEX)})
      const { createJiti } = await import('jiti')
      const { readTaskByteLimits } = await createJiti(import.meta.url).import(${JSON.stringify(TASK_BYTES_SOURCE)})
      const store = createMemoryStore({ env: {} })
      store.close()
      console.log(JSON.stringify({ limit: getHeapStatistics().heap_size_limit, store: store.maxBytes, running: readTaskByteLimits({}, {}).maxRunningBytes }))`
    // The running tasks' budget is internal (bundled into a chunk of the build): read from its source through jiti.
    const args = ['--max-old-space-size=256', '--input-type=module', '-e', script]
    const result = spawnSync(process.execPath, args, {
      encoding: 'utf8',
    })
    expect(result.stderr).toBe('')
    const { limit, store, running } = JSON.parse(result.stdout)
    expect(limit).toBeLessThan(512 * MiB)
    expect(store).toBe(Math.floor(limit / 4))
    expect(running).toBe(Math.floor(limit / 4))
  })

  it('defaults to 128 MiB for the store and 1 MiB for one task’s event log', () => {
    vi.stubEnv('A2A_STORE_MAX_BYTES', '')
    vi.stubEnv('A2A_EVENT_LOG_BYTES', '')
    const store = createMemoryStore()
    expect(store.maxBytes).toBe(134_217_728)
    expect(store.eventLogBytes).toBe(1_048_576)
    expect([DEFAULT_STORE_MAX_BYTES, DEFAULT_EVENT_LOG_BYTES]).toEqual([134_217_728, 1_048_576])
  })
})
