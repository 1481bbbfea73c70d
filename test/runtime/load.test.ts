import type { Agent } from 'node:http'
import { performance } from 'node:perf_hooks'
import { afterAll, expect, it } from 'vitest'
import {
  eachLimited,
  httpAgent,
  jsonRpc,
  type OpenStream,
  openStream,
  rpc,
  type StreamResult,
  summarize,
  taskIdOf,
} from './_load-client.ts'
import { type AgentProcess, fdsOf, pollUntil, procfs, rssOf, startAgentProcess } from './_load-process.ts'
import { userMessage, userMessageV1 } from './_messages.ts'

/**
 * The load item of the hardening issue, bounded and on loopback: 1,000 SSE streams open at once against an
 * agent process (the defaults allow 1,000 running tasks; maxStreams is set to exactly 1,000), every one read
 * to its end. No stream is lost or refused, every task ends completed with all its events, none is left
 * working, and the server's file descriptors come back to where they were once the clients have gone.
 * The long mixed soak is `npm run soak` (test/soak/).
 */

const STREAMS = 1_000
const ARTIFACTS = 3
const GAP_MS = 20
const SECOND_WAVE = 50
/** File descriptors the server may hold above its baseline after the clients have gone (none expected). */
const FD_TOLERANCE = 3

const EXPECTED_PLATFORM = [
  'status:working',
  'status:working:held',
  ...Array.from({ length: ARTIFACTS }, (_, i) => `artifact:part ${i + 1}`),
  'status:completed:final',
]
// v1.0 streams open with the Task (already working), then the same events.
const EXPECTED_V1 = ['task:working', ...EXPECTED_PLATFORM]

let agentProcess: AgentProcess | undefined
const agents: Agent[] = []
const streams: OpenStream[] = []
let sampler: ReturnType<typeof setInterval> | undefined

// Whatever happened, no socket and no process outlives the file: streams and agents are destroyed, the
// agent process is killed by its PID.
afterAll(async () => {
  clearInterval(sampler)
  for (const stream of streams.splice(0)) stream.destroy()
  for (const agent of agents.splice(0)) agent.destroy()
  await agentProcess?.kill()
})

const track = (agent: Agent) => {
  agents.push(agent)
  return agent
}
const mb = (bytes: number | undefined) =>
  bytes === undefined || Number.isNaN(bytes) ? 'n/a' : `${(bytes / 1024 / 1024).toFixed(1)} MB`

/** The fd count once it stops moving (two equal readings 100 ms apart, at most 5 s). */
async function steadyFds(pid: number): Promise<number | undefined> {
  let last = fdsOf(pid)?.total
  const stable = await pollUntil(
    () => {
      const now = fdsOf(pid)?.total
      const same = now === last
      last = now
      return { now, same }
    },
    (reading) => reading.same,
    5_000,
  )
  return stable.now
}

