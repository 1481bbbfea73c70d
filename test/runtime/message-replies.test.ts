import { createRedisStore } from 'a2a-runtime/redis-store'
import { describe, expect, inject, it } from 'vitest'
import { agent, deferred } from './_agents.ts'
import { readEvents } from './_sse.ts'
import { nodeServer, transports } from './_transports.ts'

/**
 * An agent may answer with a Message instead of a task (A2A v1.0 §3.1.1 SendMessage: `Task` or `Message`; v0.3
 * `message/send` and `message/stream` likewise): `task.reply()` with `messageReplies: true` in `defineAgent`.
 * The platform dialect, whose contract answers with a Task, gets the task completed with the reply as its
 * artifact. Each test is named after the requirement it checks, on every transport and store.
 */

const V1 = { 'A2A-Version': '1.0' } as const
const V03 = { 'A2A-Version': '0.3' } as const

const replier = agent((ctx, task) => task.reply(`Hello, ${ctx.text}`), { messageReplies: true })

/** Replies when asked to, after an await (the way an agent that calls a model answers); otherwise runs a task. */
const sometimes = agent(
  async (ctx, task) => {
    await new Promise((resolve) => setImmediate(resolve))
    if (ctx.text.startsWith('reply')) return task.reply('a quick answer')
    task.artifact('a long answer')
    task.complete()
  },
  { messageReplies: true },
)

let count = 0
const v1Params = (text: string, configuration?: Record<string, unknown>) => ({
  message: { messageId: `reply-${++count}`, role: 'ROLE_USER', parts: [{ text }] },
  ...(configuration && { configuration }),
})
const slashParams = (text: string, configuration?: Record<string, unknown>) => ({
  message: { kind: 'message', messageId: `reply-${++count}`, role: 'user', parts: [{ kind: 'text', text }] },
  ...(configuration && { configuration }),
})

