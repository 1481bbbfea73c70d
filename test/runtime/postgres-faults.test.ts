import { randomUUID } from 'node:crypto'
import { createServer, connect as netConnect, type Socket } from 'node:net'
import { type A2AServer, serveAgent } from 'a2a-runtime'
import { createPostgresStore, type PostgresTaskStore } from 'a2a-runtime/postgres-store'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { ServerUnavailableError } from '../../runtime/src/errors.ts'
import { rpc } from '../_rpc.ts'
import { echoAgent } from './_agents.ts'
import { captureLogger } from './_logger.ts'
import { type PostgresServer, startPostgres } from './_postgres.ts'

// The faults of a database a store must answer clearly: each a 503 that says what happened, nothing acknowledged
// lost, nothing left waiting. A cluster of this file's own, as it is killed and restarted.

let server: PostgresServer
const cleanups: Array<() => unknown> = []
beforeAll(async () => {
  server = await startPostgres()
}, 60_000)
afterAll(async () => {
  await server?.stop()
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const freshSchema = () => `faults_${Math.random().toString(36).slice(2, 10)}`
const platformMessage = (text: string) => ({
  message: { role: 'user', messageId: `m-${Math.random()}`, parts: [{ kind: 'text', text }] },
})

function open(options: Partial<Parameters<typeof createPostgresStore>[0]> = {}): PostgresTaskStore {
  const store = createPostgresStore({ url: server.url, schema: freshSchema(), ...options })
  cleanups.push(() => store.close())
  return store
}

async function serve(store: PostgresTaskStore): Promise<A2AServer> {
  const served = await serveAgent(echoAgent, {
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
    logger: captureLogger(),
    store,
    shutdownTimeoutMs: 500,
  })
  cleanups.push(() => served.close())
  return served
}

it('answers a clear 503 at once while the server is down, and serves again once it is back, nothing acknowledged lost', {
  timeout: 60_000,
}, async () => {
  const store = open({ timeoutMs: 1000 })
  const agent = await serve(store)
  const acknowledged: string[] = []
  for (let i = 0; i < 5; i++) {
    const { body } = await rpc(agent.url, 'message/send', platformMessage(`before ${i}`))
    expect(body.result.status.state).toBe('completed')
    acknowledged.push(body.result.id)
  }
  await server.kill()
  const started = Date.now()
  const down = await rpc(agent.url, 'message/send', platformMessage('while down'))
  expect(down.status).toBe(503)
  expect(down.body.error.message).toMatch(
    /^The task store \(PostgreSQL\) (is unreachable|lost the connection|is restarting or shutting down)/,
  )
  expect(down.body.error.message).not.toMatch(/\n|\bat \w/)
  expect(Date.now() - started, 'a refused request fails at once, not after a timeout').toBeLessThan(5000)
  const read = await rpc(agent.url, 'tasks/get', { id: acknowledged[0] })
  expect(read.status).toBe(503)

  await server.restart()
  await expect
    .poll(async () => (await rpc(agent.url, 'message/send', platformMessage('after'))).body.result?.status.state, {
      timeout: 20_000,
      interval: 200,
    })
    .toBe('completed')
  for (const id of acknowledged)
    expect((await rpc(agent.url, 'tasks/get', { id })).body.result.status.state).toBe('completed')
})

it('answers a statement the server cancels at timeoutMs (statement_timeout) with a 503 saying so', async () => {
  const store = open({ timeoutMs: 300 })
  const taskId = randomUUID()
  await store.create({
    kind: 'task',
    id: taskId,
    contextId: randomUUID(),
    status: { state: 'input-required', timestamp: new Date().toISOString() },
    artifacts: [],
    history: [],
  })
  await store.cluster.release(taskId)
  // Another session holds the task's row: the claim waits for it past the statement timeout.
  const blocker = new pg.Client(server.url)
  await blocker.connect()
  cleanups.push(() => blocker.end())
  await blocker.query('BEGIN')
  await blocker.query(`SELECT 1 FROM "${store.schema}".a2a_tasks WHERE id = $1 FOR UPDATE`, [taskId])
  const refused = await store.cluster.claim(taskId).then(
    () => undefined,
    (error: unknown) => error,
  )
  expect(refused).toBeInstanceOf(ServerUnavailableError)
  expect((refused as Error).message).toBe(
    'The task store (PostgreSQL) did not finish a statement within 300 ms (statement timeout); retry shortly',
  )
  await blocker.query('ROLLBACK')
  expect(await store.cluster.claim(taskId)).toBe(true)
})

it('answers a request that waits past timeoutMs for a connection of a busy pool with a 503 saying so', async () => {
  // A proxy that stops passing the server's answers on: the pool's one connection stays busy.
  const sockets = new Set<Socket>()
  let stalled = false
  const proxy = createServer((client) => {
    const upstream = netConnect(server.port, '127.0.0.1')
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => {})
    }
    client.pipe(upstream)
    upstream.on('data', (chunk: Buffer) => {
      if (!stalled) client.write(chunk)
    })
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        proxy.close(() => resolve())
      }),
  )
  const proxied = new URL(server.url)
  proxied.port = String((proxy.address() as { port: number }).port)
  const store = open({ url: proxied.href, poolSize: 1, timeoutMs: 400 })
  await store.ready()
  stalled = true
  const stuck = store.get(randomUUID()).catch((error: unknown) => error)
  const waiting = await store.get(randomUUID()).then(
    () => undefined,
    (error: unknown) => error,
  )
  expect(waiting).toBeInstanceOf(ServerUnavailableError)
  expect((waiting as Error).message).toBe(
    'The task store (PostgreSQL) had no free connection within 400 ms (the pool is busy, or the server does not answer); retry shortly',
  )
  expect(await stuck).toBeInstanceOf(ServerUnavailableError)
})

