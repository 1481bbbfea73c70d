import type { TaskHandle } from 'a2a-runtime'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { agent, deferred } from './_agents.ts'
import { inProcess, type Target } from './_transports.ts'

// The SSE heartbeat on a clock the test moves: whether a comment comes, and after how long, is decided by
// the period alone, never by how fast this machine is. Only the interval timer is faked (the heartbeat's);
// the stream's own flushing (microtasks) and everything else run as usual.

const streamBody = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'message/stream',
  params: { message: { role: 'user', messageId: 'm-heartbeat', parts: [{ kind: 'text', text: 'x' }] } },
})
const HOUR_MS = 3_600_000
const PERIOD_MS = 5_000

let savedEnv: string | undefined
beforeEach(() => {
  savedEnv = process.env.A2A_SSE_HEARTBEAT_MS
  delete process.env.A2A_SSE_HEARTBEAT_MS
})
afterEach(() => {
  vi.useRealTimers()
  if (savedEnv === undefined) delete process.env.A2A_SSE_HEARTBEAT_MS
  else process.env.A2A_SSE_HEARTBEAT_MS = savedEnv
})

/** An agent that works until released, and a stream of it that stays open meanwhile. */
async function quietStream(options: Parameters<typeof inProcess.start>[1] = {}) {
  const gate = deferred()
  const handle = deferred<TaskHandle>()
  const target: Target = await inProcess.start(
    agent(async (_ctx, task) => {
      task.working('waiting')
      handle.resolve(task)
      await gate.promise
      task.artifact('done')
      task.complete()
    }),
    options,
  )
  // Faked once the app exists: only the stream's timer (created as the stream opens) runs on the test's clock.
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
  const response = await target.post(streamBody)
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  // The stream is open and has sent its first events: from here on it is quiet until the agent is released.
  while (!text.includes('"working"')) {
    const chunk = await reader.read()
    if (chunk.done) throw new Error(`The stream ended before the task was working: ${text}`)
    text += decoder.decode(chunk.value, { stream: true })
  }
  return {
    /** The running task, to send events on the test's clock. */
    task: await handle.promise,
    /** Releases the agent and reads the stream to its end: every frame, comments included. */
    async finish(): Promise<string[]> {
      gate.resolve()
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
        text += decoder.decode(chunk.value, { stream: true })
      const frames = text.split('\n\n').filter(Boolean)
      // The events are whole whatever came between them, and the task completed.
      expect(frames.filter((frame) => !frame.startsWith(':')).every((frame) => frame.startsWith('data: '))).toBe(true)
      expect(JSON.parse(frames.at(-1)!.slice(6)).params).toMatchObject({ final: true, status: { state: 'completed' } })
      return frames
    },
  }
}

const comments = (frames: string[]) => frames.filter((frame) => frame.startsWith(':'))

describe('the SSE heartbeat, on a clock the test moves', () => {
  it('is off by default: a stream quiet for an hour gets no comment, and its framing stays exactly data: lines', async () => {
    const stream = await quietStream()
    vi.advanceTimersByTime(HOUR_MS)
    expect(comments(await stream.finish())).toEqual([])
  })

  it('is off with sseHeartbeatMs: 0, even when A2A_SSE_HEARTBEAT_MS is set (the option wins)', async () => {
    process.env.A2A_SSE_HEARTBEAT_MS = String(PERIOD_MS)
    const stream = await quietStream({ sseHeartbeatMs: 0 })
    vi.advanceTimersByTime(HOUR_MS)
    expect(comments(await stream.finish())).toEqual([])
  })

  it.each([
    ['the sseHeartbeatMs option', { sseHeartbeatMs: PERIOD_MS }, undefined],
    ['A2A_SSE_HEARTBEAT_MS', {}, String(PERIOD_MS)],
  ] as const)(
    'with %s, writes ": keep-alive" once per period of quiet: none within the first period, one per period after',
    async (_source, options, env) => {
      if (env !== undefined) process.env.A2A_SSE_HEARTBEAT_MS = env
      const stream = await quietStream(options)
      // Within one period of the last event, nothing: the stream was not quiet that long.
      vi.advanceTimersByTime(PERIOD_MS - 1)
      // Then ten periods of quiet: a comment for each period the stream was quiet throughout (nine or ten,
      // depending on where the last event fell in the first period), never one per shorter period.
      vi.advanceTimersByTime(10 * PERIOD_MS)
      const frames = await stream.finish()
      expect(comments(frames).every((frame) => frame === ': keep-alive')).toBe(true)
      expect(comments(frames).length).toBeGreaterThanOrEqual(9)
      expect(comments(frames).length).toBeLessThanOrEqual(10)
    },
  )

  it('writes no comment before a whole period of quiet has passed', async () => {
    const stream = await quietStream({ sseHeartbeatMs: PERIOD_MS })
    vi.advanceTimersByTime(PERIOD_MS - 1)
    expect(comments(await stream.finish())).toEqual([])
  })

  it('writes no comment on a stream that never stays quiet for a whole period', async () => {
    const stream = await quietStream({ sseHeartbeatMs: PERIOD_MS })
    for (let i = 0; i < 20; i++) {
      stream.task.working(`step ${i}`)
      vi.advanceTimersByTime(PERIOD_MS / 2)
    }
    const frames = await stream.finish()
    expect(frames.filter((frame) => frame.includes('step 19'))).toHaveLength(1)
    expect(comments(frames)).toEqual([])
  })
})
