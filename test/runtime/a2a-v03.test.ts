import { describe, expect, it } from 'vitest'
import { agent, echoAgent } from './_agents.ts'
import { type Target, transports } from './_transports.ts'

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

const textMessage = (text: string) => ({ kind: 'message', role: 'user', messageId: `v03-${Math.random().toString(36).slice(2)}`, parts: [{ kind: 'text', text }] })

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
    ])('message/send and message/stream without message.%s MUST answer -32602 naming it, and start no task', async (left, field) => {
      const { agent: counting, counts } = countingAgent()
      const target = await transport.start(counting, options)
      for (const method of ['message/send', 'message/stream']) {
        const message: Record<string, unknown> = textMessage('hi')
        delete message[left]
        const reply = await target.rpc(method, { message }, { id: `no-${left}`, headers })
        expect(reply.status).toBe(200)
        expect(reply.headers.get('content-type')).toMatch(/^application\/json\b/)
        expect(reply.body).toEqual({ jsonrpc: '2.0', id: `no-${left}`, error: { code: -32602, message: expect.stringContaining(`\`${field}\``) } })
      }
      expect(counts.runs).toBe(0)
      expect(await tasksIn(target)).toBe(0)
    })

    it('message/send with an empty messageId MUST answer -32602 naming it', async () => {
      const target = await transport.start(echoAgent, options)
      const reply = await target.rpc('message/send', { message: { ...textMessage('hi'), messageId: '' } }, { id: 'empty', headers })
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
