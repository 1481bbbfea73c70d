import { createA2AApp, defineAgent } from 'a2a-runtime'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigurationError } from '../../runtime/src/errors.ts'
import { procfs } from './_load-process.ts'
import {
  call,
  MiB,
  message,
  mib,
  pollUntil,
  readingSubscriber,
  readRest,
  rpcBody,
  rssOf,
  type SlowReadersAgent,
  sampleRss,
  stalledClients,
  startSlowReadersAgent,
} from './_slow-readers.ts'

// Clients that stop reading, against an agent process whose memory is read from /proc: what the server has
// written for them waits, counted, up to a cap per stream and a budget across the server, and a response whose
// client takes nothing for the write timeout is cut. A2A_RUNTIME_ENTRY runs the same tests on another build.

const runtimeEntry: Record<string, string> = process.env.A2A_RUNTIME_ENTRY
  ? { A2A_RUNTIME_ENTRY: process.env.A2A_RUNTIME_ENTRY }
  : {}
let agent: SlowReadersAgent | undefined
afterEach(async () => {
  await agent?.kill()
  agent = undefined
})

const start = async (env: Record<string, string> = {}) =>
  (agent = await startSlowReadersAgent({ ...runtimeEntry, ...env }))
const resultOf = (text: string) => JSON.parse(text).result

