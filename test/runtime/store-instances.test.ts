import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type A2AServer, defineAgent, serveAgent } from 'a2a-runtime'
import { afterEach, describe, expect, inject, it } from 'vitest'
import { storeFromSetting } from '../../runtime/src/stores/from-setting.ts'
import type { TaskStore } from '../../runtime/src/stores/task-store.ts'
import type { Task, TaskEvent } from '../../runtime/src/types.ts'
import {
  type AgentInstance,
  type Answer,
  freshName,
  SHORT_LEASE_MS,
  startInstances,
  stopAll,
  withStoreOptions,
} from './_instances.ts'
import { startPostgres } from './_postgres.ts'
import { startRedis } from './_redis.ts'
import { eventReader } from './_sse.ts'

/**
 * Issue 38's proof that a shared store serves several agent processes: two instances of one agent on one store
 * (Redis, PostgreSQL), tasks begun on one and continued, canceled and resumed on the other, an instance killed
 * mid-task, the database restarted under load. Everything goes through the instances' HTTP (A2A v1.0, JSON-RPC).
 */

/** A database server of the test's own, which it can crash and start again. */
interface OwnServer {
  url: string
  kill(): Promise<void>
  restart(): Promise<void>
  stop(): Promise<void>
}

interface StoreUnderTest {
  name: string
  /** The run's shared server with a fresh key prefix or schema: a store nobody else uses. */
  freshStore(): string
  /** A durable server of its own (a crash keeps what was acknowledged), and its store URL. */
  ownServer(): Promise<{ server: OwnServer; store: string }>
  /** What a refusal while the database is down names. */
  downMessage: RegExp
}

const STORES: StoreUnderTest[] = [
  {
    name: 'Redis',
    freshStore: () => withStoreOptions(required(inject('redisUrl'), 'redis-server'), { prefix: `${freshName('i')}:` }),
    async ownServer() {
      const dir = mkdtempSync(join(tmpdir(), 'a2a-redis-instances-'))
      const redis = await startRedis({ durableDir: dir })
      const server = {
        ...redis,
        stop: async () => {
          await redis.stop()
          rmSync(dir, { recursive: true, force: true })
        },
      }
      return { server, store: withStoreOptions(redis.url, { prefix: `${freshName('i')}:` }) }
    },
    downMessage: /task store \(Redis\)/,
  },
  {
    name: 'PostgreSQL',
    freshStore: () =>
      withStoreOptions(required(inject('postgresUrl'), 'PostgreSQL'), { schema: freshName('instances') }),
    async ownServer() {
      const server = await startPostgres()
      return { server, store: withStoreOptions(server.url, { schema: freshName('instances') }) }
    },
    downMessage: /task store \(PostgreSQL\)/,
  },
]

function required(url: string, what: string): string {
  if (!url) throw new Error(`${what} is not installed (.ci/run installs it)`)
  return url
}

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function instancesOn(store: string, options: { leaseMs?: number } = {}): Promise<AgentInstance[]> {
  const instances = await startInstances(store, options)
  cleanups.push(() => stopAll(instances))
  return instances
}

