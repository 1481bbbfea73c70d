import { createMemoryStore, type Task } from 'a2a-runtime'
import type { TaskEvent } from 'a2a-runtime/store'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ConfigurationError } from '../../runtime/src/errors.ts'
import type { MemoryTaskStore } from '../../runtime/src/stores/memory.ts'
import { agent, deferred, echoAgent, gatedAgent } from './_agents.ts'
import { userMessage } from './_messages.ts'
import { type Target, transports } from './_transports.ts'

const NOT_FOUND = { code: -32602, message: 'Task not found' }

/**
 * Stops `Date` (timers and I/O run on), so a task's age is what the test says, however slow the machine:
 * `advance` moves it on. Undone after each test.
 */
function freezeDate(): { advance(ms: number): void } {
  vi.useFakeTimers({ toFake: ['Date'] })
  return { advance: (ms) => vi.setSystemTime(Date.now() + ms) }
}
afterEach(() => void vi.useRealTimers())

async function sendCompleted(target: Target, text: string): Promise<string> {
  const reply = await target.rpc('message/send', userMessage(text))
  expect(reply.body.result?.status.state).toBe('completed')
  return reply.body.result.id
}

/** The JSON-RPC answer to tasks/get: the task, or the error object. */
async function lookUp(target: Target, id: string): Promise<{ task?: any; error?: any }> {
  const reply = await target.rpc('tasks/get', { id })
  return reply.body.error ? { error: reply.body.error } : { task: reply.body.result }
}

/**
 * `ask` asks for input at once; the follow-up (any other text) works until the test releases it, then
 * completes. Every other first message answers at once.
 */
function askingAgent() {
  let gate = deferred()
  const resumed = deferred<string>()
  const definition = agent(async (ctx, task) => {
    if (ctx.history.length === 1) {
      if (ctx.text === 'ask') {
        task.working('thinking')
        task.artifact('draft')
        task.inputRequired('Which one?')
        return
      }
      task.artifact(`Echo: ${ctx.text}`)
      task.complete()
      return
    }
    task.working('resumed')
    resumed.resolve(ctx.taskId)
    await gate.promise
    task.artifact(`chose ${ctx.text}`)
    task.complete()
  })
  return {
    agent: definition,
    resumed: resumed.promise,
    release() {
      gate.resolve()
      gate = deferred()
    },
  }
}

/** Gates still closed when a test ends are opened first, so a failing test does not wait out the shutdown grace. */
const openGates: Array<() => void> = []
const track = <T extends { release: () => void }>(gated: T): T => {
  openGates.push(gated.release)
  return gated
}