it(`holds ${STREAMS} SSE streams open at once, ends every task completed with all its events, leaves none working, and gives back its file descriptors`, {
  timeout: 90_000,
}, async () => {
  const began = performance.now()
  agentProcess = await startAgentProcess({ MAX_STREAMS: String(STREAMS) })
  const agent = agentProcess
  const { url, pid } = agent

  // Warm up (first requests load code and allocate what the server keeps), then read the baseline with no
  // client connected.
  const warm = track(httpAgent(true))
  for (let i = 0; i < 10; i++) {
    expect((await rpc(url, 'message/send', userMessage(`warm ${i}`), { agent: warm })).body.result.status.state).toBe(
      'completed',
    )
    const stream = openStream(url, jsonRpc('message/stream', userMessage('stream:1:0')), { agent: warm })
    expect((await stream.done).ended).toBe(true)
  }
  warm.destroy()
  const warmTasks = 20
  await pollUntil(
    () => agent.probe(),
    (probe) => probe.connections === 0,
    5_000,
  )
  const baselineFds = await steadyFds(pid)
  const baselineRss = rssOf(pid)?.rss

  // Sample the server's descriptors while the streams are open.
  let peakFds = 0
  let peakSockets = 0
  const sample = () => {
    const fds = fdsOf(pid)
    if (!fds) return
    peakFds = Math.max(peakFds, fds.total)
    peakSockets = Math.max(peakSockets, fds.sockets)
  }
  sampler = setInterval(sample, 100)

  // One connection per stream (no keep-alive), no cap on sockets: all 1,000 requests leave at once.
  const streamAgent = track(httpAgent(false))
  let firstEvents = 0
  const waveStarted = performance.now()
  const results: Array<Promise<StreamResult>> = []
  for (let i = 0; i < STREAMS; i++) {
    const v1 = i % 2 === 1
    const text = `hold:${ARTIFACTS}:${GAP_MS}`
    const body = v1
      ? jsonRpc('SendStreamingMessage', userMessageV1(text), i)
      : jsonRpc('message/stream', userMessage(text), i)
    const stream = openStream(url, body, {
      agent: streamAgent,
      timeoutMs: 60_000,
      onFrame: (_frame, index) => index === 0 && firstEvents++,
    })
    streams.push(stream)
    results.push(stream.done)
  }
  let finishedEarly = 0
  for (const done of results) void done.then((result) => result.frames.length === 0 && finishedEarly++)

  // Every stream has its first event (or has ended without one: a refusal, checked below) while the agent
  // holds all of them.
  await pollUntil(
    () => firstEvents + finishedEarly,
    (count) => count === STREAMS,
    40_000,
    50,
  )
  const allOpenMs = performance.now() - waveStarted
  sample()
  const atPeak = await agent.probe()
  const fdsAtPeak = fdsOf(pid)
  expect(finishedEarly, 'streams that ended before their first event').toBe(0)
  expect(firstEvents).toBe(STREAMS)
  // The agent really runs 1,000 tasks at once, and the server holds 1,000 connections.
  expect(atPeak.active).toBe(STREAMS)
  expect(atPeak.peak).toBe(STREAMS)
  expect(atPeak.connections).toBeGreaterThanOrEqual(STREAMS)
  if (procfs) expect(fdsAtPeak!.sockets).toBeGreaterThanOrEqual(STREAMS)

  agent.release()
  const all = await Promise.all(results)
  const waveMs = performance.now() - waveStarted
  clearInterval(sampler)
  streams.splice(0)

  // Every stream: HTTP 200, an event stream, read to its end, exactly the expected events of one task.
  const problems: string[] = []
  const taskIds = new Set<string>()
  all.forEach((result, i) => {
    const expected = i % 2 === 1 ? EXPECTED_V1 : EXPECTED_PLATFORM
    const summary = result.frames.map((frame) => summarize(frame.data))
    const ids = new Set(result.frames.map((frame) => taskIdOf(frame.data)))
    const id = [...ids][0]
    if (id) taskIds.add(id)
    const ok =
      result.status === 200 &&
      result.contentType.startsWith('text/event-stream') &&
      result.ended &&
      !result.timedOut &&
      ids.size === 1 &&
      JSON.stringify(summary) === JSON.stringify(expected)
    if (!ok && problems.length < 5)
      problems.push(
        `stream ${i}: HTTP ${result.status}, ended ${result.ended}, timed out ${result.timedOut}, ${ids.size} task ids, events ${JSON.stringify(summary)} ${result.text.slice(0, 200)}`,
      )
  })
  expect(problems).toEqual([])
  expect(all.filter((result) => result.status >= 500)).toHaveLength(0)
  expect(taskIds.size).toBe(STREAMS)

  const afterWave = await agent.probe()
  expect(afterWave.active).toBe(0)
  expect(afterWave.finished).toBe(afterWave.started)

  // No lost task, no stuck task: each is in the store, completed with its artifacts; none working.
  const control = track(httpAgent(true))
  const notCompleted: string[] = []
  await eachLimited([...taskIds], 50, async (id) => {
    const reply = await rpc(url, 'tasks/get', { id }, { agent: control })
    const task = reply.body?.result
    if (reply.status !== 200 || task?.status.state !== 'completed' || task.artifacts.length !== ARTIFACTS)
      notCompleted.push(`${id}: HTTP ${reply.status} ${reply.text.slice(0, 200)}`)
  })
  expect(notCompleted.slice(0, 5)).toEqual([])
  const total = async (status?: string) =>
    (await rpc(url, 'ListTasks', { pageSize: 1, ...(status && { status }) }, { agent: control })).body.result.totalSize
  expect(await total('TASK_STATE_WORKING')).toBe(0)
  expect(await total('TASK_STATE_SUBMITTED')).toBe(0)
  expect(await total('TASK_STATE_COMPLETED')).toBe(STREAMS + warmTasks)
  expect(await total()).toBe(STREAMS + warmTasks)

  // The stream and running-task counts came back down: with both caps at 1,000 a second wave is taken whole.
  const second = await Promise.all(
    Array.from(
      { length: SECOND_WAVE },
      (_, i) =>
        openStream(
          url,
          jsonRpc(
            i % 2 ? 'SendStreamingMessage' : 'message/stream',
            i % 2 ? userMessageV1('stream:1:0') : userMessage('stream:1:0'),
            i,
          ),
          {
            agent: streamAgent,
          },
        ).done,
    ),
  )
  expect(
    second.map((result) => `${result.status} ${result.frames.map((frame) => summarize(frame.data)).at(-1)}`),
  ).toEqual(Array(SECOND_WAVE).fill('200 status:completed:final'))

  // The clients go; the server closes every connection and is back to its baseline of descriptors.
  control.destroy()
  streamAgent.destroy()
  const closed = await pollUntil(
    () => agent.probe(),
    (probe) => probe.connections === 0,
    10_000,
  )
  expect(closed.connections).toBe(0)
  let afterFds: number | undefined
  if (procfs && baselineFds !== undefined) {
    afterFds = (await pollUntil(
      () => fdsOf(pid)?.total ?? Number.POSITIVE_INFINITY,
      (fds) => fds <= baselineFds + FD_TOLERANCE,
      10_000,
    )) as number
    expect(afterFds).toBeLessThanOrEqual(baselineFds + FD_TOLERANCE)
  }
  // Nothing went wrong on the server's side (it logs every unexpected error before answering -32603).
  expect(closed.logged.error, closed.logged.last.join('\n')).toBe(0)
  expect(closed.logged.warn, closed.logged.last.join('\n')).toBe(0)

  const rss = rssOf(pid)
  const collected = await agent.probe({ gc: true })
  console.log(
    [
      `load: ${STREAMS} streams open at once (agent peak ${atPeak.peak} runs, ${atPeak.connections} connections) after ${allOpenMs.toFixed(0)} ms; wave read to its end in ${waveMs.toFixed(0)} ms`,
      `fds: baseline ${baselineFds ?? 'n/a'}, peak ${peakFds || 'n/a'} (${peakSockets || 'n/a'} sockets), after ${afterFds ?? 'n/a'}`,
      `rss: baseline ${mb(baselineRss)}, peak ${mb(rss?.peak)}, after ${mb(rss?.rss)}; heap used at peak ${mb(atPeak.memory.heapUsed)}, after a GC ${mb(collected.memory.heapUsed)} (${collected.storeSize} tasks kept)`,
      `total ${(performance.now() - began).toFixed(0)} ms`,
    ].join('\n'),
  )
})
