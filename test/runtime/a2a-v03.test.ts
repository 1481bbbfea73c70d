import type { Part } from 'a2a-runtime'
import { describe, expect, it } from 'vitest'
import { agent, echoAgent } from './_agents.ts'
import { readEvents } from './_sse.ts'
import { type Target, transports } from './_transports.ts'
import { startReceiver } from './_webhook.ts'

/**
 * The A2A v0.3 dialect on the slash-named methods (a request saying `A2A-Version: 0.3`, or any request to an
 * agent whose dialect is `a2a-0.3`), where it differs from the platform dialect on the same methods. Each test
 * is named after the requirement it checks (A2A v0.3.0 specification and JSON schema, the conformance kit).
 */

const V03 = { 'A2A-Version': '0.3' } as const

/** Both ways a request reaches the v0.3 dialect. */
const WAYS = [
  { way: 'A2A-Version: 0.3', options: {}, headers: V03 },
  { way: 'the a2a-0.3 dialect', options: { dialect: 'a2a-0.3' as const }, headers: {} },
]

const textMessage = (text: string) => ({
  kind: 'message',
  role: 'user',
  messageId: `v03-${Math.random().toString(36).slice(2)}`,
  parts: [{ kind: 'text', text }],
})

/** Counts the runs of its agent, so a test can tell that a refused message started nothing. */
function countingAgent() {
  const counts = { runs: 0 }
  const definition = agent((ctx, task) => {
    counts.runs++
    task.artifact(`Echo: ${ctx.text}`)
    task.complete()
  })
  return { agent: definition, counts }
}

const tasksIn = async (target: Target) => (await target.app.store.list({ limit: 10 })).total

describe.each(transports)('A2A v0.3 dialect ($name)', (transport) => {
  describe.each(WAYS)('reached by $way', ({ options, headers }) => {
    it.each([
      ['messageId', 'params.message.messageId'],
      ['role', 'params.message.role'],
    ])(
      'message/send and message/stream without message.%s MUST answer -32602 naming it, and start no task',
      async (left, field) => {
        const { agent: counting, counts } = countingAgent()
        const target = await transport.start(counting, options)
        for (const method of ['message/send', 'message/stream']) {
          const message: Record<string, unknown> = textMessage('hi')
          delete message[left]
          const reply = await target.rpc(method, { message }, { id: `no-${left}`, headers })
          expect(reply.status).toBe(200)
          expect(reply.headers.get('content-type')).toMatch(/^application\/json\b/)
          expect(reply.body).toEqual({
            jsonrpc: '2.0',
            id: `no-${left}`,
            error: { code: -32602, message: expect.stringContaining(`\`${field}\``) },
          })
        }
        expect(counts.runs).toBe(0)
        expect(await tasksIn(target)).toBe(0)
      },
    )

    it('message/send with an empty messageId MUST answer -32602 naming it', async () => {
      const target = await transport.start(echoAgent, options)
      const reply = await target.rpc(
        'message/send',
        { message: { ...textMessage('hi'), messageId: '' } },
        { id: 'empty', headers },
      )
      expect(reply.body.error).toEqual({ code: -32602, message: expect.stringContaining('`params.message.messageId`') })
      expect(await tasksIn(target)).toBe(0)
    })

    it('message/send with messageId and role MUST answer the Task, the message kept with its own messageId', async () => {
      const target = await transport.start(echoAgent, options)
      const message = textMessage('hello')
      const task = (await target.rpc('message/send', { message }, { headers })).body.result
      expect(task).toMatchObject({ kind: 'task', status: { state: 'completed' } })
      expect(task.history[0]).toMatchObject({ kind: 'message', role: 'user', messageId: message.messageId })
    })
  })

  it('The platform dialect MUST still take a message without messageId (the server makes one up) or role, as its contract allows', async () => {
    const target = await transport.start(echoAgent)
    for (const left of ['messageId', 'role']) {
      const message: Record<string, unknown> = textMessage(`without ${left}`)
      delete message[left]
      const task = (await target.rpc('message/send', { message })).body.result
      expect(task).toMatchObject({ kind: 'task', status: { state: 'completed' } })
      expect(task.history[0]).toMatchObject({ kind: 'message', role: 'user', messageId: expect.stringMatching(/.+/) })
    }
  })
})

/** What A2A v1.0 parts may hold and v0.3 ones cannot: data that is not an object, a media type on text and data. */
const V1_ONLY_PARTS: Part[] = [
  { kind: 'data', data: [1, 'two'] },
  { kind: 'data', data: 'plain', mediaType: 'text/csv' },
  { kind: 'data', data: null },
  { kind: 'text', text: '# Title', mediaType: 'text/markdown', metadata: { kept: true } },
  { kind: 'data', data: { kept: true }, mediaType: 'application/json' },
]