describe.each(transports)('memory store retention ($name)', (transport) => {
  afterEach(() => {
    for (const release of openGates.splice(0)) release()
  })

  describe('maxTasks', () => {
    it('keeps only the newest maxTasks settled tasks: after 8 sends with maxTasks 5 the first 3 are not found and the last 5 are', async () => {
      const store = createMemoryStore({ maxTasks: 5 })
      const target = await transport.start(echoAgent, { store })
      const ids: string[] = []
      for (let i = 0; i < 8; i++) ids.push(await sendCompleted(target, `n${i}`))

      for (const id of ids.slice(0, 3)) expect(await lookUp(target, id)).toEqual({ error: NOT_FOUND })
      for (const [i, id] of ids.slice(3).entries()) {
        const { task } = await lookUp(target, id)
        expect(task?.status.state).toBe('completed')
        expect(task?.artifacts[0].parts[0].text).toBe(`Echo: n${i + 3}`)
      }
      expect(store.size).toBe(5)
    })

    it('never holds more than maxTasks tasks over 1,000 sends', async () => {
      const store = createMemoryStore({ maxTasks: 5 })
      const target = await transport.start(echoAgent, { store })
      let largest = 0
      let last = ''
      for (let i = 0; i < 1_000; i++) {
        last = await sendCompleted(target, `n${i}`)
        largest = Math.max(largest, store.size)
      }
      expect(largest).toBe(5)
      expect(store.size).toBe(5)
      expect((await lookUp(target, last)).task?.status.state).toBe('completed')
    })

    it('never evicts a running task: a flood of completed tasks past maxTasks leaves it retrievable, and it completes when released', async () => {
      const gated = track(gatedAgent({ cancelable: false }))
      const router = agent((ctx, task) =>
        ctx.text === 'hold' ? gated.agent.execute(ctx, task) : echoAgent.execute(ctx, task),
      )
      const store = createMemoryStore({ maxTasks: 3 })
      const target = await transport.start(router, { store })

      const running = (await target.rpc('message/send', { ...userMessage('hold'), configuration: { blocking: false } }))
        .body.result
      expect(await gated.started).toBe(running.id)
      const flood: string[] = []
      for (let i = 0; i < 20; i++) {
        flood.push(await sendCompleted(target, `flood ${i}`))
        expect(store.size).toBeLessThanOrEqual(3)
        // Held by the store itself, not only by the engine that runs it.
        expect(store.get(running.id)?.status.state).toBe('working')
      }
      // The bound was enforced on the others meanwhile.
      expect(await lookUp(target, flood[0]!)).toEqual({ error: NOT_FOUND })
      expect((await lookUp(target, running.id)).task?.status.state).toBe('working')

      gated.release()
      await expect.poll(async () => (await lookUp(target, running.id)).task?.status.state).toBe('completed')
      const { task } = await lookUp(target, running.id)
      expect(task.artifacts[0].parts[0].text).toBe('finished')
      expect(store.get(running.id)?.status.state).toBe('completed')
    })

    it('evicts the task that settled longest ago first, not the one created first', async () => {
      const gated = track(gatedAgent({ cancelable: false }))
      const router = agent((ctx, task) =>
        ctx.text === 'hold' ? gated.agent.execute(ctx, task) : echoAgent.execute(ctx, task),
      )
      const store = createMemoryStore({ maxTasks: 3 })
      const target = await transport.start(router, { store })

      const early = (await target.rpc('message/send', { ...userMessage('hold'), configuration: { blocking: false } }))
        .body.result.id
      await gated.started
      const a = await sendCompleted(target, 'a')
      const b = await sendCompleted(target, 'b')
      gated.release()
      await expect.poll(async () => (await lookUp(target, early)).task?.status.state).toBe('completed')
      // Settle order is now a, b, early: the next two tasks push out a and b.
      const c = await sendCompleted(target, 'c')
      expect(await lookUp(target, a)).toEqual({ error: NOT_FOUND })
      const d = await sendCompleted(target, 'd')
      expect(await lookUp(target, b)).toEqual({ error: NOT_FOUND })
      for (const id of [early, c, d]) expect((await lookUp(target, id)).task?.status.state).toBe('completed')
    })
  })

  describe('ttlMs', () => {
    it('finds a completed task at once and no longer once it is older than ttlMs', async () => {
      const store = createMemoryStore({ ttlMs: 50 })
      const target = await transport.start(echoAgent, { store })
      const clock = freezeDate()
      const id = await sendCompleted(target, 'short-lived')
      expect((await lookUp(target, id)).task?.status.state).toBe('completed')
      clock.advance(49)
      expect((await lookUp(target, id)).task?.status.state).toBe('completed')
      clock.advance(2)
      expect(await lookUp(target, id)).toEqual({ error: NOT_FOUND })
    })

    it('drops expired tasks on its own timer, without a read', async () => {
      // The sweeper runs every ttlMs (real time); the tasks' age is the frozen clock's.
      const store = createMemoryStore({ ttlMs: 50 })
      const target = await transport.start(echoAgent, { store })
      const clock = freezeDate()
      for (let i = 0; i < 3; i++) await sendCompleted(target, `n${i}`)
      expect(store.size).toBe(3)
      clock.advance(51)
      await expect.poll(() => store.size, { interval: 10 }).toBe(0)
    })

    it('keeps a running task past ttlMs', async () => {
      const gated = track(gatedAgent({ cancelable: false }))
      const store = createMemoryStore({ ttlMs: 50 })
      const target = await transport.start(gated.agent, { store })
      // Stopped, so the task, once completed, stays young enough to be read back.
      freezeDate()
      const id = (await target.rpc('message/send', { ...userMessage('hold'), configuration: { blocking: false } })).body
        .result.id
      await gated.started
      // A sweep as if long past ttlMs.
      store.sweep(Date.now() + 60_000)
      expect(store.get(id)?.status.state).toBe('working')
      gated.release()
      await expect.poll(async () => (await lookUp(target, id)).task?.status.state).toBe('completed')
    })
  })

  describe('input-required', () => {
    it('counts a task waiting for input as settled: it is evicted past maxTasks like a finished one', async () => {
      const asking = track(askingAgent())
      const store = createMemoryStore({ maxTasks: 3 })
      const target = await transport.start(asking.agent, { store })
      const waiting = (await target.rpc('message/send', userMessage('ask'))).body.result
      expect(waiting.status.state).toBe('input-required')
      for (let i = 0; i < 2; i++) await sendCompleted(target, `n${i}`)
      expect((await lookUp(target, waiting.id)).task?.status.state).toBe('input-required')
      await sendCompleted(target, 'one too many')
      expect(await lookUp(target, waiting.id)).toEqual({ error: NOT_FOUND })
    })

    it('counts a task waiting for input as settled: it expires after ttlMs', async () => {
      const asking = track(askingAgent())
      const store = createMemoryStore({ ttlMs: 50 })
      const target = await transport.start(asking.agent, { store })
      const clock = freezeDate()
      const waiting = (await target.rpc('message/send', userMessage('ask'))).body.result
      expect(waiting.status.state).toBe('input-required')
      expect((await lookUp(target, waiting.id)).task?.status.state).toBe('input-required')
      clock.advance(51)
      expect(await lookUp(target, waiting.id)).toEqual({ error: NOT_FOUND })
    })

    it('does not evict a task a follow-up resumed while it runs, however many tasks complete meanwhile', async () => {
      const asking = track(askingAgent())
      const store = createMemoryStore({ maxTasks: 3 })
      const target = await transport.start(asking.agent, { store })
      const waiting = (await target.rpc('message/send', userMessage('ask'))).body.result
      expect(waiting.status.state).toBe('input-required')

      const followUp = await target.rpc('message/send', {
        ...userMessage('B', { taskId: waiting.id }),
        configuration: { blocking: false },
      })
      expect(followUp.body.result).toMatchObject({ id: waiting.id, status: { state: 'working' } })
      expect(await asking.resumed).toBe(waiting.id)
      // The task settled first of all, so it would be the first to go if it still counted as settled.
      for (let i = 0; i < 10; i++) {
        await sendCompleted(target, `flood ${i}`)
        expect(store.get(waiting.id)?.status.state).toBe('working')
      }
      expect(store.size).toBeLessThanOrEqual(3)

      asking.release()
      await expect.poll(async () => (await lookUp(target, waiting.id)).task?.status.state).toBe('completed')
      const { task } = await lookUp(target, waiting.id)
      expect(task.artifacts.map((a: any) => a.parts[0].text)).toEqual(['draft', 'chose B'])
    })
  })

  describe('event log', () => {
    it('keeps the ordered events (seq 1..n) of a task waiting for input, and compacts them into the task once it has ended and later tasks have ended after it', async () => {
      const asking = track(askingAgent())
      const store = createMemoryStore({ endedLogs: 1 })
      const target = await transport.start(asking.agent, { store })
      const waiting = (await target.rpc('message/send', userMessage('ask'))).body.result
      expect(waiting.status.state).toBe('input-required')

      const log = store.events(waiting.id)
      expect(log?.map((e) => e.seq)).toEqual([1, 2, 3, 4])
      expect(log?.map(describeEvent)).toEqual([
        'status:working',
        'status:working:thinking',
        'artifact:draft',
        'status:input-required:Which one?',
      ])
      expect(log?.every((e) => e.taskId === waiting.id && e.contextId === waiting.contextId)).toBe(true)
      expect(store.events(waiting.id, 2)?.map((e) => e.seq)).toEqual([3, 4])

      const followUp = await target.rpc('message/send', {
        ...userMessage('A', { taskId: waiting.id }),
        configuration: { blocking: false },
      })
      expect(followUp.body.result.status.state).toBe('working')
      await asking.resumed
      // The resumed turn numbers its events after the first turn's.
      expect(store.events(waiting.id)?.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6])
      expect(store.events(waiting.id)?.slice(4).map(describeEvent)).toEqual([
        'status:working',
        'status:working:resumed',
      ])

      asking.release()
      await expect.poll(async () => (await lookUp(target, waiting.id)).task?.status.state).toBe('completed')
      // Ended: its events stay for a client resuming a broken stream, until a later task ends after it.
      expect(store.events(waiting.id)?.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
      expect(store.events(waiting.id)?.at(-1)).toMatchObject({
        kind: 'status-update',
        final: true,
        status: { state: 'completed' },
      })
      await sendCompleted(target, 'a later task')
      expect(store.events(waiting.id)).toBeUndefined()
      expect(store.events(waiting.id, 0)).toBeUndefined()
      // The task says it all.
      const task = store.get(waiting.id)
      expect(task?.artifacts.map((a) => (a.parts[0] as { text: string }).text)).toEqual(['draft', 'chose A'])
      expect(task?.history.map((m) => m.role)).toEqual(['user', 'agent', 'user'])
    })

    it('keeps the logs of the last endedLogs tasks to end (final event included), none of older ones, nor of an unknown task', async () => {
      const store = createMemoryStore({ endedLogs: 2 })
      const target = await transport.start(echoAgent, { store })
      const [first, second, third] = [
        await sendCompleted(target, 'one'),
        await sendCompleted(target, 'two'),
        await sendCompleted(target, 'three'),
      ]
      expect(store.get(first)?.status.state).toBe('completed')
      expect(store.events(first)).toBeUndefined()
      for (const id of [second, third])
        expect(store.events(id)?.at(-1)).toMatchObject({ final: true, status: { state: 'completed' } })
      expect(store.events('no-such-task')).toBeUndefined()
    })

    it('keeps no log of an ended task with endedLogs: 0', async () => {
      const store = createMemoryStore({ endedLogs: 0 })
      const target = await transport.start(echoAgent, { store })
      expect(store.events(await sendCompleted(target, 'done'))).toBeUndefined()
    })
  })
})

