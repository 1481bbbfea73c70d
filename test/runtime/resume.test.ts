import { createMemoryStore } from 'a2a-runtime'
import type { TaskEvent, TaskStore } from 'a2a-runtime/store'
import { describe, expect, it } from 'vitest'
import { agent, deferred, echoAgent } from './_agents.ts'
import { eventReader, readEvents } from './_sse.ts'
import { inProcess, nodeServer, type Target, transports } from './_transports.ts'

const V1 = { 'A2A-Version': '1.0' }
const V03 = { 'A2A-Version': '0.3' }
const CHUNKS = 12

/** Sends CHUNKS artifact chunks, one per `gap` ms, then completes: events 1 (working) … CHUNKS+2 (completed). */
const trickling = (gap: number) =>
  agent(async (_ctx, task) => {
    let id: string | undefined
    for (let i = 0; i < CHUNKS; i++) {
      id = task.artifact(`chunk ${i}`, { ...(id && { artifactId: id, append: true }), lastChunk: i === CHUNKS - 1 })
      await new Promise((resolve) => setTimeout(resolve, gap))
    }
    task.complete()
  })
const LAST_EVENT = CHUNKS + 2

const platformMessage = (text: string) => ({
  message: { role: 'user', messageId: `m-${Math.random()}`, parts: [{ kind: 'text', text }] },
})
const v1Message = (text: string) => ({
  message: { role: 'ROLE_USER', messageId: `m-${Math.random()}`, parts: [{ text }] },
})
const rpcBody = (method: string, params: unknown, id: string | number = 'r') =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params })

/** Each dialect's way to start a stream and to resubscribe, and how to read a task id from its events. */
const dialects = [
  {
    name: 'A2A v1.0 (SubscribeToTask)',
    start: (target: Target) => target.post(rpcBody('SendStreamingMessage', v1Message('go')), V1),
    resubscribe: (target: Target, taskId: string, lastEventId?: number) =>
      target.post(rpcBody('SubscribeToTask', { id: taskId }), {
        ...V1,
        ...(lastEventId !== undefined && { 'Last-Event-ID': String(lastEventId) }),
      }),
    taskIdOf: (event: any) =>
      event.result.task?.id ?? event.result.statusUpdate?.taskId ?? event.result.artifactUpdate?.taskId,
    // The v1.0 stream opens with the Task (numbered like the event it reflects), which a resumed stream skips.
    isTaskFrame: (event: any) => event.result.task !== undefined,
  },
  {
    name: 'A2A v0.3 (tasks/resubscribe)',
    start: (target: Target) => target.post(rpcBody('message/stream', platformMessage('go')), V03),
    resubscribe: (target: Target, taskId: string, lastEventId?: number) =>
      target.post(rpcBody('tasks/resubscribe', { id: taskId }), {
        ...V03,
        ...(lastEventId !== undefined && { 'Last-Event-ID': String(lastEventId) }),
      }),
    taskIdOf: (event: any) => (event.result.kind === 'task' ? event.result.id : event.result.taskId),
    isTaskFrame: (event: any) => event.result.kind === 'task',
  },
  {
    name: 'platform (message/stream numbered by Last-Event-ID: 0, tasks/resubscribe)',
    start: (target: Target) => target.post(rpcBody('message/stream', platformMessage('go')), { 'Last-Event-ID': '0' }),
    resubscribe: (target: Target, taskId: string, lastEventId?: number) =>
      target.post(
        rpcBody('tasks/resubscribe', { id: taskId }),
        lastEventId !== undefined ? { 'Last-Event-ID': String(lastEventId) } : {},
      ),
    taskIdOf: (event: any) => event.params.taskId,
    isTaskFrame: () => false,
  },
]

/** Reads `count` events (not counting a Task frame), then drops the connection; returns the ids seen. */
async function readThenDrop(response: Response, count: number, dialect: (typeof dialects)[number]) {
  expect(response.status).toBe(200)
  const reader = eventReader(response)
  const ids: number[] = []
  let taskId = ''
  while (ids.length < count) {
    const event = await reader.next()
    expect(event).toBeDefined()
    taskId = dialect.taskIdOf(event)
    if (!dialect.isTaskFrame(event)) ids.push(reader.lastId!)
  }
  await reader.cancel()
  return { ids, taskId, lastId: ids.at(-1)! }
}

