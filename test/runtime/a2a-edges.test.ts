import { describe, expect, it } from 'vitest'
import { agent, deferred } from './_agents.ts'
import { eventReader } from './_sse.ts'
import { transports } from './_transports.ts'

const V1 = { 'A2A-Version': '1.0' }

/** `promise`, or a clear failure past `ms` (well before the test's own timeout). */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)),
  )
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

describe.each(transports)('A2A dialect edges ($name)', (transport) => {
  it('a subscription to a task that asked for input while its agent is still returning gets the Task at once, then the turn the follow-up starts once the agent has returned', async () => {
    // The first turn's agent returns only when the test lets it: the subscriptions must answer before that.
    const returning = deferred()
    const lingering = agent(async (ctx, task) => {
      if (ctx.history.length > 1) {
        task.artifact(`took ${ctx.text}`)
        return task.complete()
      }
      task.inputRequired('which?')
      await returning.promise
    })
    const target = await transport.start(lingering)
    try {
      const sent = await target.rpc(
        'SendMessage',
        {
          message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] },
          configuration: { returnImmediately: true },
        },
        { headers: V1 },
      )
      const id = sent.body.result.task.id
      await expect
        .poll(async () => (await target.rpc('GetTask', { id }, { headers: V1 })).body.result.status.state)
        .toBe('TASK_STATE_INPUT_REQUIRED')
      const readers = []
      for (const [method, headers] of [
        ['SubscribeToTask', V1],
        ['tasks/resubscribe', { 'A2A-Version': '0.3' }],
      ] as const) {
        const reader = eventReader(
          await target.post(JSON.stringify({ jsonrpc: '2.0', id: 's', method, params: { id } }), headers),
        )
        const first = await within(reader.next(), 8_000, `${method} to answer while the agent is still returning`)
        expect(first.result.task?.status.state ?? first.result.status.state).toMatch(
          /^(TASK_STATE_INPUT_REQUIRED|input-required)$/,
        )
        readers.push(reader)
      }
      // The follow-up waits for the agent to return, then runs: both subscriptions carry its turn to the end.
      const followUp = target.rpc(
        'SendMessage',
        { message: { messageId: 'f', role: 'ROLE_USER', parts: [{ text: 'that one' }], taskId: id } },
        { headers: V1 },
      )
      returning.resolve()
      expect((await followUp).body.result.task.status.state).toBe('TASK_STATE_COMPLETED')
      for (const reader of readers) {
        const ids: number[] = []
        for (let event = await reader.next(); event !== undefined; event = await reader.next()) ids.push(reader.lastId!)
        expect(ids).toEqual([3, 4, 5])
      }
    } finally {
      returning.resolve()
    }
  })

  it('v1.0 messages get the same 64-level depth limit on data and metadata as the other dialects', async () => {
    let ran = false
    const target = await transport.start(
      agent((_ctx, task) => {
        ran = true
        task.complete()
      }),
    )
    let deep: Record<string, unknown> = {}
    for (let i = 0; i < 500; i++) deep = { deep }
    const data = await target.rpc(
      'SendMessage',
      { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ data: deep }] } },
      { headers: V1 },
    )
    expect(data.body.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('params.message.parts[0].data'),
    })
    const metadata = await target.rpc(
      'SendMessage',
      { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }], metadata: deep } },
      { headers: V1 },
    )
    expect(metadata.body.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('params.message.metadata'),
    })
    expect(ran).toBe(false)
  })

  it('refuses A2A-Version 1.7 with -32009: only 1.0 (and its patches) is v1.0', async () => {
    const target = await transport.start(agent((_ctx, task) => task.complete()))
    for (const version of ['1.7', '1.1', '11']) {
      const reply = await target.rpc('GetTask', { id: 'x' }, { headers: { 'A2A-Version': version } })
      expect(reply.body.error.code).toBe(-32009)
    }
    expect((await target.rpc('GetTask', { id: 'x' }, { headers: { 'A2A-Version': '1.0.2' } })).body.error.code).toBe(
      -32001,
    )
    expect((await target.rpc('GetTask', { id: 'x' }, { headers: { 'A2A-Version': '1' } })).body.error.code).toBe(-32001)
  })

  it('refuses a v1.0 message from ROLE_AGENT even when its parts use the v0.3 shape', async () => {
    const target = await transport.start(agent((_ctx, task) => task.complete()))
    const reply = await target.rpc(
      'SendMessage',
      { message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ kind: 'text', text: 'hi' }] } },
      { headers: V1 },
    )
    expect(reply.body.error).toMatchObject({ code: -32602, message: expect.stringContaining('role') })
  })
})