const DONE = 'TASK_STATE_COMPLETED'
/** The reason a task whose instance died is failed with, by whichever instance finds it. */
const LOST_REASON = /^The instance running the task stopped before it finished$/
const TERMINAL = new Set([DONE, 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'])
let messages = 0
const message = (text: string, taskId?: string) => ({
  message: { role: 'ROLE_USER', messageId: `m-${++messages}`, parts: [{ text }], ...(taskId && { taskId }) },
})
/** SendMessage's task, or a readable failure when it answered something else. */
function taskOf(answer: Answer): any {
  if (!answer.body?.result?.task) throw new Error(`not a task: ${answer.status} ${JSON.stringify(answer.body)}`)
  return answer.body.result.task
}
const textOf = (task: any) => task.artifacts?.map((artifact: any) => artifact.parts[0].text).join('|')

/** Runs `work(i)` for i in 0..count-1, at most `concurrency` at a time. */
async function boundedRuns(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < count) await work(next++)
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
}

/** What each of the 1,000 tasks does, by its index: out of every 20, 3 follow-ups, 2 cancels, 2 resumed streams. */
type Script = 'answer' | 'follow-up' | 'cancel' | 'resume'
const scriptOf = (i: number): Script => {
  const slot = i % 20
  return slot < 3 ? 'follow-up' : slot < 5 ? 'cancel' : slot < 7 ? 'resume' : 'answer'
}
const TASKS = 1000
const CONCURRENCY = 16
const COUNTS: Record<Script, number> = { answer: 0, 'follow-up': 0, cancel: 0, resume: 0 }
for (let i = 0; i < TASKS; i++) COUNTS[scriptOf(i)]++
/** The chunks of a resumed stream, and how many are read before the first stream is cut. */
const CHUNKS = 6
const CHUNKS_BEFORE_CUT = 2

/** A task as its script left it: where to read it back, and what it must be then. */
interface Outcome {
  i: number
  id: string
  readFrom: AgentInstance
  state: string
  text?: string
}

/**
 * Runs task `i`'s script, begun on `first` and continued on `other`; resolves with what the task must be at the
 * end. Throws with what went wrong otherwise.
 */
async function runScript(i: number, first: AgentInstance, other: AgentInstance): Promise<Outcome> {
  const script = scriptOf(i)
  if (script === 'answer') {
    const task = taskOf(await first.call('SendMessage', message(`task ${i}`)))
    expectState(task, DONE, `task ${i} answered by ${first.name}`)
    return { i, id: task.id, readFrom: other, state: DONE, text: `echo task ${i}` }
  }
  if (script === 'follow-up') {
    const asked = taskOf(await first.call('SendMessage', message('ask')))
    expectState(asked, 'TASK_STATE_INPUT_REQUIRED', `task ${i} asking on ${first.name}`)
    const done = taskOf(await other.call('SendMessage', message(`reply ${i}`, asked.id)))
    expectState(done, DONE, `task ${i} continued on ${other.name}`)
    return { i, id: asked.id, readFrom: first, state: DONE, text: `heard reply ${i}` }
  }
  if (script === 'cancel') {
    const running = taskOf(
      await first.call('SendMessage', { ...message('until-canceled'), configuration: { returnImmediately: true } }),
    )
    const canceled = await other.call('CancelTask', { id: running.id })
    expectState(canceled.body?.result, 'TASK_STATE_CANCELED', `task ${i} canceled through ${other.name}`)
    return { i, id: running.id, readFrom: first, state: 'TASK_STATE_CANCELED' }
  }
  return resumeAcross(i, first, other)
}

function expectState(task: any, state: string, what: string): void {
  if (task?.status?.state !== state)
    throw new Error(`${what}: ${task?.status?.state ?? 'no task'}, not ${state}: ${JSON.stringify(task).slice(0, 400)}`)
}

/**
 * Streams a task from `first`, cuts the stream after CHUNKS_BEFORE_CUT chunks, resumes it on `other` with
 * Last-Event-ID: the numbered events of both streams, together, are each event once and in order, the chunks too,
 * ending with the task's completion.
 */
async function resumeAcross(i: number, first: AgentInstance, other: AgentInstance): Promise<Outcome> {
  const stream = await first.stream('SendStreamingMessage', message(`stream:${CHUNKS}:40`))
  const opening = await stream.next()
  const id: string = opening?.result?.task?.id
  if (!id)
    throw new Error(`task ${i}: the stream on ${first.name} did not open with the task: ${JSON.stringify(opening)}`)
  const events = []
  let chunks = 0
  while (chunks < CHUNKS_BEFORE_CUT) {
    const event = await stream.next()
    if (!event) throw new Error(`task ${i}: the stream on ${first.name} ended after ${chunks} chunks`)
    events.push(event)
    if (event.result.artifactUpdate) chunks++
  }
  await stream.cancel()
  const lastId = events.at(-1)!.id
  const resumed = await other.stream('SubscribeToTask', { id }, { 'last-event-id': String(lastId) })
  for (let event = await resumed.next(); event; event = await resumed.next()) events.push(event)
  const ids = events.map((event) => event.id)
  const contiguous = Array.from({ length: ids.length }, (_, k) => ids[0]! + k)
  const texts = events.flatMap((event) => event.result.artifactUpdate?.artifact.parts[0].text ?? [])
  const ending = events.at(-1)!.result.statusUpdate?.status.state
  const chunkTexts = Array.from({ length: CHUNKS }, (_, k) => `chunk ${k + 1}`)
  if (JSON.stringify(ids) !== JSON.stringify(contiguous) || JSON.stringify(texts) !== JSON.stringify(chunkTexts))
    throw new Error(
      `task ${i}: cut on ${first.name} after event ${lastId}, resumed on ${other.name}: ids ${ids.join(',')}, chunks ${texts.join(',')}`,
    )
  if (ending !== DONE) throw new Error(`task ${i}: the resumed stream ended with ${ending}, not completed`)
  return { i, id, readFrom: first, state: DONE, text: chunkTexts.join('') }
}

describe.each(STORES)('two agent processes on one $name store', (store) => {
  it(`serve ${TASKS.toLocaleString('en')} tasks sent to A and B alternately, ${CONCURRENCY} at a time, 0 lost: ${COUNTS.answer} answered at once, ${COUNTS['follow-up']} answered with a follow-up sent to the other instance, ${COUNTS.cancel} canceled through the other, ${COUNTS.resume} streamed from one and resumed on the other with Last-Event-ID (each event once, in order); at the end every task as its script left it, none working`, {
    timeout: 150_000,
  }, async () => {
    const instances = await instancesOn(store.freshStore(), { leaseMs: 10_000 })
    const [a, b] = instances as [AgentInstance, AgentInstance]
    const outcomes: Outcome[] = []
    const problems: string[] = []
    const started = Date.now()
    await boundedRuns(TASKS, CONCURRENCY, async (i) => {
      const [first, other] = i % 2 ? [b, a] : [a, b]
      try {
        outcomes.push(await runScript(i, first, other))
      } catch (error) {
        problems.push((error as Error).message)
      }
    })
    const ran = Date.now() - started
    expect(problems.slice(0, 5), `${problems.length} of ${TASKS} scripts went wrong`).toEqual([])

    const lost: string[] = []
    await boundedRuns(outcomes.length, CONCURRENCY, async (k) => {
      const expected = outcomes[k]!
      const read = await expected.readFrom.call('GetTask', { id: expected.id })
      const task = read.body?.result
      if (task?.status?.state !== expected.state || (expected.text !== undefined && textOf(task) !== expected.text))
        lost.push(
          `task ${expected.i} (${scriptOf(expected.i)}) read on ${expected.readFrom.name}: ${JSON.stringify(read.body).slice(0, 300)}`,
        )
    })
    expect(lost.slice(0, 5), `${lost.length} of ${TASKS} tasks are not as their script left them`).toEqual([])
    for (const instance of instances) {
      expect((await instance.call('ListTasks', { pageSize: 1 })).body.result.totalSize).toBe(TASKS)
      const working = await instance.call('ListTasks', { status: 'TASK_STATE_WORKING' })
      expect(working.body.result.totalSize, `working tasks, read on ${instance.name}`).toBe(0)
    }
    console.info(
      `${store.name}: ${TASKS} tasks (${JSON.stringify(COUNTS)}) on two instances in ${ran} ms, checked in ${Date.now() - started - ran} ms: 0 lost`,
    )
  })

  it(`fail the running tasks of an instance killed mid-task (SIGKILL) with the reason, read through the survivor, once its lease (${SHORT_LEASE_MS} ms) has run out; none left working`, {
    timeout: 60_000,
  }, async () => {
    const instances = await instancesOn(store.freshStore(), { leaseMs: SHORT_LEASE_MS })
    const [a, b] = instances as [AgentInstance, AgentInstance]
    const running: string[] = []
    for (let k = 0; k < 4; k++) {
      const task = taskOf(
        await a.call('SendMessage', { ...message('long:120000'), configuration: { returnImmediately: true } }),
      )
      running.push(task.id)
    }
    for (const id of running)
      await expect
        .poll(async () => (await b.call('GetTask', { id })).body.result?.status.state)
        .toBe('TASK_STATE_WORKING')

    // The earliest the instance can have died: the bound below is measured from it.
    const killed = Date.now()
    await a.kill()
    const failedAt = new Map<string, number>()
    await expect
      .poll(
        async () => {
          for (const id of running) {
            if (failedAt.has(id)) continue
            const task = (await b.call('GetTask', { id })).body.result
            if (task?.status.state !== 'TASK_STATE_WORKING') failedAt.set(id, Date.now() - killed)
          }
          return failedAt.size
        },
        { timeout: 4 * SHORT_LEASE_MS + 10_000, interval: 100 },
      )
      .toBe(running.length)
    // When each was failed, by the failed status's timestamp (the survivor's clock, on this machine): not when the
    // poll above happened to read it.
    const failedAfterKill: number[] = []
    for (const id of running) {
      const task = (await b.call('GetTask', { id })).body.result
      expect(task.status).toMatchObject({
        state: 'TASK_STATE_FAILED',
        message: { parts: [{ text: expect.stringMatching(LOST_REASON) }] },
      })
      failedAfterKill.push(Date.parse(task.status.timestamp) - killed)
    }
    const slowest = Math.max(...failedAfterKill)
    console.info(
      `${store.name}: ${running.length} tasks of a killed instance failed ${failedAfterKill.sort((x, y) => x - y).join(', ')} ms after the kill by their status (read through the survivor ${[...failedAt.values()].sort((x, y) => x - y).join(', ')} ms after it; lease ${SHORT_LEASE_MS} ms)`,
    )
    if (store.name === 'PostgreSQL') {
      // leaseMs is the longest a task whose instance died waits; a second more for scheduling on a busy machine.
      expect(slowest).toBeLessThanOrEqual(SHORT_LEASE_MS + 1000)
    } else {
      // Redis times its leases its own way: one runs out up to a lease after its last renewal, and the survivor
      // looks for lost tasks once a lease.
      expect(slowest).toBeLessThan(2 * SHORT_LEASE_MS + 5000)
    }
    expect((await b.call('ListTasks', { status: 'TASK_STATE_WORKING' })).body.result.totalSize).toBe(0)
    // The survivor goes on serving.
    expectState(taskOf(await b.call('SendMessage', message('after'))), DONE, 'a task sent to the survivor')
  })

  it('lose nothing acknowledged when the database restarts under load: every task answered is readable afterwards, in at least the state it was answered with, each failed send got a 503 naming the store, and nothing is left working once leases ran out', {
    timeout: 90_000,
  }, async () => {
    const { server, store: url } = await store.ownServer()
    cleanups.push(() => server.stop())
    const instances = await instancesOn(url, { leaseMs: SHORT_LEASE_MS })
    const [a, b] = instances as [AgentInstance, AgentInstance]
    const acknowledged: Acknowledged[] = []
    const wrong: string[] = []
    let refused = 0
    let stop = false
    const worker = async (n: number) => {
      for (let round = 0; !stop && round < 5000; round++) {
        const on = (n + round) % 2 ? a : b
        // Every third a task that goes on working after its answer, so some are running when the database goes.
        const params =
          round % 3 === 0
            ? { ...message('stream:4:100'), configuration: { returnImmediately: true } }
            : message(`load ${n}.${round}`)
        let answer: Answer
        try {
          answer = await on.call('SendMessage', params)
        } catch (error) {
          wrong.push(`${on.name}: no answer (${(error as Error).message})`)
          continue
        }
        const task = answer.body?.result?.task
        if (answer.status === 200 && task) acknowledged.push({ id: task.id, state: task.status.state, on })
        else if (isClearRefusal(answer, store.downMessage)) {
          refused++
          await new Promise((resolve) => setTimeout(resolve, 20))
        } else wrong.push(`${on.name}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 400)}`)
      }
    }
    const workers = Array.from({ length: 8 }, (_, n) => worker(n))
    try {
      await expect.poll(() => acknowledged.length, { timeout: 20_000 }).toBeGreaterThan(50)
      await server.kill()
      const down = Date.now()
      // Down for a while (half a lease at least), long enough that writes in flight fail, not only new sends.
      await expect.poll(() => refused >= 10 && Date.now() - down >= SHORT_LEASE_MS / 2, { timeout: 20_000 }).toBe(true)
      await server.restart()
      const atRestart = acknowledged.length
      await expect.poll(() => acknowledged.length, { timeout: 30_000 }).toBeGreaterThan(atRestart + 50)
    } finally {
      stop = true
      await Promise.all(workers)
    }
    expect(wrong.slice(0, 3), `${wrong.length} sends answered neither a task nor a clear 503`).toEqual([])

    // Settled once the leases of tasks whose instance lost the database ran out and they were failed as lost.
    const { unsettled, changed, ended } = await readBackSettled(acknowledged, (ack) => (ack.on === a ? b : a), {
      timeoutMs: 4 * SHORT_LEASE_MS + 20_000,
    })
    expect(
      unsettled.slice(0, 3),
      `${unsettled.length} of ${acknowledged.length} acknowledged tasks are not settled`,
    ).toEqual([])
    expect(changed.slice(0, 3), `${changed.length} acknowledged tasks changed their final state`).toEqual([])
    const final = acknowledged.filter((ack) => TERMINAL.has(ack.state)).length
    console.info(
      `${store.name} restarted under load: ${acknowledged.length} sends acknowledged (${final} with their final state), ${refused} refused with a 503 naming the store, 0 lost; they ended ${JSON.stringify(ended)}`,
    )
  })

  it('resume on B from an event A streamed before its write reached the store: B waits for the store to bring it, then sends the rest, each once', {
    timeout: 30_000,
  }, async () => {
    const url = store.freshStore()
    const [a, b] = [await inProcessInstance(url, { writeDelayMs: 300 }), await inProcessInstance(url)]
    const stream = await fetch(a.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: message('chunks') }),
    })
    const reader = eventReader(stream)
    const taskId = (await reader.next()).result.task.id
    while (!(await reader.next())?.result.artifactUpdate) {}
    const lastId = reader.lastId!
    await reader.cancel()
    // At once: A writes each event 300 ms after it streamed it, so B has not read event `lastId` yet.
    const answer = await fetch(b.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'last-event-id': String(lastId) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'SubscribeToTask', params: { id: taskId } }),
    })
    if (!answer.headers.get('content-type')?.startsWith('text/event-stream'))
      expect.fail(`B answered the resume from ${lastId} with ${answer.status}: ${await answer.text()}`)
    const resumed = eventReader(answer)
    const rest: Array<[number, any]> = []
    for (let event = await resumed.next(); event; event = await resumed.next()) rest.push([resumed.lastId!, event])
    expect(rest.map(([id]) => id)).toEqual([lastId + 1, lastId + 2])
    expect(rest[0]![1].result.artifactUpdate.artifact.parts[0].text).toBe('chunk 2')
    expect(rest[1]![1].result.statusUpdate.status.state).toBe(DONE)
  })
})