/** The same parts as a v0.3 (or platform) client receives them. */
const V1_ONLY_PARTS_AS_V03 = [
  { kind: 'data', data: { value: [1, 'two'] } },
  { kind: 'data', data: { value: 'plain' } },
  { kind: 'data', data: { value: null } },
  { kind: 'text', text: '# Title', metadata: { kept: true } },
  { kind: 'data', data: { kept: true } },
]

/** Answers with those parts, and a status message in Markdown. */
const v1PartsAgent = agent(
  (_ctx, task) => {
    task.artifact(V1_ONLY_PARTS)
    task.complete([{ kind: 'text', text: '*done*', mediaType: 'text/markdown' }])
  },
  { card: { defaultInputModes: ['*/*'], capabilities: { pushNotifications: true } } },
)

/** The two dialects that speak the v0.3 shapes on the slash-named methods. */
const SLASH_DIALECTS = [
  { dialect: 'platform', headers: {}, framing: 'data-only' as const },
  { dialect: 'A2A v0.3', headers: V03, framing: 'numbered' as const },
]

describe.each(transports)('A2A v1.0 parts served in the v0.3 shapes ($name)', (transport) => {
  describe.each(SLASH_DIALECTS)('to a $dialect client', ({ headers, framing }) => {
    it('A data part that is not an object MUST be served wrapped as { "value": … }, and the mediaType of text and data parts left out: message/send and tasks/get', async () => {
      const target = await transport.start(v1PartsAgent)
      const sent = (await target.rpc('message/send', { message: textMessage('hi') }, { headers })).body.result
      const got = (await target.rpc('tasks/get', { id: sent.id }, { headers })).body.result
      for (const task of [sent, got]) {
        expect(task.artifacts[0].parts).toEqual(V1_ONLY_PARTS_AS_V03)
        expect(task.status.message.parts).toEqual([{ kind: 'text', text: '*done*' }])
      }
      // Served so, kept as given: the v1.0 view of the same task has them all.
      const v1 = (await target.rpc('GetTask', { id: sent.id }, { headers: { 'A2A-Version': '1.0' } })).body.result
      expect(v1.artifacts[0].parts[0]).toEqual({ data: [1, 'two'] })
      expect(v1.artifacts[0].parts[1]).toEqual({ data: 'plain', mediaType: 'text/csv' })
    })

    it("A v1.0 client's message MUST be served in the v0.3 shapes to this client: its non-object data wrapped, its media types left out", async () => {
      const target = await transport.start(v1PartsAgent)
      const parts = [
        { data: ['x'] },
        { text: 'hi', mediaType: 'text/plain' },
        { data: { a: 1 }, mediaType: 'application/json' },
      ]
      const sent = await target.rpc(
        'SendMessage',
        { message: { messageId: 'from-v1', role: 'ROLE_USER', parts } },
        { headers: { 'A2A-Version': '1.0' } },
      )
      const task = (await target.rpc('tasks/get', { id: sent.body.result.task.id }, { headers })).body.result
      expect(task.history[0].parts).toEqual([
        { kind: 'data', data: { value: ['x'] } },
        { kind: 'text', text: 'hi' },
        { kind: 'data', data: { a: 1 } },
      ])
    })

    it('message/stream MUST send such parts in the v0.3 shapes', async () => {
      const target = await transport.start(v1PartsAgent)
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 'stream',
        method: 'message/stream',
        params: { message: textMessage('hi') },
      })
      const response = await target.post(body, headers)
      const { events } = await readEvents(response, framing)
      // The platform dialect sends notifications, v0.3 responses to the request.
      const payloads = events.map((event) => event.params ?? event.result)
      expect(payloads.find((payload) => payload.artifact).artifact.parts).toEqual(V1_ONLY_PARTS_AS_V03)
      expect(payloads.at(-1).status.message.parts).toEqual([{ kind: 'text', text: '*done*' }])
    })
  })

  it('A v0.3 webhook MUST receive such parts in the v0.3 shapes', async () => {
    const receiver = await startReceiver()
    const target = await transport.start(v1PartsAgent, { push: { allow: ['127.0.0.1'], allowHttp: true } })
    const params = { message: textMessage('hi'), configuration: { pushNotificationConfig: { url: receiver.url } } }
    await target.rpc('message/send', params, { headers: V03 })
    await expect.poll(() => receiver.delivered.at(-1)?.body.status.state).toBe('completed')
    const last = receiver.delivered.at(-1)!.body
    expect(last.artifacts[0].parts).toEqual(V1_ONLY_PARTS_AS_V03)
    expect(last.status.message.parts).toEqual([{ kind: 'text', text: '*done*' }])
  })
})
