import { createServer, connect as netConnect, type Server, type Socket } from 'node:net'
import { type A2AAppOptions, type A2AServer, type Agent, serveAgent } from 'a2a-runtime'
import { createPostgresStore, type PostgresStoreOptions } from 'a2a-runtime/postgres-store'
import pg from 'pg'
import { afterEach, expect, inject, it } from 'vitest'
import { rpc } from '../_rpc.ts'
import { agent, deferred } from './_agents.ts'
import { captureLogger } from './_logger.ts'
import { eventReader, readEvents } from './_sse.ts'

// Two store objects on one schema are two instances of one agent, as two processes would be: each its own pool,
// listening connection, leases and instance id.

const V1 = { 'content-type': 'application/json', 'A2A-Version': '1.0' }
/** A lease that runs out fast: for the tests of what happens when one does. */
const LEASE_MS = 400
/** The lease of the other tests: longer than a stall of this process or of PostgreSQL on a loaded machine. */
const STALL_PROOF_LEASE_MS = 10_000
const LOST_REASON = 'The instance running the task stopped before it finished'

const url = inject('postgresUrl')
const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const freshSchema = () => `cluster_${Math.random().toString(36).slice(2, 10)}`

/** One instance of an agent, its tasks in the run's PostgreSQL under `schema`. */
async function instance(
  served: Agent,
  schema: string,
  tuning: Partial<PostgresStoreOptions> = {},
  options: A2AAppOptions = {},
): Promise<A2AServer> {
  const store = createPostgresStore({ url, schema, leaseMs: STALL_PROOF_LEASE_MS, ...tuning })
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

/** Two instances of a stepped agent sharing a fresh schema, and a task that A runs and has started. */
async function runningOnA() {
  const schema = freshSchema()
  const stepped = steppedAgent()
  const [a, b] = [await instance(stepped.agent, schema), await instance(stepped.agent, schema)]
  const sent = (await call(a, 'message/send', { ...platformMessage('go'), configuration: { blocking: false } })).body
    .result
  await stepped.started
  return { a, b, stepped, sent, schema }
}

/**
 * A TCP proxy to PostgreSQL whose connections `cut()` ends, refusing new ones: an instance that lost its network.
 * With `holdListen`, what a connection sends from its first LISTEN on waits until `release()`: the instance behind
 * it runs tasks while its listening connection is not listening yet, as on a loaded machine where it comes up late.
 */
async function cuttableProxy(port: number, holdListen = false) {
  const sockets = new Set<Socket>()
  const held: Array<() => void> = []
  let holding = holdListen
  let cut = false
  const server: Server = createServer((client) => {
    if (cut) return void client.destroy()
    const upstream = netConnect(port, '127.0.0.1')
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => sockets.delete(socket))
    }
    upstream.pipe(client)
    let stuck: Buffer[] | undefined
    client.on('data', (chunk: Buffer) => {
      if (stuck) return void stuck.push(chunk)
      if (holding && chunk.includes('LISTEN "')) {
        stuck = [chunk]
        held.push(() => {
          for (const part of stuck ?? []) upstream.write(part)
          stuck = undefined
        })
        return
      }
      upstream.write(chunk)
    })
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const proxied = new URL(url)
  proxied.port = String((server.address() as { port: number }).port)
  return {
    url: proxied.href,
    /** Connections whose LISTEN waits here. */
    held: () => held.length,
    release() {
      holding = false
      for (const flush of held.splice(0)) flush()
    },
    cut() {
      cut = true
      for (const socket of sockets) socket.destroy()
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

it('serves on B the task sent to A: get, a live stream of its events in order (followed through NOTIFY), and completion', async () => {
  const { b, stepped, sent } = await runningOnA()
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

it('follows on B an event too large for a notification (read from the events table instead), in order', async () => {
  const schema = freshSchema()
  const gate = deferred()
  const started = deferred<string>()
  const large = 'x'.repeat(20_000)
  const big = agent(async (ctx, task) => {
    task.working()
    started.resolve(ctx.taskId)
    await gate.promise
    task.artifact('small before')
    task.artifact(large)
    task.artifact('small after')
    task.complete()
  })
  const [a, b] = [await instance(big, schema), await instance(big, schema)]
  await call(a, 'message/send', { ...platformMessage('go'), configuration: { blocking: false } })
  const taskId = await started.promise
  // A's working status reaches the table a moment later: subscribed after it, B's stream starts past it.
  await expect.poll(async () => (await call(b, 'tasks/get', { id: taskId })).body.result.status.state).toBe('working')
  const reader = eventReader(
    await fetch(b.url, {
      method: 'POST',
      headers: V1,
      body: JSON.stringify({ jsonrpc: '2.0', id: 's', method: 'SubscribeToTask', params: { id: taskId } }),
    }),
  )
  expect((await reader.next()).result.task.id).toBe(taskId)
  gate.resolve()
  const texts: string[] = []
  for (let event = await reader.next(); event; event = await reader.next()) {
    const { artifactUpdate, statusUpdate } = event.result
    texts.push(artifactUpdate ? artifactUpdate.artifact.parts[0].text.slice(0, 12) : statusUpdate.status.state)
  }
  expect(texts).toEqual(['small before', 'x'.repeat(12), 'small after', 'TASK_STATE_COMPLETED'])
})

it('forwards a cancel sent to B to the agent running on A (the lease holder): its signal fires, both see it canceled', async () => {
  const { a, b, stepped, sent } = await runningOnA()
  const canceled = (await call(b, 'tasks/cancel', { id: sent.id })).body
  expect(canceled, 'what B answered the cancel').toMatchObject({
    result: { id: sent.id, status: { state: 'canceled' } },
  })
  await stepped.aborted
  for (const server of [a, b])
    expect((await call(server, 'tasks/get', { id: sent.id })).body.result.status.state).toBe('canceled')
  // A finished task is not cancelable, whichever instance is asked.
  expect((await call(b, 'tasks/cancel', { id: sent.id })).body.error.code).toBe(-32002)
})

it('forwards a cancel to an instance whose listening connection comes up late: asked again until it hears it', async () => {
  const schema = freshSchema()
  const proxy = await cuttableProxy(Number(new URL(url).port), true)
  cleanups.push(() => proxy.close())
  const stepped = steppedAgent()
  const a = await instance(stepped.agent, schema, { url: proxy.url })
  const b = await instance(stepped.agent, schema)
  const sent = (await call(a, 'message/send', { ...platformMessage('go'), configuration: { blocking: false } })).body
    .result
  await stepped.started
  await expect.poll(() => proxy.held()).toBe(1)
  const canceling = call(b, 'tasks/cancel', { id: sent.id })
  // B's first requests reach nobody: A does not listen yet.
  await new Promise((resolve) => setTimeout(resolve, 500))
  proxy.release()
  expect((await canceling).body).toMatchObject({ result: { id: sent.id, status: { state: 'canceled' } } })
  await stepped.aborted
})

it('resumes on B, with Last-Event-ID, a stream that broke on A: the rest of the events, none twice', async () => {
  const schema = freshSchema()
  const trickle = agent(async (_ctx, task) => {
    for (let i = 0; i < 8; i++) {
      task.artifact(`part ${i}`)
      await new Promise((resolve) => setTimeout(resolve, 15))
    }
    task.complete()
  })
  const [a, b] = [await instance(trickle, schema), await instance(trickle, schema)]
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

it('keeps a conversation whose follow-ups go to B and then A: every message once, in order, read from either', async () => {
  const schema = freshSchema()
  const asking = agent((ctx, task) => {
    if (ctx.history.length < 5) return task.inputRequired(`question ${ctx.history.length}`)
    task.complete('done')
  })
  const [a, b] = [await instance(asking, schema), await instance(asking, schema)]
  const first = (await call(a, 'message/send', platformMessage('one'))).body.result
  expect(first.status.state).toBe('input-required')
  const followUp = async (server: A2AServer, text: string) =>
    (await call(server, 'message/send', { message: { ...platformMessage(text).message, taskId: first.id } })).body
      .result.status.state
  expect(await followUp(b, 'two')).toBe('input-required')
  expect(await followUp(a, 'three')).toBe('completed')
  for (const server of [a, b]) {
    const task = (await call(server, 'tasks/get', { id: first.id })).body.result
    expect(task.history.map((m: any) => m.parts[0].text)).toEqual(['one', 'question 1', 'two', 'question 3', 'three'])
  }
})

it('fails, on B, a task whose instance A lost the database mid-task (as a crash: its lease never given back), once its lease has run out, with the reason', {
  timeout: 30_000,
}, async () => {
  const schema = freshSchema()
  const proxy = await cuttableProxy(Number(new URL(url).port))
  cleanups.push(() => proxy.close())
  const stepped = steppedAgent()
  const b = await instance(stepped.agent, schema, { leaseMs: LEASE_MS })
  const a = await instance(stepped.agent, schema, { url: proxy.url, leaseMs: LEASE_MS, timeoutMs: 1000 })
  const sent = (await call(a, 'message/send', { ...platformMessage('go'), configuration: { blocking: false } })).body
    .result
  await stepped.started
  await expect.poll(async () => (await call(b, 'tasks/get', { id: sent.id })).body.result.status.state).toBe('working')
  const cutAt = Date.now()
  proxy.cut()
  await expect
    .poll(async () => (await call(b, 'tasks/get', { id: sent.id })).body.result.status, {
      timeout: 20 * LEASE_MS,
      interval: 100,
    })
    .toMatchObject({ state: 'failed', message: { parts: [{ kind: 'text', text: LOST_REASON }] } })
  // Not before its lease ran out.
  expect(Date.now() - cutAt).toBeGreaterThanOrEqual(LEASE_MS / 2)
  // A, cut off, stopped its run too (its lease could not be renewed).
  await stepped.aborted
})

it('stops the run of an instance whose lease was taken from it (its renewal fails) and fails the task', {
  timeout: 15_000,
}, async () => {
  const schema = freshSchema()
  const stepped = steppedAgent()
  const a = await instance(stepped.agent, schema, { leaseMs: LEASE_MS })
  const sent = (await call(a, 'message/send', { ...platformMessage('go'), configuration: { blocking: false } })).body
    .result
  await stepped.started
  // As if A had stalled past its lease and another instance had taken it.
  const client = new pg.Client(url)
  await client.connect()
  cleanups.push(() => client.end())
  const taken = await client.query(
    `UPDATE "${schema}".a2a_tasks SET lease_holder = 'another', lease_until = now() + interval '1 hour' WHERE id = $1`,
    [sent.id],
  )
  expect(taken.rowCount).toBe(1)
  await stepped.aborted
  await expect
    .poll(async () => (await call(a, 'tasks/get', { id: sent.id })).body.result.status.state, { timeout: 10_000 })
    .toBe('failed')
})

it('answers a cancel forwarded for a task too large for a notification with the task canceled, its queued writes landed', async () => {
  const schema = freshSchema()
  const started = deferred<string>()
  const streaming = agent(
    async (ctx, task) => {
      task.artifact('x'.repeat(8000), { artifactId: 'large' })
      task.working('streaming')
      started.resolve(ctx.taskId)
      // Chunks faster than they are written: A's writes of this task stay queued, the cancel's status behind them.
      const until = Date.now() + 30_000
      for (let i = 0; Date.now() < until && !ctx.signal.aborted; i++) {
        task.artifact(`${i},`, { artifactId: 'chunks', append: i > 0 })
        await new Promise((resolve) => setImmediate(resolve))
      }
    },
    { cancel: (_ctx, task) => task.cancel('stopped on request') },
  )
  const [a, b] = [await instance(streaming, schema), await instance(streaming, schema)]
  await call(a, 'message/send', { ...platformMessage('go'), configuration: { blocking: false } })
  const taskId = await started.promise
  await expect.poll(async () => (await call(b, 'tasks/get', { id: taskId })).body.result?.status.state).toBe('working')
  const canceled = (await call(b, 'tasks/cancel', { id: taskId })).body
  expect(canceled.result?.status.state, `what B answered the cancel: ${JSON.stringify(canceled).slice(0, 300)}`).toBe(
    'canceled',
  )
})
