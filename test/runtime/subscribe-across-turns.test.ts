import { describe, expect, it } from 'vitest'
import { agent, deferred } from './_agents.ts'
import { eventReader, readEvents } from './_sse.ts'
import { type Target, transports } from './_transports.ts'

/**
 * A subscription (SubscribeToTask, tasks/resubscribe) follows a task until it ends: through the turns that wait
 * for input, whose follow-ups any client may send. A send stream, by contrast, ends with its turn.
 */

const V1 = { 'A2A-Version': '1.0' }
const V03 = { 'A2A-Version': '0.3' }
const rpcBody = (method: string, params: unknown, id: string | number = 's') =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params })
const platformMessage = (text: string, taskId?: string) => ({
  message: {
    role: 'user',
    messageId: `m-${Math.random()}`,
    parts: [{ kind: 'text', text }],
    ...(taskId && { taskId }),
  },
})

/** "ask" and "ask again" ask for input; any other text is the answer: an artifact, then completed. */
const askingAgent = agent(
  async (ctx, task) => {
    if (ctx.text === 'ask') return task.inputRequired('Which city?')
    if (ctx.text === 'ask again') return task.inputRequired('Which day?')
    task.artifact(`Weather in ${ctx.text}`)
    task.complete()
  },
  { cancel: () => {} },
)

/** `working`, `input-required`… whichever way a dialect spells the state. */
const state = (spelled: string) =>
  spelled
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace(/_/g, '-')

/**
 * Each dialect's subscription, and one line per event it sends: `task:<state>`, `status:<state>`, `artifact:<text>`.
 */
const dialects = [
  {
    name: 'A2A v1.0 SubscribeToTask',
    subscribe: (target: Target, taskId: string, headers: Record<string, string> = {}) =>
      target.post(rpcBody('SubscribeToTask', { id: taskId }), { ...V1, ...headers }),
    summary: ({ result }: any) =>
      result.task
        ? `task:${state(result.task.status.state)}`
        : result.statusUpdate
          ? `status:${state(result.statusUpdate.status.state)}`
          : `artifact:${result.artifactUpdate.artifact.parts[0].text}`,
  },
  {
    name: 'A2A v0.3 tasks/resubscribe',
    subscribe: (target: Target, taskId: string, headers: Record<string, string> = {}) =>
      target.post(rpcBody('tasks/resubscribe', { id: taskId }), { ...V03, ...headers }),
    summary: ({ result }: any) =>
      result.kind === 'task'
        ? `task:${result.status.state}`
        : result.kind === 'status-update'
          ? `status:${result.status.state}`
          : `artifact:${result.artifact.parts[0].text}`,
  },
  {
    name: 'platform tasks/resubscribe',
    subscribe: (target: Target, taskId: string, headers: Record<string, string> = {}) =>
      target.post(rpcBody('tasks/resubscribe', { id: taskId }), headers),
    // It opens with the current status, as a notification like the others.
    summary: ({ method, params }: any) =>
      method === 'tasks/statusUpdate' ? `status:${params.status.state}` : `artifact:${params.artifact.parts[0].text}`,
  },
]

/** A task waiting for input, sent by a client that is not the subscriber (a blocking message/send). */
async function taskWaitingForInput(target: Target): Promise<string> {
  const asked = (await target.rpc('message/send', platformMessage('ask'))).body.result
  expect(asked.status.state).toBe('input-required')
  return asked.id
}

/** A follow-up from another client, without a stream: it answers once the turn settles. */
async function followUp(target: Target, taskId: string, text: string): Promise<string> {
  const reply = await target.rpc('message/send', platformMessage(text, taskId))
  expect(reply.body.error).toBeUndefined()
  return reply.body.result.status.state
}

/** Reads a live stream to its end: the summaries of its events and their ids. */
async function readToEnd(reader: ReturnType<typeof eventReader>, summary: (event: any) => string) {
  const seen: string[] = []
  const ids: number[] = []
  for (let event = await reader.next(); event !== undefined; event = await reader.next()) {
    seen.push(summary(event))
    ids.push(reader.lastId!)
  }
  return { seen, ids }
}