describe.skipIf(!procfs)('backpressure on every response (an agent process, clients that stop reading)', () => {
  it('drops 500 subscribers that stop reading a busy stream (10 MB of events, more than the socket buffers of the kernel take): RSS grows less than 128 MiB (44 MiB measured), the task completes and a reading subscriber gets every event', async () => {
    const server = await start()
    const ARTIFACTS = 640
    const sent = await call(
      server.port,
      rpcBody('message/send', { ...message(`burst:${ARTIFACTS}:16384`), configuration: { blocking: false } }),
    )
    const taskId = resultOf(sent.text).id as string
    await server.probe({ gc: true })
    const before = rssOf(server.pid)!.rss
    const rss = sampleRss(server.pid)
    const stalled = await stalledClients(server.port, rpcBody('tasks/resubscribe', { id: taskId }), 500)
    expect(stalled.every((client) => client.status === 200)).toBe(true)
    const reader = readingSubscriber(server.port, rpcBody('tasks/resubscribe', { id: taskId }))
    // Every subscriber is attached before the agent starts writing.
    await pollUntil(
      () => server.probe(),
      (probe) => probe.connections >= 501,
      10_000,
    )
    server.release()
    const { events } = await reader
    const artifacts = events.filter((event) => event.method === 'tasks/artifactUpdate')
    expect(artifacts).toHaveLength(ARTIFACTS)
    expect(artifacts.map((event) => Number(/^part (\d+) /.exec(event.params.artifact.parts[0].text)![1]))).toEqual(
      Array.from({ length: ARTIFACTS }, (_, i) => i + 1),
    )
    expect(events.at(-1).params).toMatchObject({ final: true, status: { state: 'completed' } })
    // Each stopped subscriber was dropped and its connection closed.
    const after = await pollUntil(
      () => server.probe(),
      (probe) => probe.dropped >= 500 && probe.connections === 0,
      15_000,
    )
    const peak = rss.stop()
    console.info(
      `500 subscribers that stop reading a 10 MB stream: RSS ${mib(before)} → peak ${mib(peak)} (+${mib(peak - before)}), ${after.dropped} dropped`,
    )
    expect(after.dropped).toBe(500)
    expect(after.connections).toBe(0)
    expect(peak - before).toBeLessThan(128 * MiB)
    const task = resultOf((await call(server.port, rpcBody('tasks/get', { id: taskId }))).text)
    expect(task.status.state).toBe('completed')
    expect(after.logged).toMatchObject({ warn: 0, error: 0 })
    for (const client of stalled) client.socket.destroy()
  }, 120_000)

  it('answers 300 tasks/get of a 7 MB task that are never read: what does not fit the budget gets 503 fast, the rest is cut after the write timeout, RSS grows less than 256 MiB (130–160 MiB measured with the 64 MiB budget, most of it the garbage of serialising the task for each request), a reading client gets the task', async () => {
    const server = await start({ A2A_WRITE_TIMEOUT_MS: '2000' })
    const TASK_CHARS = 7_000_000
    const created = resultOf((await call(server.port, rpcBody('message/send', message(`big:${TASK_CHARS}`)))).text)
    expect(created.artifacts[0].parts[0].text).toHaveLength(TASK_CHARS)
    await server.probe({ gc: true })
    const before = rssOf(server.pid)!.rss
    const rss = sampleRss(server.pid)
    const stalled = await stalledClients(server.port, rpcBody('tasks/get', { id: created.id }), 300)
    const held = stalled.filter((client) => client.status === 200)
    const refused = stalled.filter((client) => client.status === 503)
    expect(held.length + refused.length).toBe(300)
    expect(refused.length).toBeGreaterThan(0)
    for (const client of refused) {
      expect(client.head).toMatch(/\r\nretry-after: 1\r\n/i)
      expect(client.head).toMatch(/\r\nconnection: close\r\n/i)
      expect(client.head).toContain('maxPendingResponseBytes')
    }
    const slowestRefusal = Math.max(...refused.map((client) => client.ms))
    // Refused before any of the answer is written: fast even on a loaded machine.
    expect(slowestRefusal).toBeLessThan(5_000)
    // A held answer is cut once its client has read nothing for the write timeout (one the kernel's buffers took
    // whole has ended, and its idle connection closes after the keep-alive timeout).
    const after = await pollUntil(
      () => server.probe(),
      (probe) => probe.connections === 0,
      20_000,
    )
    const peak = rss.stop()
    console.info(
      `300 tasks/get of a 7 MB task never read: ${held.length} held then cut, ${refused.length} refused with 503 (slowest ${slowestRefusal.toFixed(0)} ms); RSS ${mib(before)} → peak ${mib(peak)} (+${mib(peak - before)})`,
    )
    expect(after.cut).toBeGreaterThan(0)
    expect(after.cut).toBeLessThanOrEqual(held.length)
    expect(after.connections).toBe(0)
    // Before this budget: +2 GiB and more (a whole copy of the task in Node's buffer for each client).
    expect(peak - before).toBeLessThan(256 * MiB)
    // The budget is free again: a client that reads gets the whole task.
    const got = await call(server.port, rpcBody('tasks/get', { id: created.id }))
    expect(got.status).toBe(200)
    expect(resultOf(got.text).artifacts[0].parts[0].text).toHaveLength(TASK_CHARS)
    expect(after.logged).toMatchObject({ warn: 0, error: 0 })
    for (const client of stalled) client.socket.destroy()
  }, 120_000)

  it('cuts a stream whose client stops reading while events wait for it, after the write timeout; a quiet stream with nothing waiting stays open', async () => {
    // A cap on the backlog this high leaves the write timeout to act.
    const server = await start({ A2A_WRITE_TIMEOUT_MS: '1500', A2A_SSE_MAX_BACKLOG_BYTES: String(256 * MiB) })
    const quietTask = resultOf(
      (await call(server.port, rpcBody('message/send', { ...message('quiet'), configuration: { blocking: false } })))
        .text,
    )
    const [quiet] = await stalledClients(server.port, rpcBody('tasks/resubscribe', { id: quietTask.id }), 1)
    expect(quiet!.status).toBe(200)
    // A stream of 10 MB (more than the kernel's socket buffers take) to a client that reads only its first bytes.
    const [busy] = await stalledClients(server.port, rpcBody('message/stream', message('stream:640:16384')), 1)
    expect(busy!.status).toBe(200)
    const cut = await pollUntil(
      () => server.probe(),
      (probe) => probe.cut >= 1,
      20_000,
    )
    expect(cut).toMatchObject({ cut: 1, dropped: 0 })
    // The quiet stream was quiet longer than the busy one waited, and is still open: its task's end reaches it.
    server.release()
    const rest = await readRest(quiet!)
    expect(rest).toMatch(/"final":true/)
    expect(rest).toMatch(/"state":"completed"/)
    expect((await server.probe()).cut).toBe(1)
    busy!.socket.destroy()
  }, 60_000)

  it('a dropped subscriber resumes with Last-Event-ID and gets every event it missed, once, then the end, while they are in the event-log window', async () => {
    // The client's kernel buffers take megabytes before the backlog builds here, so the events it misses pass the
    // default 1 MiB event-log window; a window that holds them all is what this resume needs (past it, the client
    // is told to fetch the task: store-bytes.test.ts).
    const server = await start({
      A2A_SSE_MAX_BACKLOG_BYTES: String(64 * 1024),
      A2A_EVENT_LOG_BYTES: String(32 * 1024 * 1024),
    })
    const ARTIFACTS = 300
    const task = resultOf(
      (
        await call(
          server.port,
          rpcBody('message/send', { ...message(`burst:${ARTIFACTS}:36000`), configuration: { blocking: false } }),
        )
      ).text,
    )
    const [stalled] = await stalledClients(server.port, rpcBody('tasks/resubscribe', { id: task.id }), 1)
    // The stream opens with the task's status, numbered: where a resume starts from.
    const lastId = /\bid: (\d+)\n/.exec(stalled!.head)?.[1]
    expect(lastId).toBeDefined()
    server.release()
    await pollUntil(
      () => server.probe(),
      (probe) => probe.dropped >= 1,
      15_000,
    )
    expect((await server.probe()).dropped).toBe(1)
    // The resume reads what it missed after the task has ended: the whole burst comes from the event log. (Read
    // while the agent still writes, live events would queue behind a replay the client, slowed by a busy machine,
    // has not taken yet, and a 64 KiB backlog would drop it too: that is the cut this suite's other tests pin.)
    await pollUntil(
      async () => resultOf((await call(server.port, rpcBody('tasks/get', { id: task.id }))).text).status.state,
      (state) => state === 'completed',
      30_000,
    )
    const resumed = await readingSubscriber(server.port, rpcBody('tasks/resubscribe', { id: task.id }), {
      'last-event-id': lastId!,
    })
    const parts = resumed.events
      .filter((event) => event.method === 'tasks/artifactUpdate')
      .map((event) => Number(/^part (\d+) /.exec(event.params.artifact.parts[0].text)![1]))
    expect(parts).toEqual(Array.from({ length: ARTIFACTS }, (_, i) => i + 1))
    expect(resumed.events.at(-1).params).toMatchObject({ final: true, status: { state: 'completed' } })
    stalled!.socket.destroy()
  }, 60_000)
})