describe.each(transports)('resumable streams ($name)', (transport) => {
  describe.each(dialects)('$name', (dialect) => {
    it('a client that reconnects with Last-Event-ID gets exactly the rest: no gap, no duplicate, then the stream ends', async () => {
      const target = await transport.start(trickling(8))
      const first = await readThenDrop(await dialect.start(target), 4, dialect)
      expect(first.ids).toEqual([1, 2, 3, 4])
      const resumed = await readEvents(await dialect.resubscribe(target, first.taskId, first.lastId), 'numbered')
      expect(resumed.events.some(dialect.isTaskFrame)).toBe(false)
      expect([...first.ids, ...resumed.ids]).toEqual(Array.from({ length: LAST_EVENT }, (_, i) => i + 1))
    })

    it('resumes a stream whose task ended while the client was away: the missed events, the final one last', async () => {
      const target = await transport.start(trickling(1))
      const first = await readThenDrop(await dialect.start(target), 2, dialect)
      await expect
        .poll(async () => (await target.rpc('tasks/get', { id: first.taskId })).body.result?.status.state)
        .toBe('completed')
      const resumed = await readEvents(await dialect.resubscribe(target, first.taskId, first.lastId), 'numbered')
      expect(resumed.ids).toEqual(Array.from({ length: LAST_EVENT - 2 }, (_, i) => i + 3))
      expect(JSON.stringify(resumed.events.at(-1))).toMatch(/completed|COMPLETED/)
    })

    it('a Last-Event-ID equal to the last event of an ended task gives an empty stream that ends', async () => {
      const target = await transport.start(trickling(0))
      const first = await readThenDrop(await dialect.start(target), 1, dialect)
      await expect
        .poll(async () => (await target.rpc('tasks/get', { id: first.taskId })).body.result?.status.state)
        .toBe('completed')
      const response = await dialect.resubscribe(target, first.taskId, LAST_EVENT)
      expect(response.status).toBe(200)
      expect(await response.text()).toBe('')
    })
  })

  it('refuses a Last-Event-ID after the last event of the task, naming both numbers', async () => {
    const target = await transport.start(echoAgent)
    const task = (await target.rpc('SendMessage', v1Message('x'), { headers: V1 })).body.result.task
    const reply = await target.rpc('SubscribeToTask', { id: task.id }, { headers: { ...V1, 'Last-Event-ID': '99' } })
    expect(reply.body.error.code).toBe(-32602)
    expect(reply.body.error.message).toMatch(/Last-Event-ID 99 is after the last event of task .* \(3\)/)
  })

  it.each(['abc', '-1', '1.5', '1e3', '12345678901234567'])(
    'refuses Last-Event-ID %j with -32602 naming the header',
    async (value) => {
      const target = await transport.start(echoAgent)
      const reply = await target.rpc('tasks/resubscribe', { id: 'any' }, { headers: { 'Last-Event-ID': value } })
      expect(reply.body.error.code).toBe(-32602)
      expect(reply.body.error.message).toMatch(/^Invalid params: Last-Event-ID must be the number of an event/)
    },
  )

  it('says clearly when the events to resume from are no longer kept (the log of an ended task was compacted)', async () => {
    const store = createMemoryStore({ endedLogs: 1 })
    const target = await transport.start(echoAgent, { store })
    const old = (await target.rpc('SendMessage', v1Message('old'), { headers: V1 })).body.result.task
    await target.rpc('SendMessage', v1Message('newer'), { headers: V1 })
    const reply = await target.rpc('SubscribeToTask', { id: old.id }, { headers: { ...V1, 'Last-Event-ID': '1' } })
    expect(reply.body.error.code).toBe(-32004)
    expect(reply.body.error.message).toMatch(/no longer kept/)
  })

  it('numbers the opening Task of a subscription by the events it already reflects, and sends none of those again', async () => {
    // Chunks in bursts of microtasks: events happen while the subscription is being answered.
    const busy = agent(async (_ctx, task) => {
      const id = task.artifact('', { lastChunk: false })
      for (let round = 0; round < 60; round++) {
        for (let i = 0; i < 5; i++) {
          task.artifact('x', { artifactId: id, append: true, lastChunk: false })
          await null
        }
        await new Promise((resolve) => setImmediate(resolve))
      }
      task.complete()
    })
    const target = await transport.start(busy)
    const task = (
      await target.rpc(
        'SendMessage',
        { ...v1Message('go'), configuration: { returnImmediately: true } },
        { headers: V1 },
      )
    ).body.result.task
    const { events, ids } = await readEvents(
      await target.post(rpcBody('SubscribeToTask', { id: task.id }), V1),
      'numbered',
    )
    const snapshot = events[0].result.task
    // Event 1 is working, event 2 the artifact's first (empty) chunk, then one event per appended "x", which the
    // task joins to its text: the text's length counts the appends the snapshot reflects.
    const text: string | undefined = snapshot.artifacts?.[0]?.parts[0]?.text
    const chunksInSnapshot = text === undefined ? 0 : 1 + text.length
    expect(ids[0]).toBe(chunksInSnapshot + 1)
    expect(ids.slice(1)).toEqual(Array.from({ length: ids.length - 1 }, (_, i) => ids[0]! + 1 + i))
    const appended = events.slice(1).filter((e) => e.result.artifactUpdate).length
    expect(chunksInSnapshot + appended).toBe(301)
  })

  it('ignores Last-Event-ID on methods that do not stream, and refuses a non-zero one on a request that starts a stream', async () => {
    const target = await transport.start(echoAgent)
    const sent = await target.rpc('message/send', platformMessage('x'), { headers: { 'Last-Event-ID': 'abc' } })
    expect(sent.body.result.status.state).toBe('completed')
    const restarted = await target.rpc('message/stream', platformMessage('x'), { headers: { 'Last-Event-ID': '3' } })
    expect(restarted.body.error.code).toBe(-32602)
    expect(restarted.body.error.message).toMatch(
      /would start another one; resume a broken stream with tasks\/resubscribe or SubscribeToTask/,
    )
    const v1 = await target.rpc('SendStreamingMessage', v1Message('x'), { headers: { ...V1, 'Last-Event-ID': '3' } })
    expect(v1.body.error.code).toBe(-32602)
  })

  it('keeps the platform framing exact (data: lines only) unless the client sends Last-Event-ID or the agent opts in', async () => {
    const plain = await transport.start(echoAgent)
    await readEvents(await plain.post(rpcBody('message/stream', platformMessage('x'))), 'data-only')
    const optedIn = await transport.start(echoAgent, { eventIds: true })
    const { ids } = await readEvents(await optedIn.post(rpcBody('message/stream', platformMessage('x'))), 'numbered')
    expect(ids).toEqual([1, 2, 3])
  })

  it('platform tasks/resubscribe without Last-Event-ID opens with the current status, then the live events', async () => {
    const gate = deferred()
    const target = await transport.start(
      agent(async (_ctx, task) => {
        task.working('waiting')
        await gate.promise
        task.artifact('done')
        task.complete()
      }),
    )
    const sent = (await target.rpc('message/send', { ...platformMessage('x'), configuration: { blocking: false } }))
      .body.result
    await expect
      .poll(async () => (await target.rpc('tasks/get', { id: sent.id })).body.result.status.message?.parts[0].text)
      .toBe('waiting')
    const response = await target.post(rpcBody('tasks/resubscribe', { id: sent.id }))
    gate.resolve()
    const { events, ids } = await readEvents(response, 'numbered')
    expect(events.map((e) => e.method)).toEqual(['tasks/statusUpdate', 'tasks/artifactUpdate', 'tasks/statusUpdate'])
    expect(events[0].params.status.state).toBe('working')
    expect(events.at(-1).params).toMatchObject({ final: true, status: { state: 'completed' } })
    expect(ids).toEqual([2, 3, 4])
  })
})