describe.each(transports)('subscriptions across turns ($name)', (transport) => {
  describe.each(dialects)('$name', (dialect) => {
    it('a subscription to a task waiting for input stays open (heartbeats flow) and carries the turn a follow-up from another client starts, then ends with the task', async () => {
      const target = await transport.start(askingAgent, { sseHeartbeatMs: 50 })
      const taskId = await taskWaitingForInput(target)
      const response = await dialect.subscribe(target, taskId)
      expect(response.status).toBe(200)
      const reader = eventReader(response)
      expect(dialect.summary(await reader.next())).toMatch(/^(task|status):input-required$/)
      const opened = reader.lastId!
      // Waiting for the next turn: the stream is open, and keep-alive comments come while it is quiet.
      const nextEvent = reader.next()
      await expect.poll(() => reader.heartbeats).toBeGreaterThan(0)
      expect(await followUp(target, taskId, 'Oslo')).toBe('completed')
      const first = await nextEvent
      const rest = await readToEnd(reader, dialect.summary)
      expect([dialect.summary(first), ...rest.seen]).toEqual([
        'status:working',
        'artifact:Weather in Oslo',
        'status:completed',
      ])
      expect(rest.ids).toEqual([opened + 2, opened + 3])
    })

    it('a subscription stays open through every turn that waits for input, and ends only at the terminal state', async () => {
      const target = await transport.start(askingAgent)
      const taskId = await taskWaitingForInput(target)
      const reader = eventReader(await dialect.subscribe(target, taskId))
      expect(dialect.summary(await reader.next())).toMatch(/^(task|status):input-required$/)
      expect(await followUp(target, taskId, 'ask again')).toBe('input-required')
      expect(dialect.summary(await reader.next())).toBe('status:working')
      expect(dialect.summary(await reader.next())).toBe('status:input-required')
      expect(await followUp(target, taskId, 'Lima')).toBe('completed')
      const rest = await readToEnd(reader, dialect.summary)
      expect(rest.seen).toEqual(['status:working', 'artifact:Weather in Lima', 'status:completed'])
      // Numbered across the turns: 1-2 the first, 3-4 the second, 5-7 the last.
      expect(rest.ids).toEqual([5, 6, 7])
    })

    it('a stream resumed with Last-Event-ID on a task waiting for input sends what was missed, then stays open for the next turn', async () => {
      const target = await transport.start(askingAgent)
      const taskId = await taskWaitingForInput(target)
      // Events 1 (working) and 2 (input-required): the client saw only the first.
      const reader = eventReader(await dialect.subscribe(target, taskId, { 'Last-Event-ID': '1' }))
      expect(dialect.summary(await reader.next())).toBe('status:input-required')
      expect(reader.lastId).toBe(2)
      expect(await followUp(target, taskId, 'Quito')).toBe('completed')
      const rest = await readToEnd(reader, dialect.summary)
      expect(rest.seen).toEqual(['status:working', 'artifact:Weather in Quito', 'status:completed'])
      expect(rest.ids).toEqual([3, 4, 5])
    })

    it('a subscription to a task waiting for input ends with the canceled state when the task is canceled', async () => {
      const target = await transport.start(askingAgent)
      const taskId = await taskWaitingForInput(target)
      const reader = eventReader(await dialect.subscribe(target, taskId))
      await reader.next()
      expect((await target.rpc('tasks/cancel', { id: taskId })).body.result.status.state).toBe('canceled')
      expect((await readToEnd(reader, dialect.summary)).seen).toEqual(['status:canceled'])
    })
  })

  it('two subscribers of a task waiting for input, on different dialects, get the next turn alike; a send stream of the first turn has ended at input-required', async () => {
    const target = await transport.start(askingAgent)
    const sent = await readEvents(await target.post(rpcBody('message/stream', platformMessage('ask'))))
    expect(sent.events.map((event) => event.params.status.state)).toEqual(['working', 'input-required'])
    const taskId = sent.events[0].params.taskId
    const [v1, platform] = [dialects[0]!, dialects[2]!]
    const one = eventReader(await v1.subscribe(target, taskId))
    const two = eventReader(await platform.subscribe(target, taskId))
    await Promise.all([one.next(), two.next()])
    expect(await followUp(target, taskId, 'Bern')).toBe('completed')
    const [restOne, restTwo] = await Promise.all([readToEnd(one, v1.summary), readToEnd(two, platform.summary)])
    expect(restOne).toEqual({
      seen: ['status:working', 'artifact:Weather in Bern', 'status:completed'],
      ids: [3, 4, 5],
    })
    expect(restTwo).toEqual(restOne)
  })

  it('a subscription waiting for input ends cleanly when the server closes, at once even while a running task holds the shutdown: its stream ends after the Task, the connection is not cut', async () => {
    const gate = deferred()
    const holding = agent(async (ctx, task) => {
      if (ctx.text === 'hold') {
        task.working('holding')
        await gate.promise
        task.artifact('held')
        return task.complete()
      }
      return task.inputRequired('Which city?')
    })
    const target = await transport.start(holding, { shutdownTimeoutMs: 60_000 })
    const taskId = await taskWaitingForInput(target)
    const running = (
      await target.rpc('message/send', { ...platformMessage('hold'), configuration: { blocking: false } })
    ).body.result
    const reader = eventReader(await dialects[0]!.subscribe(target, taskId))
    expect(Object.keys((await reader.next()).result)).toEqual(['task'])
    const closing = target.close()
    // Ended while the running task still holds the shutdown; a cut connection would make this read throw.
    expect(await reader.next()).toBeUndefined()
    expect((await target.app.store.get(running.id))?.status.state).toBe('working')
    gate.resolve()
    await closing
  })

  it('a subscription waiting for input counts against maxStreams until its task ends', async () => {
    const target = await transport.start(askingAgent, { maxStreams: 1 })
    const taskId = await taskWaitingForInput(target)
    const reader = eventReader(await dialects[0]!.subscribe(target, taskId))
    await reader.next()
    const refused = await target.rpc('message/stream', platformMessage('x'))
    expect(refused.status).toBe(503)
    expect(refused.body.error.message).toBe('Too many open streams (1); retry shortly')
    expect(await followUp(target, taskId, 'Rome')).toBe('completed')
    expect((await readToEnd(reader, dialects[0]!.summary)).seen.at(-1)).toBe('status:completed')
    // Its place is free again.
    const again = await readEvents(await target.post(rpcBody('message/stream', platformMessage('Paris'))))
    expect(again.events.at(-1).params.status.state).toBe('completed')
  })
})
