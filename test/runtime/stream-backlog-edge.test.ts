import { type IncomingMessage, request } from 'node:http'
import { defineAgent } from 'a2a-runtime'
import { describe, expect, it } from 'vitest'
import { nodeServer } from './_transports.ts'

/**
 * `maxStreamBacklogBytes` (A2A_SSE_MAX_BACKLOG_BYTES) at its edge, over HTTP on a real port. A subscriber's
 * backlog (`http/_sse.ts`, `SseStream`) is every byte queued for it and not yet handed to its connection (the
 * head of the queue by what is left of it), the chunk being added included, less the largest single chunk among
 * them. Each event sent in a run of its own is one chunk of exactly `data: <json>\n\n` (the platform dialect, no
 * `Last-Event-ID`), so the bytes queued per event are the bytes of its frame, measured here on a reading client
 * of a first server and then used as the cap of a second one.
 *
 * To make the largest chunk known whatever the kernel's socket buffers take, the stream first carries one event
 * far larger than they hold (16 MB; a client that stops reading leaves about 4 MB in them on Linux), written
 * while nothing else waits: it is the head, and what is left of it stays the largest chunk, while the events at
 * the edge queue behind it and are counted whole.
 */

const HEAD_CHARS = 16 * 1024 * 1024
const EDGE_CHARS = 4096
const EDGE_EVENTS = 4

/** One step of the agent the test lets go; `reached` resolves when the agent waits at it. */
function step() {
  let release!: () => void
  let arrive!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  const reached = new Promise<void>((resolve) => (arrive = resolve))
  return { release, released, reached, arrive }
}

type Steps = { head: ReturnType<typeof step>; edges: ReturnType<typeof step>; end: ReturnType<typeof step> }
let steps: Steps

/**
 * The message text is `<head chars>:<chars of each edge event, comma-separated>`. The agent says it is ready,
 * waits for the test, sends the head event, waits, sends each edge event in a run of its own (one chunk each),
 * says so, waits, and completes.
 */
const agent = defineAgent({
  card: {
    name: 'Backlog Edge',
    description: 'Streams events of chosen sizes',
    version: '1.0.0',
    capabilities: { streaming: true },
  },
  async execute(ctx, task) {
    const [head, edges] = ctx.text.split(':')
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve))
    task.working('ready')
    steps.head.arrive()
    await steps.head.released
    task.artifact('h'.repeat(Number(head)), { artifactId: 'edge' })
    steps.edges.arrive()
    await steps.edges.released
    for (const [i, chars] of edges!.split(',').entries()) {
      task.artifact(String(i).padEnd(Number(chars), 'e'), { artifactId: 'edge' })
      await nextTurn()
    }
    steps.end.arrive()
    await steps.end.released
    task.complete()
  },
})

const streamBody = (text: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 'edge',
    method: 'message/stream',
    params: { message: { kind: 'message', role: 'user', messageId: 'm-edge', parts: [{ kind: 'text', text }] } },
  })

/**
 * A subscriber over node:http: its body as text, de-chunked. `pause()` stops reading (node:http then stops taking
 * bytes from the socket, and the kernel's buffers fill); `ended` resolves with whether the stream ended whole.
 */
function subscribe(port: number, text: string) {
  let body = ''
  let response: IncomingMessage | undefined
  const ended = new Promise<{ whole: boolean }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/',
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        response = res
        res.setEncoding('latin1')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () => resolve({ whole: res.complete }))
        // A subscriber the server drops has its connection closed mid-body.
        res.on('error', () => resolve({ whole: false }))
        res.on('close', () => resolve({ whole: res.complete }))
      },
    )
    req.on('error', (error) => (response ? resolve({ whole: false }) : reject(error)))
    req.end(streamBody(text))
  })
  return {
    ended,
    body: () => body,
    pause: () => response!.pause(),
    resume: () => response!.resume(),
    /** The frames read so far. */
    frames: () => body.split(/(?<=\n\n)/).filter((frame) => frame.endsWith('\n\n')),
  }
}

const frameBytes = (frame: string) => Buffer.byteLength(frame, 'latin1')
const edgeText = (chars: number[]) => `${HEAD_CHARS}:${chars.join(',')}`

/**
 * Runs one stream to its edge events, the subscriber reading or not (`paused`); resolves once every edge event
 * was written.
 */
async function toTheEdge(port: number, chars: number[], paused: boolean) {
  steps = { head: step(), edges: step(), end: step() }
  const subscriber = subscribe(port, edgeText(chars))
  await steps.head.reached
  // Everything before the head has reached the client: nothing waits in the stream when the head is written.
  await expect.poll(() => subscriber.body()).toContain('"ready"')
  if (paused) subscriber.pause()
  steps.head.release()
  await steps.edges.reached
  steps.edges.release()
  await steps.end.reached
  return subscriber
}

describe('maxStreamBacklogBytes at its edge (a subscriber that does not read)', () => {
  it('keeps a subscriber whose unread backlog is exactly the cap, and drops one whose backlog is one byte over it', async () => {
    // The frame of each edge event, as the server writes it: measured on a subscriber that reads.
    const measure = await nodeServer.start(agent, { maxTaskBytes: 64 * 1024 * 1024 })
    const reader = await toTheEdge(Number(new URL(measure.url).port), [EDGE_CHARS, EDGE_CHARS], false)
    steps.end.release()
    expect(await reader.ended).toEqual({ whole: true })
    const measured = reader.frames().filter((frame) => frame.includes('eeee'))
    expect(measured).toHaveLength(2)
    expect(measured[0]).toMatch(/^data: \{[^\n]+\}\n\n$/)
    const frame = frameBytes(measured[0]!)
    expect(frameBytes(measured[1]!)).toBe(frame)
    await measure.close()

    const cap = EDGE_EVENTS * frame
    const target = await nodeServer.start(agent, { maxTaskBytes: 64 * 1024 * 1024, maxStreamBacklogBytes: cap })
    const port = Number(new URL(target.url).port)
    const dropped = () => target.logger.lines.filter((line) => line.message.startsWith('SSE client dropped'))

    // Exactly at the cap: kept. Once it reads again it gets every event and the end.
    const atCap = await toTheEdge(port, Array(EDGE_EVENTS).fill(EDGE_CHARS), true)
    expect(dropped()).toEqual([])
    atCap.resume()
    // The end only once the client has read what waited (else the end's event would pass the cap in turn).
    await expect.poll(() => atCap.frames().filter((one) => one.includes('eeee')).length).toBe(EDGE_EVENTS)
    steps.end.release()
    expect(await atCap.ended).toEqual({ whole: true })
    const edges = atCap.frames().filter((one) => one.includes('eeee'))
    expect(edges.map(frameBytes)).toEqual(Array(EDGE_EVENTS).fill(frame))
    expect(atCap.frames().at(-1)).toMatch(/"final":true/)
    expect(dropped()).toEqual([])

    // One byte over (the last edge event one character longer): dropped when that event is written.
    const over = await toTheEdge(port, [...Array(EDGE_EVENTS - 1).fill(EDGE_CHARS), EDGE_CHARS + 1], true)
    await expect
      .poll(() => dropped().map((line) => line.message))
      .toEqual([
        `SSE client dropped: its unread events would pass maxStreamBacklogBytes (${cap} bytes); it can resume with Last-Event-ID`,
      ])
    steps.end.release()
    over.resume()
    expect(await over.ended).toEqual({ whole: false })
    expect(over.body()).not.toContain('"final":true')
  }, 60_000)
})
