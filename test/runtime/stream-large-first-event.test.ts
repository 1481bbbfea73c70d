import { request } from 'node:http'
import { defineAgent } from 'a2a-runtime'
import { describe, expect, it } from 'vitest'
import { nodeServer } from './_transports.ts'

/**
 * A client that reads is never dropped by `maxStreamBacklogBytes` for one event, however large: the cap bounds
 * what waits for a subscriber besides its largest waiting event (`http/_sse.ts`), and large events are bounded by
 * `maxTaskBytes` and `maxPendingResponseBytes`. Over HTTP on a real port, with the default 1 MiB cap, the agents
 * below write an artifact larger than the cap a microtask after a smaller event, before the connection has
 * asked for anything (at the start of the stream) or while it is still sending an earlier piece: each event
 * must reach the reading client whole and the final event end the stream.
 */

const MB = 1_000_000
const nextMicrotask = () => Promise.resolve()
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

/**
 * The message text is `<chars>` or `mid:<chars>`. The first: the agent works, waits a microtask, adds an artifact
 * of that many characters, waits a microtask and completes. The second: it works, waits a turn (the stream is
 * running), adds a 100 KB artifact (the connection sends it piece by piece), then, a microtask apart, a status,
 * the large artifact and the completion.
 */
const agent = defineAgent({
  card: {
    name: 'Large Event',
    description: 'Streams one large artifact',
    version: '1.0.0',
    capabilities: { streaming: true },
  },
  async execute(ctx, task) {
    const mid = ctx.text.startsWith('mid:')
    const chars = Number(mid ? ctx.text.slice(4) : ctx.text)
    task.working()
    if (mid) {
      await nextTurn()
      task.artifact('m'.repeat(100_000), { artifactId: 'medium' })
      await nextMicrotask()
      task.working('thinking')
    }
    await nextMicrotask()
    task.artifact('x'.repeat(chars), { artifactId: 'large' })
    await nextMicrotask()
    task.complete()
  },
})

interface Dialect {
  name: string
  method: string
  headers: Record<string, string>
  message: (text: string) => Record<string, unknown>
  /** An event of this dialect's stream. */
  isEvent: (event: any) => boolean
  /** The text of each artifact event, by artifact id. */
  artifactText: (event: any) => [string, string] | undefined
  isFinal: (event: any) => boolean
}

let messages = 0
const DIALECTS: Dialect[] = [
  {
    name: 'platform message/stream',
    method: 'message/stream',
    headers: {},
    message: (text) => ({
      kind: 'message',
      role: 'user',
      messageId: `m-large-${++messages}`,
      parts: [{ kind: 'text', text }],
    }),
    // Notifications: tasks/statusUpdate and tasks/artifactUpdate.
    isEvent: (event) =>
      event.jsonrpc === '2.0' && ['tasks/statusUpdate', 'tasks/artifactUpdate'].includes(event.method),
    artifactText: (event) =>
      event.method === 'tasks/artifactUpdate'
        ? [event.params.artifact.artifactId, event.params.artifact.parts[0].text]
        : undefined,
    isFinal: (event) =>
      event.method === 'tasks/statusUpdate' && event.params.final === true && event.params.status.state === 'completed',
  },
  {
    name: 'A2A v1.0 SendStreamingMessage',
    method: 'SendStreamingMessage',
    headers: { 'A2A-Version': '1.0' },
    message: (text) => ({ messageId: `m-large-${++messages}`, role: 'ROLE_USER', parts: [{ text }] }),
    // Responses to the request, one stream result each.
    isEvent: (event) => event.jsonrpc === '2.0' && event.id === 'large' && event.result !== undefined,
    artifactText: (event) => {
      const update = event.result?.artifactUpdate
      return update ? [update.artifact.artifactId, update.artifact.parts[0].text] : undefined
    },
    isFinal: (event) => event.result?.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED',
  },
]

/**
 * Streams one message over node:http, reading as fast as the bytes come: the body de-chunked and whether it ended
 * whole.
 */
function stream(port: number, dialect: Dialect, text: string) {
  return new Promise<{ body: string; whole: boolean }>((resolve) => {
    let body = ''
    const payload = JSON.stringify({
      jsonrpc: '2.0',
      id: 'large',
      method: dialect.method,
      params: { message: dialect.message(text) },
    })
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/',
        agent: false,
        headers: { 'content-type': 'application/json', ...dialect.headers },
      },
      (res) => {
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        // A dropped subscriber has its connection closed mid-body: `complete` stays false.
        res.on('error', () => resolve({ body, whole: false }))
        res.on('close', () => resolve({ body, whole: res.complete }))
      },
    )
    // Dropped before the headers were sent: the request fails ("socket hang up").
    req.on('error', () => resolve({ body, whole: false }))
    req.end(payload)
  })
}

const eventsOf = (body: string) =>
  body
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 'data: '.length)))

describe('a reading client gets an event larger than maxStreamBacklogBytes (default 1 MiB) whole', () => {
  for (const dialect of DIALECTS) {
    for (const [what, text, artifacts] of [
      ['2 MB, a microtask after the first event', String(2 * MB), [['large', 2 * MB]]],
      ['8 MB (within maxTaskBytes, 8 MiB), a microtask after the first event', String(8 * MB), [['large', 8 * MB]]],
      [
        '2 MB, a microtask after a status that waits behind a 100 KB artifact still being sent',
        `mid:${2 * MB}`,
        [
          ['medium', 100_000],
          ['large', 2 * MB],
        ],
      ],
    ] as const) {
      it(`${dialect.name}: ${what}`, async () => {
        const target = await nodeServer.start(agent)
        const port = Number(new URL(target.url).port)
        const { body, whole } = await stream(port, dialect, text)
        const dropped = target.logger.lines.filter((line) => line.message.startsWith('SSE client dropped'))
        expect(dropped.map((line) => line.message)).toEqual([])
        expect(whole).toBe(true)
        const events = eventsOf(body)
        expect(events.every(dialect.isEvent)).toBe(true)
        const received = events.map(dialect.artifactText).filter((pair) => pair !== undefined)
        expect(received.map(([id, chars]) => [id, chars.length])).toEqual(artifacts)
        for (const [id, chars] of received) expect(chars).toBe((id === 'large' ? 'x' : 'm').repeat(chars.length))
        expect(events.filter(dialect.isFinal)).toHaveLength(1)
        expect(dialect.isFinal(events.at(-1))).toBe(true)
        await target.close()
      }, 60_000)
    }
  }
})
