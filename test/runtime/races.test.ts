import { createMemoryStore } from 'a2a-runtime'
import type { TaskStore } from 'a2a-runtime/store'
import { describe, expect, it } from 'vitest'
import { agent, gatedAgent } from './_agents.ts'
import { userMessage } from './_messages.ts'
import { transports } from './_transports.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(transports)('races and limits ($name)', (transport) => {
  it('runs the agent once when two follow-ups for the same task arrive together', async () => {
    let secondTurns = 0
    const asker = agent(async (ctx, task) => {
      if (ctx.history.length === 1) return task.inputRequired('more?')
      secondTurns++
      await sleep(20)
      task.artifact(`got ${ctx.text}`)
      task.complete()
    })
    const target = await transport.start(asker)
    const first = (await target.rpc('message/send', userMessage('start'))).body.result
    const [a, b] = await Promise.all([
      target.rpc('message/send', userMessage('A', { taskId: first.id })),
      target.rpc('message/send', userMessage('B', { taskId: first.id })),
    ])
    const replies = [a.body, b.body]
    expect(replies.filter((r) => r.result?.status.state === 'completed')).toHaveLength(1)
    expect(replies.filter((r) => r.error?.code === -32602)).toHaveLength(1)
    expect(secondTurns).toBe(1)
    const stored = (await target.rpc('tasks/get', { id: first.id })).body.result
    expect(stored.history.filter((m: { role: string }) => m.role === 'user')).toHaveLength(2)
    expect(target.logger.text('error')).toBe('')
  })

  it('does not start a task that a cancel is stopping: the follow-up is refused and the agent stays idle', async () => {
    let turns = 0
    let hookStarted!: () => void
    const cancelInProgress = new Promise<void>((resolve) => (hookStarted = resolve))
    const asker = agent(
      (_ctx, task) => {
        turns++
        task.inputRequired('more?')
      },
      {
        cancel: () => {
          hookStarted()
          return sleep(20)
        },
      },
    )
    const target = await transport.start(asker)
    const first = (await target.rpc('message/send', userMessage('start'))).body.result
    const canceling = target.rpc('tasks/cancel', { id: first.id })
    await cancelInProgress
    const followUp = await target.rpc('message/send', userMessage('late', { taskId: first.id }))
    expect((await canceling).body.result.status.state).toBe('canceled')
    expect(followUp.body.error.code).toBe(-32602)
    expect(followUp.body.error.message).toMatch(/canceled/)
    expect(turns).toBe(1)
  })

  it('answers TaskNotCancelable when the task completes while the cancel hook runs', async () => {
    const quick = agent(
      async (_ctx, task) => {
        await sleep(10)
        task.artifact('done')
        task.complete()
      },
      { cancel: () => sleep(40) },
    )
    const target = await transport.start(quick)
    const task = (await target.rpc('message/send', { ...userMessage('x'), configuration: { blocking: false } })).body
      .result
    const reply = await target.rpc('tasks/cancel', { id: task.id })
    expect(reply.body.error.code).toBe(-32002)
    expect(reply.body.error.message).toMatch(/completed/)
  })

  it('calls the cancel hook once for concurrent cancels of one task', async () => {
    const gated = gatedAgent({ cancelable: true })
    const target = await transport.start(gated.agent)
    const sent = target.rpc('message/send', userMessage('x'))
    const taskId = await gated.started
    const [a, b] = await Promise.all([
      target.rpc('tasks/cancel', { id: taskId }),
      target.rpc('tasks/cancel', { id: taskId }),
    ])
    expect(gated.seen.cancelCalls).toBe(1)
    // A cancel that overlaps the first shares its answer; one that lands after it finds the task canceled.
    for (const reply of [a.body, b.body]) {
      if (reply.result) expect(reply.result.status.state).toBe('canceled')
      else expect(reply.error).toEqual({ code: -32002, message: 'Task cannot be canceled: it is already canceled' })
    }
    expect([a.body, b.body].some((reply) => reply.result)).toBe(true)
    expect((await sent).body.result.status.state).toBe('canceled')
  })

  it('keeps answering when the store throws: the task still completes and the log blames the store', async () => {
    const inner = createMemoryStore()
    const brokenStore: TaskStore = {
      get: (id) => inner.get(id),
      create: (task) => inner.create(task),
      append: () => {
        throw new Error('disk full')
      },
      events: (id, after) => inner.events(id, after),
      list: (query) => inner.list(query),
    }
    const target = await transport.start(
      agent((ctx, task) => {
        task.artifact(ctx.text)
        task.complete()
      }),
      { store: brokenStore },
    )
    const reply = await target.rpc('message/send', userMessage('still fine'))
    expect(reply.body.result.status.state).toBe('completed')
    expect(target.logger.text('error')).toMatch(/task store could not save an event .* disk full/)
    expect(target.logger.text('error')).not.toMatch(/Agent "Test Agent" threw/)
  })

  it('refuses new tasks past maxRunningTasks with HTTP 429, and takes them again once tasks end', async () => {
    const gated = gatedAgent({ cancelable: false })
    const target = await transport.start(gated.agent, { maxRunningTasks: 2 })
    const nonBlocking = (text: string) =>
      target.rpc('message/send', { ...userMessage(text), configuration: { blocking: false } })
    expect((await nonBlocking('one')).body.result).toBeDefined()
    expect((await nonBlocking('two')).body.result).toBeDefined()
    const refused = await nonBlocking('three')
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(refused.body.error).toMatchObject({ code: -32603, message: expect.stringMatching(/busy/) })
    gated.release()
    await expect.poll(async () => (await nonBlocking('four')).status).toBe(200)
  })

  it('holds maxRunningTasks against concurrent sends, whose task creation awaits the store: exactly the limit run', async () => {
    const gated = gatedAgent({ cancelable: false })
    const target = await transport.start(gated.agent, { maxRunningTasks: 5 })
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        target.rpc('message/send', { ...userMessage(`task ${i}`), configuration: { blocking: false } }),
      ),
    )
    const statuses = replies.map((reply) => reply.status)
    expect(statuses.filter((status) => status === 200)).toHaveLength(5)
    expect(statuses.filter((status) => status === 429)).toHaveLength(45)
    gated.release()
    await expect
      .poll(
        async () =>
          (await target.rpc('message/send', { ...userMessage('after'), configuration: { blocking: false } })).status,
      )
      .toBe(200)
  })

  it('refuses new tasks once shutdown has begun, while tasks/get still answers', async () => {
    const gated = gatedAgent({ cancelable: false })
    const target = await transport.start(gated.agent)
    const sent = target.rpc('message/send', userMessage('running'))
    const taskId = await gated.started
    const closing = target.app.close()
    const refused = await target.rpc('message/send', userMessage('too late'))
    expect(refused.status).toBe(503)
    expect(refused.body.error).toMatchObject({ code: -32603, message: expect.stringMatching(/shutting down/) })
    expect((await target.rpc('tasks/get', { id: taskId })).body.result.status.state).toBe('working')
    gated.release()
    await closing
    expect((await sent).body.result.status.state).toBe('completed')
  })

  it('refuses JSON nested deeper than 64 levels in data and metadata, naming the field, without running the agent', async () => {
    let ran = false
    const target = await transport.start(
      agent(
        (_ctx, task) => {
          ran = true
          task.complete()
        },
        { card: { defaultInputModes: ['text/plain', 'application/json'] } },
      ),
    )
    let deep: Record<string, unknown> = {}
    for (let i = 0; i < 1000; i++) deep = { deep }
    const dataReply = await target.rpc('message/send', {
      message: { role: 'user', messageId: 'm', parts: [{ kind: 'data', data: deep }] },
    })
    expect(dataReply.body.error.code).toBe(-32602)
    expect(dataReply.body.error.message).toContain('params.message.parts[0].data')
    const metadataReply = await target.rpc('message/send', { ...userMessage('x'), metadata: deep })
    expect(metadataReply.body.error.code).toBe(-32602)
    expect(metadataReply.body.error.message).toContain('params.metadata')
    expect(ran).toBe(false)
    let fine: Record<string, unknown> = { leaf: true }
    for (let i = 0; i < 30; i++) fine = { fine }
    expect(
      (
        await target.rpc('message/send', {
          message: { role: 'user', messageId: 'm', parts: [{ kind: 'data', data: fine }] },
        })
      ).body.result.status.state,
    ).toBe('completed')
  })
})
