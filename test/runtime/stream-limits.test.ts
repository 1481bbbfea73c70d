import { describe, expect, it } from 'vitest'
import { agent, deferred } from './_agents.ts'
import { readEvents } from './_sse.ts'
import { transports } from './_transports.ts'

const streamBody = (text: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'message/stream',
    params: { message: { role: 'user', messageId: `m-${Math.random()}`, parts: [{ kind: 'text', text }] } },
  })

/** Works until the test opens its gate. */
function waitingAgent() {
  const gate = deferred()
  return {
    agent: agent(async (_ctx, task) => {
      task.working('waiting')
      await gate.promise
      task.artifact('done')
      task.complete()
    }),
    open: gate.resolve,
  }
}

/** Reads a live body until its text matches `pattern` (failing past `ms`); then `rest()` reads it to its end. */
async function readUntil(
  response: Response,
  pattern: RegExp,
  ms: number,
): Promise<{ text: string; rest: () => Promise<string> }> {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  const until = Date.now() + ms
  while (!pattern.test(text)) {
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<'late'>(
      (resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, until - Date.now()))),
    )
    const chunk = await Promise.race([reader.read(), late])
    clearTimeout(timer)
    if (chunk === 'late') throw new Error(`the stream did not show ${pattern} within ${ms} ms: ${JSON.stringify(text)}`)
    if (chunk.done) throw new Error(`the stream ended without ${pattern}: ${JSON.stringify(text)}`)
    text += decoder.decode(chunk.value, { stream: true })
  }
  const rest = async () => {
    let more = ''
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      more += decoder.decode(chunk.value, { stream: true })
    return more
  }
  return { text, rest }
}

describe.each(transports)('stream limits and heartbeats ($name)', (transport) => {
  it('writes a keep-alive comment on a quiet stream when sseHeartbeatMs is set, between the events, which stay intact', async () => {
    const waiting = waitingAgent()
    const target = await transport.start(waiting.agent, { sseHeartbeatMs: 40 })
    const response = await target.post(streamBody('x'))
    // A keep-alive after an event (a slow store may let one come before the first event too).
    const { text, rest } = await readUntil(response, /^data: .*\n\n: keep-alive\n\n/m, 8_000)
    waiting.open()
    const frames = `${text}${await rest()}`.split('\n\n').filter(Boolean)
    const events = frames.filter((frame) => frame.startsWith('data: ')).map((frame) => JSON.parse(frame.slice(6)))
    expect(frames.every((frame) => frame.startsWith('data: ') || frame === ': keep-alive')).toBe(true)
    expect(events.at(-1).params).toMatchObject({ final: true, status: { state: 'completed' } })
  })

  it('sends no comment by default: the platform framing stays exactly data: lines', async () => {
    const waiting = waitingAgent()
    const target = await transport.start(waiting.agent)
    const response = await target.post(streamBody('x'))
    setTimeout(() => waiting.open(), 150)
    await readEvents(response, 'data-only')
  })

  it('refuses a stream past maxStreams with HTTP 503 and a JSON-RPC error, and takes new ones as streams end', async () => {
    const waiting = waitingAgent()
    const target = await transport.start(waiting.agent, { maxStreams: 2 })
    const open = [await target.post(streamBody('a')), await target.post(streamBody('b'))]
    const refused = await target.rpc('message/stream', JSON.parse(streamBody('c')).params)
    expect(refused.status).toBe(503)
    expect(refused.body.error.message).toBe('Too many open streams (2); retry shortly')
    waiting.open()
    for (const response of open) await readEvents(response)
    const again = await target.post(streamBody('d'))
    expect(again.headers.get('content-type')).toMatch(/^text\/event-stream/)
    await readEvents(again)
  })

  it('does not count a stream that was refused before it began (unknown task, bad params)', async () => {
    const waiting = waitingAgent()
    const target = await transport.start(waiting.agent, { maxStreams: 1 })
    for (let i = 0; i < 3; i++) {
      expect((await target.rpc('tasks/resubscribe', { id: 'no-such-task' })).body.error.code).toBe(-32602)
      expect((await target.rpc('message/stream', { message: { role: 'user', parts: [] } })).body.error.code).toBe(
        -32602,
      )
    }
    waiting.open()
    await readEvents(await target.post(streamBody('x')))
  })
})