describe('the budgets of unread bytes as options', () => {
  const agentOnly = defineAgent({
    card: { name: 'Options', description: 'Checks options', version: '1.0.0' },
    execute: (_ctx, task) => task.complete(),
  })
  const ENV = ['A2A_SSE_MAX_BACKLOG_BYTES', 'A2A_MAX_PENDING_RESPONSE_BYTES', 'A2A_WRITE_TIMEOUT_MS'] as const

  it('refuses a value that is not a positive whole number, naming the option, its variable and the value', () => {
    expect(() => createA2AApp(agentOnly, { writeTimeoutMs: 0 })).toThrow(ConfigurationError)
    expect(() => createA2AApp(agentOnly, { writeTimeoutMs: 0 })).toThrow(
      'writeTimeoutMs (A2A_WRITE_TIMEOUT_MS) must be a whole number from 1 to 2147483647 (got 0)',
    )
    expect(() => createA2AApp(agentOnly, { maxStreamBacklogBytes: 1.5 })).toThrow(
      'maxStreamBacklogBytes (A2A_SSE_MAX_BACKLOG_BYTES) must be a whole number',
    )
    const saved = ENV.map((name) => process.env[name])
    try {
      process.env.A2A_MAX_PENDING_RESPONSE_BYTES = '64MiB'
      expect(() => createA2AApp(agentOnly)).toThrow(
        'maxPendingResponseBytes (A2A_MAX_PENDING_RESPONSE_BYTES) must be a whole number from 1 to 9007199254740991 (got "64MiB")',
      )
      process.env.A2A_MAX_PENDING_RESPONSE_BYTES = '1048576'
      // The option wins over the variable.
      expect(() => createA2AApp(agentOnly, { maxPendingResponseBytes: 2048 })).not.toThrow()
    } finally {
      for (const [i, name] of ENV.entries()) {
        if (saved[i] === undefined) delete process.env[name]
        else process.env[name] = saved[i]
      }
    }
  })
})