it('keeps every acknowledged task when the server is killed in the middle of a flood, no request hangs, and none is left running', {
  timeout: 90_000,
}, async () => {
  const store = open({ timeoutMs: 1000, leaseMs: 500 })
  const agent = await serve(store)
  const acknowledged: string[] = []
  let refused = 0
  let sent = 0
  const worker = async () => {
    while (sent < 400) {
      sent++
      const { status, body } = await rpc(agent.url, 'message/send', platformMessage(`flood ${sent}`))
      if (body.result?.status.state === 'completed') acknowledged.push(body.result.id)
      else {
        expect(status, JSON.stringify(body)).toBe(503)
        refused++
      }
    }
  }
  const flood = Promise.all(Array.from({ length: 8 }, worker))
  await expect.poll(() => acknowledged.length, { timeout: 20_000 }).toBeGreaterThan(50)
  await server.kill()
  await expect.poll(() => refused, { timeout: 20_000 }).toBeGreaterThan(0)
  await server.restart()
  await flood
  for (const id of acknowledged)
    expect((await rpc(agent.url, 'tasks/get', { id })).body.result?.status.state, id).toBe('completed')
  // A task whose events could not be written while the server was down is failed once its lease runs out.
  const client = new pg.Client(server.url)
  await client.connect()
  cleanups.push(() => client.end())
  await expect
    .poll(
      async () =>
        (await client.query(`SELECT count(*)::int AS n FROM "${store.schema}".a2a_tasks WHERE NOT settled`)).rows[0].n,
      { timeout: 20_000, interval: 250 },
    )
    .toBe(0)
})

it('starts while the server is down: requests get a 503, and once it is up the schema is migrated and they are served', {
  timeout: 60_000,
}, async () => {
  await server.kill()
  let restarted = false
  cleanups.push(async () => {
    if (!restarted) await server.restart()
  })
  const store = open({ timeoutMs: 1000 })
  const refused = await store.ready().then(
    () => undefined,
    (error: unknown) => error,
  )
  expect(refused).toBeInstanceOf(ServerUnavailableError)
  await expect(store.get(randomUUID())).rejects.toThrow(/^The task store \(PostgreSQL\) is unreachable/)
  await server.restart()
  restarted = true
  await store.ready()
  expect(await store.get(randomUUID())).toBeUndefined()
})
