import { describe, expect, it } from 'vitest'
import { agent } from './_agents.ts'
import { type Target, transports } from './_transports.ts'

/**
 * `ctx.conversation()`: an agent reads the earlier tasks of its context (same contextId), oldest first, each as its
 * messages followed by its answer, then this task's history; bounded by bytes and by tasks. On every store.
 */

const said = (message: { role: string; parts: Array<{ kind: string; text?: string }> }) =>
  `${message.role}: ${message.parts.map((part) => (part.kind === 'text' ? part.text : `[${part.kind}]`)).join('')}`

/**
 * Answers "answer to <text>", with the conversation it read (one line per message) in a data part beside it;
 * asks once when told to ("ask").
 */
const recaller = (options?: { maxBytes?: number; maxTasks?: number }) =>
  agent(async (ctx, task) => {
    const conversation = await ctx.conversation(options)
    if (ctx.text === 'ask') return task.inputRequired('What is your name?')
    task.artifact([
      { kind: 'text', text: `answer to ${ctx.text}` },
      { kind: 'data', data: { lines: conversation.map(said) } },
    ])
    task.complete()
  })

let count = 0
async function send(target: Target, text: string, ids: { contextId?: string; taskId?: string } = {}) {
  const message = {
    kind: 'message',
    role: 'user',
    messageId: `conv-${++count}`,
    parts: [{ kind: 'text', text }],
    ...ids,
  }
  const { body } = await target.rpc('message/send', { message })
  expect(body.error).toBeUndefined()
  // Tasks that end in the same millisecond have the same status time, and the store orders those by id: the next
  // task ends in a later millisecond, so "newest" means the one sent last.
  const ended = Date.now()
  while (Date.now() === ended) await new Promise((resolve) => setTimeout(resolve, 1))
  return body.result as {
    id: string
    contextId: string
    status: { state: string }
    artifacts?: Array<{ parts: Array<{ data?: { lines: string[] } }> }>
  }
}
/** The conversation the agent read in that task. */
const seen = (task: Awaited<ReturnType<typeof send>>) => task.artifacts?.[0]?.parts[1]?.data?.lines

describe.each(transports)('an agent reads its conversation ($name)', (transport) => {
  it('a second task in the same context sees the first one: what the user said and what the agent answered, oldest first', async () => {
    const target = await transport.start(recaller())
    const first = await send(target, 'My name is Ada')
    expect(seen(first)).toEqual(['user: My name is Ada'])
    const second = await send(target, 'What is my name?', { contextId: first.contextId })
    expect(seen(second)).toEqual([
      'user: My name is Ada',
      'agent: answer to My name is Ada[data]',
      'user: What is my name?',
    ])
  })

  it('another context is not seen', async () => {
    const target = await transport.start(recaller())
    await send(target, 'My name is Ada')
    const other = await send(target, 'Who am I?')
    expect(seen(other)).toEqual(['user: Who am I?'])
  })

  it('a follow-up to an input-required task sees its own question and answer after the earlier tasks', async () => {
    const target = await transport.start(recaller())
    const first = await send(target, 'hello')
    const asking = await send(target, 'ask', { contextId: first.contextId })
    expect(asking.status.state).toBe('input-required')
    const answered = await send(target, 'Ada', { taskId: asking.id })
    expect(seen(answered)).toEqual([
      'user: hello',
      'agent: answer to hello[data]',
      'user: ask',
      'agent: What is your name?',
      'user: Ada',
    ])
  })

  it('keeps the newest earlier tasks that fit maxBytes and leaves the older ones out', async () => {
    // Each earlier task here weighs a little over a thousand bytes of memory: 2,000 hold the newest one only.
    const target = await transport.start(recaller({ maxBytes: 2_000 }))
    const first = await send(target, 'one')
    await send(target, 'two', { contextId: first.contextId })
    const third = await send(target, 'three', { contextId: first.contextId })
    expect(seen(third)).toEqual(['user: two', 'agent: answer to two[data]', 'user: three'])
  })

  it('keeps at most maxTasks earlier tasks', async () => {
    const target = await transport.start(recaller({ maxTasks: 2 }))
    const first = await send(target, 't1')
    for (const text of ['t2', 't3']) await send(target, text, { contextId: first.contextId })
    const last = await send(target, 't4', { contextId: first.contextId })
    expect(seen(last)!.filter((line) => line.startsWith('user: '))).toEqual(['user: t2', 'user: t3', 'user: t4'])
  })

  it('a bad bound fails the task with the reason logged, not the server', async () => {
    const target = await transport.start(recaller({ maxBytes: 0 }))
    const task = await send(target, 'hi')
    expect(task.status.state).toBe('failed')
    expect(target.logger.text('error')).toContain(
      'conversation(): maxBytes must be a whole number of at least 1 (got 0)',
    )
  })
})