/** Streams `chunk 1`, then 500 ms later `chunk 2`, and completes. */
const chunksAgent = defineAgent({
  card: { name: 'Chunks', description: 'Two chunks apart', version: '1.0.0', capabilities: { streaming: true } },
  async execute(_ctx, task) {
    const artifactId = task.artifact('chunk 1')
    await new Promise((resolve) => setTimeout(resolve, 500))
    task.artifact('chunk 2', { artifactId, append: true })
    task.complete()
  },
})

/**
 * An instance in this process on the store `url` names; with `writeDelayMs`, its store writes each event that long
 * after the runtime streamed it (in order), as a slow write would.
 */
async function inProcessInstance(url: string, options: { writeDelayMs?: number } = {}): Promise<A2AServer> {
  const shared = storeFromSetting(url)
  const server = await serveAgent(chunksAgent, {
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    store: options.writeDelayMs ? withSlowWrites(shared, options.writeDelayMs) : shared,
    shutdownTimeoutMs: 500,
  })
  cleanups.push(() => server.close())
  return server
}

/** `store`, each `append` made `ms` later, in order, with the task as it was when the runtime handed it over. */
function withSlowWrites(store: TaskStore, ms: number): TaskStore {
  let queue = Promise.resolve()
  const append = (task: Task, event: TaskEvent) => {
    const then = structuredClone(task)
    const written = queue.then(async () => {
      await new Promise((resolve) => setTimeout(resolve, ms))
      await store.append(then, event)
    })
    queue = written.catch(() => {})
    return written
  }
  return new Proxy(store, {
    get(target, key) {
      if (key === 'append') return append
      const value = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

interface Acknowledged {
  id: string
  state: string
  on: AgentInstance
}

/**
 * Reads every acknowledged task back (through `readerOf`) until each has ended, or `timeoutMs` passes: those that
 * have not (with what was read last), and those that were answered in a final state and now say another.
 */
async function readBackSettled(
  acknowledged: Acknowledged[],
  readerOf: (ack: Acknowledged) => AgentInstance,
  { timeoutMs }: { timeoutMs: number },
): Promise<{ unsettled: string[]; changed: string[]; ended: Record<string, number> }> {
  const waiting = new Map(acknowledged.map((ack) => [ack.id, ack]))
  const lastRead = new Map<string, string>()
  const changed: string[] = []
  const ended: Record<string, number> = {}
  const deadline = Date.now() + timeoutMs
  while (waiting.size > 0 && Date.now() < deadline) {
    for (const ack of [...waiting.values()]) {
      const read = await readerOf(ack).call('GetTask', { id: ack.id })
      const state: string | undefined = read.body?.result?.status.state
      if (state === undefined || !TERMINAL.has(state)) {
        lastRead.set(ack.id, `${read.status} ${state ?? JSON.stringify(read.body).slice(0, 300)}`)
        continue
      }
      waiting.delete(ack.id)
      ended[state] = (ended[state] ?? 0) + 1
      if (TERMINAL.has(ack.state) && state !== ack.state) changed.push(`${ack.id}: answered ${ack.state}, now ${state}`)
    }
    if (waiting.size > 0) await new Promise((resolve) => setTimeout(resolve, 250))
  }
  const unsettled = [...waiting.values()].map((ack) => `${ack.id}: answered ${ack.state}, read ${lastRead.get(ack.id)}`)
  return { unsettled, changed, ended }
}

/** A refusal while the database is down, as a client should get it: 503, one line naming the store, no stack. */
function isClearRefusal(answer: Answer, names: RegExp): boolean {
  const text: unknown = answer.body?.error?.message
  return answer.status === 503 && typeof text === 'string' && names.test(text) && !/\n\s+at /.test(text)
}