function describeEvent(event: TaskEvent): string {
  if (event.kind === 'artifact-update') return `artifact:${(event.artifact.parts[0] as { text: string }).text}`
  const text = (event.status.message?.parts[0] as { text: string } | undefined)?.text
  return `status:${event.status.state}${text === undefined ? '' : `:${text}`}`
}

describe('MemoryTaskStore', () => {
  const stores: MemoryTaskStore[] = []
  afterEach(() => {
    for (const store of stores.splice(0)) store.close()
  })
  const open = (options?: Parameters<typeof createMemoryStore>[0]) => {
    const store = createMemoryStore(options)
    stores.push(store)
    return store
  }

  const task = (id: string): Task => ({
    kind: 'task',
    id,
    contextId: `ctx-${id}`,
    status: { state: 'submitted', timestamp: new Date().toISOString() },
    artifacts: [],
    history: [],
  })
  let seq = 0
  const settle = (store: MemoryTaskStore, t: Task, state: 'completed' | 'input-required' = 'completed') => {
    t.status = { state, timestamp: new Date().toISOString() }
    store.append(t, {
      kind: 'status-update',
      seq: ++seq,
      taskId: t.id,
      contextId: t.contextId,
      status: t.status,
      final: true,
    })
  }

  it('a context lists only the tasks retention keeps: an evicted task leaves its context, and an emptied context lists nothing', () => {
    const store = open({ maxTasks: 2 })
    const inContext = (id: string, contextId: string) => ({ ...task(id), contextId })
    const first = inContext('a', 'shared')
    const second = inContext('b', 'shared')
    const third = inContext('c', 'other')
    for (const t of [first, second, third]) {
      store.create(t)
      settle(store, t)
    }
    // Retention drops the oldest settled task once a third is kept.
    expect(store.has('a')).toBe(false)
    expect(store.list({ contextId: 'shared', limit: 10 }).tasks.map((t) => t.id)).toEqual(['b'])
    store.forget('b')
    expect(store.list({ contextId: 'shared', limit: 10 })).toEqual({ tasks: [], total: 0 })
    expect(store.list({ contextId: 'other', limit: 10 }).tasks.map((t) => t.id)).toEqual(['c'])
  })

  it('lists a context the same whether its tasks came before or after the first list by context, through evictions and replacements', () => {
    const store = open({ maxTasks: 6 })
    const inContext = (id: string, contextId: string) => ({ ...task(id), contextId })
    const all: Task[] = []
    const add = (id: string, contextId: string) => {
      const t = inContext(id, contextId)
      store.create(t)
      settle(store, t)
      all.push(t)
    }
    // What a brute-force walk of the kept tasks says the context holds.
    const expected = (contextId: string) =>
      all
        .filter((t) => t.contextId === contextId && store.has(t.id))
        .map((t) => t.id)
        .sort()
    const listed = (contextId: string) =>
      store
        .list({ contextId, limit: 100 })
        .tasks.map((t) => t.id)
        .sort()
    for (const [i, contextId] of ['x', 'y', 'x', 'x'].entries()) add(`before-${i}`, contextId)
    expect(listed('x')).toEqual(expected('x'))
    expect(listed('y')).toEqual(['before-1'])
    // After the first list: new tasks join, evicted ones (retention keeps 6) leave, a restored task is one entry.
    for (const [i, contextId] of ['y', 'x', 'y', 'z', 'x'].entries()) add(`after-${i}`, contextId)
    store.create(structuredClone(all.find((t) => t.id === 'after-1')!))
    for (const contextId of ['x', 'y', 'z']) expect(listed(contextId)).toEqual(expected(contextId))
    expect(listed('x').length + listed('y').length + listed('z').length).toBe(6)
  })

  it.each([
    [{ maxTasks: 0 }, 'maxTasks'],
    [{ maxTasks: -3 }, 'maxTasks'],
    [{ maxTasks: Number.NaN }, 'maxTasks'],
    [{ ttlMs: -1 }, 'ttlMs'],
    [{ ttlMs: 0 }, 'ttlMs'],
    [{ ttlMs: Number.POSITIVE_INFINITY }, 'ttlMs'],
  ])('rejects %o with a ConfigurationError naming the option, as every other setting does', (options, name) => {
    expect(() => createMemoryStore(options)).toThrow(ConfigurationError)
    expect(() => createMemoryStore(options)).toThrow(name)
  })

  it('sweep() removes only the settled tasks older than ttlMs, never a running one', () => {
    const store = open({ ttlMs: 1_000 })
    const running = task('running')
    const old = task('old')
    const young = task('young')
    store.create(running)
    store.create(old)
    store.create(young)
    settle(store, old)
    const settledAt = Date.now()
    settle(store, young)
    store.sweep(settledAt + 500)
    expect(store.size).toBe(3)
    store.sweep(settledAt + 10_000_000)
    expect(store.size).toBe(1)
    expect(store.get('running')).toBe(running)
  })

  it('hides a settled task older than ttlMs from get() even before the sweeper has run', () => {
    // A long ttl keeps the sweeper (every min(ttlMs, 60 s)) out of the way; only the clock moves.
    const store = open({ ttlMs: 60_000 })
    const t = task('aging')
    store.create(t)
    settle(store, t)
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      vi.setSystemTime(Date.now() + 59_000)
      expect(store.get('aging')).toBe(t)
      vi.setSystemTime(Date.now() + 2_000)
      expect(store.get('aging')).toBeUndefined()
      expect(store.size).toBe(0)
    } finally {
      vi.useRealTimers()
    }
  })

  it('lets running tasks alone exceed maxTasks rather than drop one, and trims back to the bound on the next create once they settled', () => {
    const store = open({ maxTasks: 2 })
    const tasks = ['a', 'b', 'c'].map(task)
    for (const t of tasks) store.create(t)
    expect(store.size).toBe(3)
    for (const t of tasks) expect(store.get(t.id)).toBe(t)
    for (const t of tasks) settle(store, t)
    store.create(task('d'))
    expect(store.size).toBeLessThanOrEqual(2)
    expect(store.get('d')).toBeDefined()
  })
})