describe.each(transports)('agents that answer with a message ($name)', (transport) => {
  it('v1.0 SendMessage answers an agent reply with result.message: the agent role, its parts, the context, no task', async () => {
    const target = await transport.start(replier)
    const { body } = await target.rpc('SendMessage', v1Params('Ada'), { headers: V1 })
    expect(Object.keys(body.result)).toEqual(['message'])
    const { message } = body.result
    expect(message).toMatchObject({ role: 'ROLE_AGENT', parts: [{ text: 'Hello, Ada' }] })
    expect(typeof message.messageId).toBe('string')
    expect(typeof message.contextId).toBe('string')
    expect(message.taskId).toBeUndefined()
  })

  it('v1.0 SendStreamingMessage sends the reply as the one event of its stream, result.message, and closes it', async () => {
    const target = await transport.start(sometimes)
    const response = await target.post(
      JSON.stringify({ jsonrpc: '2.0', id: 's1', method: 'SendStreamingMessage', params: v1Params('reply please') }),
      V1,
    )
    const { events } = await readEvents(response, 'numbered')
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      jsonrpc: '2.0',
      id: 's1',
      result: { message: { role: 'ROLE_AGENT', parts: [{ text: 'a quick answer' }] } },
    })
    expect(Object.keys(events[0].result)).toEqual(['message'])
  })

  it('v1.0 answers with the Task when the agent runs one: a stream opens with the task, marked working at the agent first move', async () => {
    const target = await transport.start(sometimes)
    const response = await target.post(
      JSON.stringify({ jsonrpc: '2.0', id: 's2', method: 'SendStreamingMessage', params: v1Params('work please') }),
      V1,
    )
    const { events } = await readEvents(response, 'numbered')
    expect(events.map((event) => Object.keys(event.result)[0])).toEqual([
      'task',
      'statusUpdate',
      'artifactUpdate',
      'statusUpdate',
    ])
    expect(events[1].result.statusUpdate.status.state).toBe('TASK_STATE_WORKING')
    expect(events[3].result.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED')
  })

  it('v1.0 SendMessage with returnImmediately answers with the task (the client asked not to wait for the answer)', async () => {
    const target = await transport.start(sometimes)
    const { body } = await target.rpc('SendMessage', v1Params('reply please', { returnImmediately: true }), {
      headers: V1,
    })
    expect(Object.keys(body.result)).toEqual(['task'])
  })

  it('v0.3 message/send answers an agent reply with a Message (kind "message", role agent, no task)', async () => {
    const target = await transport.start(replier)
    const { body } = await target.rpc('message/send', slashParams('Bo'), { headers: V03 })
    expect(body.result).toMatchObject({ kind: 'message', role: 'agent', parts: [{ kind: 'text', text: 'Hello, Bo' }] })
    expect(body.result.taskId).toBeUndefined()
    expect(body.result.status).toBeUndefined()
  })

  it('v0.3 message/stream sends the reply as the one event of its stream, and closes it', async () => {
    const target = await transport.start(sometimes)
    const response = await target.post(
      JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'message/stream', params: slashParams('reply please') }),
      V03,
    )
    const { events } = await readEvents(response, 'numbered')
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      id: 7,
      result: { kind: 'message', role: 'agent', parts: [{ kind: 'text', text: 'a quick answer' }] },
    })
  })

  it('the platform dialect answers an agent reply with the task completed, the reply its artifact; its stream goes working, artifact, completed', async () => {
    const target = await transport.start(replier)
    const { body } = await target.rpc('message/send', slashParams('Cy'))
    expect(body.result).toMatchObject({
      kind: 'task',
      status: { state: 'completed' },
      artifacts: [{ parts: [{ kind: 'text', text: 'Hello, Cy' }] }],
    })
    // The task is kept like any other.
    expect((await target.rpc('tasks/get', { id: body.result.id })).body.result.status.state).toBe('completed')

    const response = await target.post(
      JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'message/stream', params: slashParams('Di') }),
    )
    const { events } = await readEvents(response)
    expect(events.map((event) => [event.method, event.params.status?.state])).toEqual([
      ['tasks/statusUpdate', 'working'],
      ['tasks/artifactUpdate', undefined],
      ['tasks/statusUpdate', 'completed'],
    ])
    expect(events[1].params.artifact.parts).toEqual([{ kind: 'text', text: 'Hello, Di' }])
  })

  it('marks a task of an agent with messageReplies working only at its first move: submitted until then', async () => {
    const gate = deferred()
    const started = deferred<string>()
    const waiter = agent(
      async (ctx, task) => {
        started.resolve(ctx.taskId)
        await gate.promise
        task.artifact('done')
        task.complete()
      },
      { messageReplies: true },
    )
    const target = await transport.start(waiter)
    const answer = target.rpc('message/send', slashParams('wait'))
    const taskId = await started.promise
    expect((await target.rpc('tasks/get', { id: taskId })).body.result.status.state).toBe('submitted')
    gate.resolve()
    const task = (await answer).body.result
    expect(task.status.state).toBe('completed')
  })

  it('ends a task whose first move refuses it straight from submitted: rejected, with no working before', async () => {
    const refuser = agent((_ctx, task) => task.reject('Not today'), { messageReplies: true })
    const target = await transport.start(refuser)
    const response = await target.post(
      JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'message/stream', params: slashParams('x') }),
    )
    const { events } = await readEvents(response)
    expect(events.map((event) => event.params.status?.state)).toEqual(['rejected'])
  })

  it('refuses task.reply() without messageReplies, or after another move, with an error that says how to answer instead', async () => {
    const errors: string[] = []
    const attempt = (task: { reply(message: string): void }) => {
      try {
        task.reply('hi')
      } catch (error) {
        errors.push((error as Error).message)
      }
    }
    const without = agent((_ctx, task) => {
      attempt(task)
      task.complete()
    })
    const late = agent(
      (_ctx, task) => {
        task.artifact('first')
        attempt(task)
        task.complete()
      },
      { messageReplies: true },
    )
    for (const agentToRun of [without, late]) {
      const target = await transport.start(agentToRun)
      const { body } = await target.rpc('SendMessage', v1Params('x'), { headers: V1 })
      expect(body.result.task.status.state).toBe('TASK_STATE_COMPLETED')
    }
    expect(errors).toHaveLength(2)
    for (const message of errors) {
      expect(message).toBe(
        "task.reply() answers with a message: it needs `messageReplies: true` in defineAgent() and must be the first move of a task's first turn (after another move, answer with task.artifact() and task.complete())",
      )
    }
  })
})

describe('agents that answer with a message, on the Redis store', () => {
  it("keeps a task whose agent has not moved yet past the store's ttlMs: its lease keeps it, as a first event would", async () => {
    const url = inject('redisUrl')
    if (!url)
      throw new Error('redis-server is not installed (Debian: apt-get install redis-server; .ci/run installs it)')
    const gate = deferred()
    const started = deferred<string>()
    const slow = agent(
      async (ctx, task) => {
        started.resolve(ctx.taskId)
        await gate.promise
        task.reply('at last')
      },
      { messageReplies: true },
    )
    // A created task expires after ttlMs until its first event: here the agent takes longer than that to move.
    const store = createRedisStore({
      url,
      prefix: `reply-${Math.random().toString(36).slice(2, 8)}:`,
      ttlMs: 1500,
      leaseMs: 300,
    })
    const target = await nodeServer.start(slow, { store })
    const answer = target.rpc('message/send', slashParams('x'))
    const taskId = await started.promise
    await new Promise((resolve) => setTimeout(resolve, 2500))
    expect((await target.rpc('tasks/get', { id: taskId })).body.result.status.state).toBe('submitted')
    gate.resolve()
    expect((await answer).body.result).toMatchObject({
      status: { state: 'completed' },
      artifacts: [{ parts: [{ kind: 'text', text: 'at last' }] }],
    })
  })
})
