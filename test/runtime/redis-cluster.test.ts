import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type A2AAppOptions, type A2AServer, type Agent, serveAgent } from 'a2a-runtime'
import { createRedisStore, type RedisStoreOptions } from 'a2a-runtime/redis-store'
import { Cluster, Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { rpc } from '../_rpc.ts'
import { agent, deferred, echoAgent } from './_agents.ts'
import { startServeFixture } from './_fixture-process.ts'
import { captureLogger } from './_logger.ts'
import { type RedisServer, startRedis } from './_redis.ts'
import { type RedisCluster, startRedisCluster } from './_redis-cluster.ts'
import { eventReader, readEvents } from './_sse.ts'
import { startReceiver } from './_webhook.ts'

const V1 = { 'content-type': 'application/json', 'A2A-Version': '1.0' }
/** A lease that runs out fast: for the tests of what happens when one does. */
const LEASE_MS = 400
/**
 * The lease of the other tests: longer than a stall of this process or of Redis on a loaded machine. A 400 ms
 * lease ran out in one: the task running on A was failed as lost, and a cancel then answered that it had ended.
 */
const STALL_PROOF_LEASE_MS = 10_000

let redis: RedisServer
let redisDir: string
let cluster: RedisCluster | undefined
/** Where the instances of the running describe keep their tasks (the single Redis, or the cluster), and how. */
type Shared = Pick<RedisStoreOptions, 'url' | 'cluster' | 'leaseMs' | 'timeoutMs'>
let shared: Shared = { url: '', cluster: false, leaseMs: STALL_PROOF_LEASE_MS }
const cleanups: Array<() => unknown> = []

beforeAll(async () => {
  redisDir = mkdtempSync(join(tmpdir(), 'a2a-redis-'))
  redis = await startRedis({ durableDir: redisDir })
})
afterAll(async () => {
  await redis?.stop()
  await cluster?.stop()
  rmSync(redisDir, { recursive: true, force: true })
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** One instance of an agent, its tasks in the shared Redis under `prefix`. */
async function instance(
  served: Agent,
  prefix: string,
  options: A2AAppOptions = {},
  tuning: Partial<Shared> = {},
): Promise<A2AServer> {
  const store = createRedisStore({ ...shared, prefix, ...tuning })
  const server = await serveAgent(served, {
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
    logger: captureLogger(),
    store,
    shutdownTimeoutMs: 500,
    ...options,
  })
  cleanups.push(() => server.close())
  return server
}

const freshPrefix = () => `cluster-${Math.random().toString(36).slice(2, 10)}:`
const platformMessage = (text: string) => ({
  message: { role: 'user', messageId: `m-${Math.random()}`, parts: [{ kind: 'text', text }] },
})

async function call(server: { url: string }, method: string, params: unknown, headers: Record<string, string> = {}) {
  const { status, body } = await rpc(server.url, method, params, { headers })
  return { status, body }
}

/** Works in steps the test releases; fires `aborted` when its signal does. */
function steppedAgent() {
  const started = deferred<string>()
  const step = deferred()
  const aborted = deferred()
  const definition = agent(
    async (ctx, task) => {
      ctx.signal.addEventListener('abort', () => aborted.resolve(), { once: true })
      task.working('step one')
      started.resolve(ctx.taskId)
      await Promise.race([step.promise, aborted.promise])
      if (ctx.signal.aborted) return
      task.artifact('step two')
      task.complete()
    },
    { cancel: (_ctx, task) => task.cancel('stopped on request') },
  )
  return { agent: definition, started: started.promise, release: step.resolve, aborted: aborted.promise }
}

/** Two instances of a stepped agent sharing a fresh prefix, and a task that A runs and has started. */
async function runningOnA() {
  const prefix = freshPrefix()
  const stepped = steppedAgent()
  const [a, b] = [await instance(stepped.agent, prefix), await instance(stepped.agent, prefix)]
  const sent = (await call(a, 'message/send', { ...platformMessage('go'), configuration: { blocking: false } })).body
    .result
  await stepped.started
  return { a, b, stepped, sent, prefix }
}

/** Blocks this process's thread for `ms`: no timer, socket or promise of its own moves meanwhile. */
function stallThisProcess(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/** What two instances sharing a store do, whichever Redis holds it. */
function crossInstanceBehaviour(): void {
  it('keeps a conversation whose turns go to A, B, A and B whole: every message once, in order, read from either', async () => {
    const prefix = freshPrefix()
    const asking = agent((ctx, task) => {
      if (ctx.text === 'done') {
        task.artifact(`Heard ${ctx.history.length} messages`, { artifactId: 'heard' })
        task.complete()
        return
      }
      // A large task next to what each turn adds: the turns are written as entries, not whole.
      if (ctx.text === 'one') task.artifact('x'.repeat(100_000), { artifactId: 'large' })
      task.inputRequired(`And after ${ctx.text}?`)
    })
    const [a, b] = [await instance(asking, prefix), await instance(asking, prefix)]
    const first = (await call(a, 'message/send', platformMessage('one'))).body.result
    expect(first.status.state).toBe('input-required')
    const turns: Array<[A2AServer, string]> = [
      [b, 'two'],
      [a, 'three'],
      [b, 'four'],
      [a, 'done'],
    ]
    for (const [server, text] of turns) {
      const reply = (
        await call(server, 'message/send', { message: { ...platformMessage(text).message, taskId: first.id } })
      ).body
      expect(reply.error).toBeUndefined()
    }
    const expected = [
      'one',
      'And after one?',
      'two',
      'And after two?',
      'three',
      'And after three?',
      'four',
      'And after four?',
      'done',
    ]
    for (const server of [a, b]) {
      const task = (await call(server, 'tasks/get', { id: first.id })).body.result
      expect(task.status.state).toBe('completed')
      expect(task.history.map((message: any) => message.parts[0].text)).toEqual(expected)
      expect(task.artifacts.map((artifact: any) => artifact.artifactId)).toEqual(['large', 'heard'])
      expect(task.artifacts[1].parts[0].text).toBe('Heard 9 messages')
    }
  })

  it('delivers push notifications once, from the instance that runs the task, to a webhook configured on the other', async () => {
    const prefix = freshPrefix()
    const gate = deferred()
    const started = deferred<string>()
    const pushing = agent(
      async (ctx, task) => {
        task.working('step one')
        started.resolve(ctx.taskId)
        await gate.promise
        task.artifact('done')
        task.complete()
      },
      { card: { capabilities: { pushNotifications: true } } },
    )
    const push = { push: { allow: ['127.0.0.1'], allowHttp: true } }
    const [a, b] = [await instance(pushing, prefix, push), await instance(pushing, prefix, push)]
    const receiver = await startReceiver()
    await call(a, 'message/send', { ...platformMessage('go'), configuration: { blocking: false } })
    const taskId = await started.promise
    const created = await call(b, 'tasks/pushNotificationConfig/set', {
      taskId,
      pushNotificationConfig: { url: receiver.url },
    })
    expect(created.body.result.pushNotificationConfig).toEqual({ id: taskId, url: receiver.url })
    expect((await call(a, 'tasks/pushNotificationConfig/list', { id: taskId })).body.result).toEqual([
      created.body.result,
    ])
    gate.resolve()
    await expect.poll(() => receiver.delivered.at(-1)?.body.status.state).toBe('completed')
    // Closing waits for every queued notification of both instances: a second one would have come by then.
    await Promise.all([a.close(), b.close()])
    expect(receiver.delivered.filter((delivery) => delivery.body.status.state === 'completed')).toHaveLength(1)
  })

  it('serves on B the task sent to A: get, a live stream of its events in order, and completion', async () => {
    const { b, stepped, sent } = await runningOnA()

    // A's agent has moved; its event reaches Redis a moment later, and B reads it from there.
    await expect
      .poll(async () => (await call(b, 'tasks/get', { id: sent.id })).body.result.status)
      .toMatchObject({ state: 'working', message: { parts: [{ text: 'step one' }] } })

    const stream = await fetch(b.url, {
      method: 'POST',
      headers: V1,
      body: JSON.stringify({ jsonrpc: '2.0', id: 's', method: 'SubscribeToTask', params: { id: sent.id } }),
    })
    const reader = eventReader(stream)
    expect((await reader.next()).result.task.id).toBe(sent.id)
    stepped.release()
    const rest: any[] = []
    for (let event = await reader.next(); event; event = await reader.next()) rest.push(event.result)
    expect(rest.map((r) => Object.keys(r)[0])).toEqual(['artifactUpdate', 'statusUpdate'])
    expect(rest[1].statusUpdate.status.state).toBe('TASK_STATE_COMPLETED')
    expect((await call(b, 'tasks/get', { id: sent.id })).body.result.status.state).toBe('completed')
  })

  it('follows a task through its turns that wait for input, whichever instance each follow-up reaches: subscribers on A (where it began) and on B get every event once, in order, until it ends', {
    timeout: 30_000,
  }, async () => {
    const prefix = freshPrefix()
    const started = deferred<string>()
    const firstTurn = deferred()
    const turns = agent(async (ctx, task) => {
      if (ctx.history.length === 1) {
        task.working('looking')
        started.resolve(ctx.taskId)
        await firstTurn.promise
        return task.inputRequired('Which city?')
      }
      if (ctx.text === 'ask again') return task.inputRequired('Which day?')
      task.artifact(`Weather in ${ctx.text}`)
      task.complete()
    })
    const [a, b] = [await instance(turns, prefix), await instance(turns, prefix)]
    await call(a, 'message/send', { ...platformMessage('go'), configuration: { blocking: false } })
    const taskId = await started.promise
    // On A while its first turn runs there; on B, which follows it through Redis.
    const subscribers = []
    for (const server of [a, b]) {
      const reader = eventReader(
        await fetch(server.url, {
          method: 'POST',
          headers: V1,
          body: JSON.stringify({ jsonrpc: '2.0', id: 's', method: 'SubscribeToTask', params: { id: taskId } }),
        }),
      )
      expect((await reader.next()).result.task.id).toBe(taskId)
      subscribers.push({ reader, opened: reader.lastId! })
    }
    firstTurn.resolve()
    await expect
      .poll(async () => (await call(b, 'tasks/get', { id: taskId })).body.result.status.state)
      .toBe('input-required')
    const followUp = async (server: A2AServer, text: string) =>
      (await call(server, 'message/send', { message: { ...platformMessage(text).message, taskId } })).body.result.status
        .state
    expect(await followUp(b, 'ask again')).toBe('input-required')
    expect(await followUp(a, 'Oslo')).toBe('completed')
    for (const { reader, opened } of subscribers) {
      const seen: Array<[number, string]> = []
      for (let event = await reader.next(); event; event = await reader.next()) {
        const { statusUpdate, artifactUpdate } = event.result
        seen.push([
          reader.lastId!,
          statusUpdate ? statusUpdate.status.state : `artifact ${artifactUpdate.artifact.parts[0].text}`,
        ])
      }
      expect(seen.map(([id]) => id)).toEqual(Array.from({ length: 8 - opened }, (_, i) => opened + 1 + i))
      expect(seen.filter(([id]) => id >= 3).map(([, what]) => what)).toEqual([
        'TASK_STATE_INPUT_REQUIRED',
        'TASK_STATE_WORKING',
        'TASK_STATE_INPUT_REQUIRED',
        'TASK_STATE_WORKING',
        'artifact Weather in Oslo',
        'TASK_STATE_COMPLETED',
      ])
    }
  })

  it('cancel on B reaches the agent running on A, even after the process stalled past a short lease: its signal fires and both instances see the task canceled', async () => {
    const { a, b, stepped, sent } = await runningOnA()
    // As on a loaded machine: nothing in this process (A, B, their leases' renewals) runs for a while.
    stallThisProcess(3 * LEASE_MS)
    const canceled = (await call(b, 'tasks/cancel', { id: sent.id })).body
    const expected = { result: { id: sent.id, status: { state: 'canceled' } } }
    expect(canceled, 'what B answered the cancel').toMatchObject(expected)
    await stepped.aborted
    for (const server of [a, b])
      expect((await call(server, 'tasks/get', { id: sent.id })).body.result.status.state).toBe('canceled')
    // A finished task is not cancelable, whichever instance is asked.
    expect((await call(b, 'tasks/cancel', { id: sent.id })).body.error.code).toBe(-32002)
  })

  it("waits, on B, with a follow-up sent while A's agent is still returning from the turn that asked for it, then runs it", async () => {
    const prefix = freshPrefix()
    const lingering = deferred()
    const asking = agent(async (ctx, task) => {
      if (ctx.history.length === 1) {
        task.inputRequired('Which one?')
        // The agent goes on after asking (cleaning up, logging): A holds the task until it returns.
        await lingering.promise
        return
      }
      task.artifact(`Took ${ctx.text}`)
      task.complete()
    })
    const [a, b] = [await instance(asking, prefix), await instance(asking, prefix)]
    const asked = (await call(a, 'message/send', platformMessage('start'))).body.result
    expect(asked.status.state).toBe('input-required')

    const followUp = call(b, 'message/send', {
      message: { ...platformMessage('the blue one').message, taskId: asked.id },
    })
    let answered = false
    void followUp.then(() => (answered = true))
    // Not refused while A's agent lingers: B waits for A to let go of the task.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(answered).toBe(false)
    lingering.resolve()
    const done = (await followUp).body
    expect(done.error).toBeUndefined()
    expect(done.result.status.state).toBe('completed')
    expect(done.result.artifacts[0].parts[0].text).toBe('Took the blue one')
  })

  it('resumes on B, with Last-Event-ID, a stream that broke on A: the rest of the events, none twice', async () => {
    const prefix = freshPrefix()
    const trickle = agent(async (_ctx, task) => {
      for (let i = 0; i < 8; i++) {
        task.artifact(`part ${i}`)
        await new Promise((resolve) => setTimeout(resolve, 15))
      }
      task.complete()
    })
    const [a, b] = [await instance(trickle, prefix), await instance(trickle, prefix)]
    const first = await fetch(a.url, {
      method: 'POST',
      headers: V1,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendStreamingMessage',
        params: { message: { role: 'ROLE_USER', messageId: 'm', parts: [{ text: 'go' }] } },
      }),
    })
    const reader = eventReader(first)
    const taskId = (await reader.next()).result.task.id
    for (let i = 0; i < 3; i++) await reader.next()
    const lastId = reader.lastId!
    await reader.cancel()
    const resumed = await fetch(b.url, {
      method: 'POST',
      headers: { ...V1, 'Last-Event-ID': String(lastId) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'SubscribeToTask', params: { id: taskId } }),
    })
    const { ids } = await readEvents(resumed, 'numbered')
    expect([...Array.from({ length: lastId }, (_, i) => i + 1), ...ids]).toEqual(
      Array.from({ length: 10 }, (_, i) => i + 1),
    )
  })

  it('loses none of 1,000 tasks spread over both instances: each is completed and readable from either', {
    timeout: 60_000,
  }, async () => {
    const prefix = freshPrefix()
    const [a, b] = [await instance(echoAgent, prefix), await instance(echoAgent, prefix)]
    const ids: string[] = []
    let next = 0
    const worker = async () => {
      while (next < 1000) {
        const n = next++
        const reply = await call(n % 2 ? a : b, 'message/send', platformMessage(`task ${n}`))
        expect(reply.body.result?.status.state).toBe('completed')
        ids.push(reply.body.result.id)
      }
    }
    await Promise.all(Array.from({ length: 16 }, worker))
    expect(new Set(ids).size).toBe(1000)
    for (const [i, id] of ids.entries()) {
      const task = (await call(i % 2 ? b : a, 'tasks/get', { id })).body.result
      expect(task?.status.state).toBe('completed')
    }
    const listed = await call(b, 'ListTasks', { pageSize: 1 }, V1)
    expect(listed.body.result.totalSize).toBe(1000)
  })

  it("stops the run of an instance that lost its lease (the agent's signal fires) and fails the task, with the reason", {
    timeout: 15_000,
  }, async () => {
    const prefix = freshPrefix()
    const stepped = steppedAgent()
    const a = await instance(stepped.agent, prefix, {}, { leaseMs: LEASE_MS })
    const sent = (await call(a, 'message/send', { ...platformMessage('go'), configuration: { blocking: false } })).body
      .result
    await stepped.started
    // As if A had stalled past its lease: the lease is gone from Redis.
    const raw = shared.cluster ? new Cluster([cluster!.nodes[0]!]) : new Redis(shared.url)
    cleanups.push(() => raw.disconnect())
    expect(await raw.del(`${prefix}{${sent.id}}:lease`)).toBe(1)
    await stepped.aborted
    await expect
      .poll(async () => (await call(a, 'tasks/get', { id: sent.id })).body.result.status, {
        timeout: 10 * LEASE_MS,
        interval: 100,
      })
      .toMatchObject({
        state: 'failed',
        message: {
          parts: [{ kind: 'text', text: 'The instance running the task stalled past its lease; the task is failed' }],
        },
      })
  })

  it('fails, on B, a task whose instance A was killed mid-task, once its lease has run out', {
    timeout: 30_000,
  }, async () => {
    const prefix = freshPrefix()
    // B looks for tasks whose instance died once a lease.
    const b = await instance(echoAgent, prefix, {}, { leaseMs: LEASE_MS })
    const { child, url: aUrl } = await startServeFixture({
      A2A_STORE: `${shared.url}?prefix=${encodeURIComponent(prefix)}&leaseMs=${LEASE_MS}&cluster=${shared.cluster}`,
    })
    cleanups.push(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'))
    const sent = (
      await call({ url: aUrl }, 'message/send', { ...platformMessage('never'), configuration: { blocking: false } })
    ).body.result
    expect((await call(b, 'tasks/get', { id: sent.id })).body.result.status.state).toBe('working')

    child.kill('SIGKILL')
    await expect
      .poll(async () => (await call(b, 'tasks/get', { id: sent.id })).body.result.status, {
        timeout: 10 * LEASE_MS,
        interval: 100,
      })
      .toMatchObject({
        state: 'failed',
        message: { parts: [{ kind: 'text', text: 'The instance running the task stopped before it finished' }] },
      })
  })
}

describe('two instances sharing one Redis (A2A_STORE=redis://…)', () => {
  beforeAll(() => {
    shared = { url: redis.url, cluster: false, leaseMs: STALL_PROOF_LEASE_MS }
  })
  crossInstanceBehaviour()
})

describe('two instances sharing a Redis Cluster of 3 masters (A2A_STORE=redis://…?cluster=true)', () => {
  beforeAll(async () => {
    cluster = await startRedisCluster()
    shared = { url: cluster.url, cluster: true, leaseMs: STALL_PROOF_LEASE_MS }
  }, 120_000)
  crossInstanceBehaviour()
})

describe('one Redis going down under two instances', () => {
  beforeAll(() => {
    // Answers within a second while Redis is down; a task whose instance lost Redis is failed within a lease.
    shared = { url: redis.url, cluster: false, leaseMs: LEASE_MS, timeoutMs: 1000 }
  })
  it('answers a clear JSON-RPC error at once while Redis is down, and serves again, with nothing acknowledged lost, once it is back', {
    timeout: 30_000,
  }, async () => {
    const prefix = freshPrefix()
    const a = await instance(echoAgent, prefix)
    const before = (await call(a, 'message/send', platformMessage('before'))).body.result
    expect(before.status.state).toBe('completed')

    await redis.kill()
    // At once: within the store's timeout (1 s), with slack for a loaded machine, rather than hanging.
    const started = Date.now()
    const down = await call(a, 'message/send', platformMessage('while down'))
    expect(Date.now() - started).toBeLessThan(8000)
    expect(down.status).toBe(503)
    expect(down.body.error.message).toMatch(/task store \(Redis\) is unreachable/)
    const getDown = await call(a, 'tasks/get', { id: before.id })
    expect(getDown.body.error.message).toMatch(/unreachable/)

    await redis.restart()
    await expect
      .poll(async () => (await call(a, 'tasks/get', { id: before.id })).body.result?.status.state, { timeout: 10_000 })
      .toBe('completed')
    expect((await call(a, 'message/send', platformMessage('after'))).body.result.status.state).toBe('completed')
  })

  it('leaves no gap in the log of a task whose event could not be written while Redis was down: the task completes whole or fails with the reason', {
    timeout: 60_000,
  }, async () => {
    const prefix = freshPrefix()
    const progressed = deferred()
    const trickle = agent(async (_ctx, task) => {
      for (let i = 0; i < 60; i++) {
        task.artifact(`part ${i}`)
        if (i === 10) progressed.resolve()
        await new Promise((resolve) => setTimeout(resolve, 20))
        if (_ctx.signal.aborted) return
      }
      task.complete()
    })
    const a = await instance(trickle, prefix)
    const sent = (await call(a, 'message/send', { ...platformMessage('go'), configuration: { blocking: false } })).body
      .result
    await progressed.promise
    await redis.kill()
    await new Promise((resolve) => setTimeout(resolve, 300))
    await redis.restart()
    // Settled in Redis, whichever way (the instance's own failure, or the lost-task check once its lease ran out).
    const reader = createRedisStore({ url: redis.url, prefix, leaseMs: LEASE_MS, timeoutMs: 1000 })
    cleanups.push(() => reader.close())
    await expect
      .poll(async () => (await reader.get(sent.id).catch(() => undefined))?.status.state, {
        timeout: 30_000,
        interval: 100,
      })
      .toMatch(/^(completed|failed)$/)
    // Two reads, and no race between them: a status is written with its event, in one script, and nothing joins the
    // log of a task that has ended (redis-settle-order.test.ts).
    const task = (await reader.get(sent.id))!
    const kept = (await reader.events(sent.id))!
    const last = kept.at(-1)!
    expect(last).toMatchObject({ kind: 'status-update', final: true, status: { state: task.status.state } })
    // Every event a resume asks for is there, in order, or the resume is told they are not (undefined):
    // never a list with a hole in it.
    const served: number[] = []
    for (let after = 0; after < last.seq; after++) {
      const events = await reader.events(sent.id, after)
      if (!events) continue
      served.push(after)
      expect(events.map((event) => event.seq)).toEqual(
        Array.from({ length: last.seq - after }, (_, i) => after + i + 1),
      )
    }
    console.info(
      `a task whose Redis went down mid-run: ${task.status.state} at event ${last.seq}; resumable after ${served[0]} and on`,
    )
    if (task.status.state === 'completed') expect(task.artifacts).toHaveLength(60)
    else
      expect(task.status.message?.parts[0]).toMatchObject({
        text: expect.stringMatching(/could not save an event|stopped before it finished|stalled past its lease/),
      })
  })

  it('keeps every acknowledged task when Redis is killed in the middle of a flood, and no request hangs', {
    timeout: 30_000,
  }, async () => {
    const prefix = freshPrefix()
    const [a, b] = [await instance(echoAgent, prefix), await instance(echoAgent, prefix)]
    const acknowledged: string[] = []
    // Anything but "completed" or a 503, and any request slower than the store's timeout (1 s) plus a wide
    // margin for a loaded machine, is collected and checked at the end.
    const wrong: string[] = []
    let refused = 0
    let stop = false
    const worker = async (n: number) => {
      while (!stop) {
        const started = Date.now()
        const reply = await call(n % 2 ? a : b, 'message/send', platformMessage(`flood ${n}`))
        if (Date.now() - started > 8000) wrong.push(`took ${Date.now() - started} ms`)
        if (reply.body.result?.status.state === 'completed') acknowledged.push(reply.body.result.id)
        else if (reply.status === 503) refused++
        else wrong.push(`${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`)
      }
    }
    const workers = Array.from({ length: 8 }, (_, n) => worker(n))
    await expect.poll(() => acknowledged.length, { timeout: 10_000 }).toBeGreaterThan(100)
    await redis.kill()
    await expect.poll(() => refused, { timeout: 5000 }).toBeGreaterThan(0)
    await redis.restart()
    const countAtRestart = acknowledged.length
    await expect.poll(() => acknowledged.length, { timeout: 10_000 }).toBeGreaterThan(countAtRestart + 50)
    stop = true
    await Promise.all(workers)
    expect(wrong.slice(0, 3)).toEqual([])
    // Each instance reconnects on its own schedule (backing off up to a second): wait until A is back too.
    await expect
      .poll(async () => (await call(a, 'tasks/get', { id: acknowledged[0] })).status, { timeout: 10_000 })
      .toBe(200)
    const lost: string[] = []
    for (const id of acknowledged) {
      const reply = await call(a, 'tasks/get', { id })
      if (reply.body.result?.status.state !== 'completed')
        lost.push(`${id}: ${reply.status} ${JSON.stringify(reply.body.result?.status ?? reply.body).slice(0, 600)}`)
    }
    expect(
      lost.slice(0, 3),
      `${lost.length} of ${acknowledged.length} acknowledged tasks are not completed after the restart`,
    ).toEqual([])
  })
})