/**
 * A memory store whose read of the missed events (the read a resumed stream makes) lets the agent run first,
 * the way a slow store's read would: the agent's next events are then both in what the read returns and in
 * what the subscription heard while it waited.
 */
function storeWithSlowResumeRead(whileReading: () => Promise<void>): TaskStore {
  const inner = createMemoryStore()
  let armed = true
  const events = async (taskId: string, afterSeq?: number): Promise<TaskEvent[] | undefined> => {
    if (armed && afterSeq) {
      armed = false
      await whileReading()
    }
    return inner.events(taskId, afterSeq)
  }
  return new Proxy(inner, {
    get(target, key) {
      if (key === 'events') return events
      const value = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

describe.each([inProcess, nodeServer])('resuming while the task moves on ($name)', (transport) => {
  it.each(dialects)(
    '$name: events that happen while the missed ones are read are sent once, in order, none missing',
    async (dialect) => {
      const burst = deferred()
      const burstSent = deferred()
      const finish = deferred()
      const moving = agent(async (_ctx, task) => {
        // Events 1 (working), 2 and 3; then 4-8 while the resumed stream reads the missed events; then 9, 10.
        const id = task.artifact('part 0', { lastChunk: false })
        task.artifact('part 1', { artifactId: id, append: true, lastChunk: false })
        await burst.promise
        for (let i = 2; i < 7; i++) task.artifact(`part ${i}`, { artifactId: id, append: true, lastChunk: false })
        burstSent.resolve()
        await finish.promise
        task.artifact('part 7', { artifactId: id, append: true, lastChunk: true })
        task.complete()
      })
      const store = storeWithSlowResumeRead(async () => {
        burst.resolve()
        await burstSent.promise
      })
      const target = await transport.start(moving, { store })
      const first = await readThenDrop(await dialect.start(target), 2, dialect)
      expect(first.ids).toEqual([1, 2])

      const reader = eventReader(await dialect.resubscribe(target, first.taskId, first.lastId))
      const ids: number[] = []
      const texts: string[] = []
      for (let event = await reader.next(); event !== undefined; event = await reader.next()) {
        // The stream is answered; the task may end now.
        finish.resolve()
        ids.push(reader.lastId!)
        const parts =
          event.result?.artifactUpdate?.artifact.parts ?? event.result?.artifact?.parts ?? event.params?.artifact?.parts
        if (parts) texts.push(parts[0].text)
      }
      expect(ids).toEqual([3, 4, 5, 6, 7, 8, 9, 10])
      expect(texts).toEqual(['part 1', 'part 2', 'part 3', 'part 4', 'part 5', 'part 6', 'part 7'])
    },
  )
})

describe('subscribing while the task moves on in the same turn (in-process)', () => {
  it('an event that lands between subscribing and sending the Task is in the Task and never sent again', async () => {
    const go = deferred()
    const PARTS = 2_000
    // One event per microtask, started in the very turn the subscription is asked for: events land at every
    // step of answering it, including between subscribing and reading the Task.
    const busy = agent(async (_ctx, task) => {
      const id = task.artifact('', { lastChunk: false })
      await go.promise
      for (let i = 0; i < PARTS; i++) {
        task.artifact('x', { artifactId: id, append: true, lastChunk: false })
        await null
      }
      task.complete()
    })
    const target = await inProcess.start(busy)
    const task = (
      await target.rpc(
        'SendMessage',
        { ...v1Message('go'), configuration: { returnImmediately: true } },
        { headers: V1 },
      )
    ).body.result.task
    await expect
      .poll(async () => (await target.rpc('GetTask', { id: task.id }, { headers: V1 })).body.result.artifacts?.length)
      .toBe(1)
    go.resolve()
    const response = target.post(rpcBody('SubscribeToTask', { id: task.id }), V1)
    const { events, ids } = await readEvents(await response, 'numbered')
    const snapshot = events[0].result.task
    // The chunks in the Task: the first (empty) one and each "x" joined to its text.
    const chunksInSnapshot = 1 + (snapshot.artifacts[0].parts[0].text as string).length
    // Subscribed mid-run: the Task has some of the chunks and the stream the rest.
    expect(chunksInSnapshot).toBeGreaterThan(1)
    expect(chunksInSnapshot).toBeLessThan(PARTS + 1)
    expect(ids[0]).toBe(chunksInSnapshot + 1)
    expect(ids.slice(1)).toEqual(Array.from({ length: ids.length - 1 }, (_, i) => ids[0]! + 1 + i))
    expect(chunksInSnapshot + events.slice(1).filter((e) => e.result.artifactUpdate).length).toBe(PARTS + 1)
  })
})
