import { randomUUID } from 'node:crypto'
import { createServer, connect as netConnect, type Socket } from 'node:net'
import type { Task } from 'a2a-runtime'
import { createPostgresStore, type PostgresStoreOptions, type PostgresTaskStore } from 'a2a-runtime/postgres-store'
import pg from 'pg'
import { afterEach, expect, inject, it } from 'vitest'
import type { TaskEvent } from '../../runtime/src/types.ts'

// The PostgreSQL store's listening connection and its followers when the network or a payload misbehaves: a
// connection dropped without a word, a notification no instance sent.

const url = inject('postgresUrl')
const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
const freshSchema = () => `listener_${Math.random().toString(36).slice(2, 10)}`
/** Long: no renewal nor lost-task check runs during a test. */
const QUIET_LEASE_MS = 600_000

function store(schema: string, tuning: Partial<PostgresStoreOptions> = {}): PostgresTaskStore {
  const made = createPostgresStore({ url, schema, leaseMs: QUIET_LEASE_MS, timeoutMs: 3000, ...tuning })
  cleanups.push(() => made.close())
  return made
}

/**
 * A TCP proxy to PostgreSQL whose `freeze()` stops passing anything on over the connections open then, without
 * closing them (a NAT or load balancer that forgot them); connections made afterwards pass as before, unless told.
 */
async function freezableProxy() {
  const frozen = new Set<Socket>()
  const open = new Set<Socket>()
  let freezeNew = false
  const server = createServer((client) => {
    const upstream = netConnect(Number(new URL(url).port), '127.0.0.1')
    for (const socket of [client, upstream]) {
      open.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => open.delete(socket))
      if (freezeNew) frozen.add(socket)
    }
    client.on('data', (chunk: Buffer) => void (frozen.has(client) || upstream.write(chunk)))
    upstream.on('data', (chunk: Buffer) => void (frozen.has(upstream) || client.write(chunk)))
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const proxied = new URL(url)
  proxied.port = String((server.address() as { port: number }).port)
  cleanups.push(() => {
    for (const socket of open) socket.destroy()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return {
    url: proxied.href,
    /** With `andNew`, the connections made afterwards pass nothing on either (the server is out of reach). */
    freeze(andNew = false) {
      freezeNew = andNew
      for (const socket of open) frozen.add(socket)
    },
  }
}

function newTask(): Task {
  return {
    kind: 'task',
    id: randomUUID(),
    contextId: randomUUID(),
    status: { state: 'submitted', timestamp: new Date().toISOString() },
    artifacts: [],
    history: [{ kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'hi' }] }],
  }
}

/** The next status of `task`, applied to it, as its event. */
function status(task: Task, seq: number, state: Task['status']['state'], final = false): TaskEvent {
  task.status = { state, timestamp: new Date(Date.now() + seq).toISOString() }
  return { kind: 'status-update', taskId: task.id, contextId: task.contextId, status: task.status, final, seq }
}

it('hears, after its heartbeat notices, the events written once the network silently dropped its listening connection', {
  timeout: 60_000,
}, async () => {
  const schema = freshSchema()
  const a = store(schema)
  await a.ready()
  const proxy = await freezableProxy()
  const b = store(schema, { url: proxy.url, timeoutMs: 1000 })
  await b.ready()
  const task = newTask()
  await a.create(task)
  const heard: number[] = []
  const stop = b.cluster.follow(task.id, 0, (event) => heard.push(event.seq))
  cleanups.push(stop)
  await a.append(task, status(task, 1, 'working'))
  await expect.poll(() => heard, { timeout: 10_000 }).toEqual([1])

  proxy.freeze()
  await a.append(task, status(task, 2, 'working'))
  await a.append(task, status(task, 3, 'completed', true))
  // A heartbeat every second at most, answered within a second, then a new connection and the catch-up.
  await expect.poll(() => heard, { timeout: 20_000, interval: 100 }).toEqual([1, 2, 3])
})

it('delivers to a follower the events after a gap the log will never fill (an event that could not be written)', async () => {
  const schema = freshSchema()
  const a = store(schema)
  const b = store(schema)
  await Promise.all([a.ready(), b.ready()])
  const task = newTask()
  await a.create(task)
  await a.append(task, status(task, 1, 'working'))
  const heard: number[] = []
  cleanups.push(b.cluster.follow(task.id, 1, (event) => heard.push(event.seq)))
  await a.append(task, status(task, 2, 'working'))
  await expect.poll(() => heard, { timeout: 10_000 }).toEqual([2])
  // Event 3's row is refused (its write fails for good); the failed status after it is written with the whole task,
  // the log kept only after 3.
  const s = `"${schema}"`
  const admin = new pg.Client(url)
  await admin.connect()
  cleanups.push(() => admin.end())
  await admin.query(`CREATE FUNCTION ${s}.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN IF NEW.seq = 3 THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END $$`)
  await admin.query(
    `CREATE TRIGGER refuse BEFORE INSERT ON ${s}.a2a_events FOR EACH ROW EXECUTE FUNCTION ${s}.refuse()`,
  )
  await expect(a.append(task, status(task, 3, 'working'))).rejects.toThrow()
  await a.append(task, status(task, 4, 'failed', true))
  expect(await a.events(task.id, 2), 'a resume from before the gap is refused').toBeUndefined()
  await expect.poll(() => heard, { timeout: 5000, interval: 100 }).toEqual([2, 4])
})

it('answers a read behind writes that wait for an unreachable server with a 503 within twice timeoutMs', {
  timeout: 60_000,
}, async () => {
  const timeoutMs = 1500
  const proxy = await freezableProxy()
  const tasks = store(freshSchema(), { url: proxy.url, timeoutMs })
  await tasks.ready()
  const task = newTask()
  await tasks.create(task)
  proxy.freeze(true)
  // Retried over the outage, for several timeouts: the reads below wait behind it.
  const write = tasks.append(task, status(task, 1, 'working'))
  write.catch(() => {})
  for (const read of [() => tasks.get(task.id), () => tasks.list({ limit: 10 })]) {
    const started = Date.now()
    await expect(read()).rejects.toMatchObject({ httpStatus: 503 })
    expect(Date.now() - started).toBeLessThan(2 * timeoutMs)
  }
  await expect(write).rejects.toMatchObject({ httpStatus: 503 })
})

it('drops a notification it cannot read, on either of its channels, and keeps serving (one warning)', async () => {
  const schema = freshSchema()
  const warnings: string[] = []
  const a = store(schema)
  const b = store(schema, { logger: { warn: (message: string) => warnings.push(message), error: () => {} } })
  await Promise.all([a.ready(), b.ready()])
  const task = newTask()
  await a.create(task)
  const heard: number[] = []
  cleanups.push(b.cluster.follow(task.id, 0, (event) => heard.push(event.seq)))
  await a.append(task, status(task, 1, 'working'))
  await expect.poll(() => heard, { timeout: 10_000 }).toEqual([1])
  const admin = new pg.Client(url)
  await admin.connect()
  cleanups.push(() => admin.end())
  const notify = (channel: string, payload: string) => admin.query('SELECT pg_notify($1, $2)', [channel, payload])
  // Garbage, and an event of the followed task that is not JSON; a cancel request that is not JSON.
  await notify(`a2a.events.${schema}`, 'x')
  await notify(`a2a.events.${schema}`, `2:${task.id.length}:${task.id}{not json`)
  await notify(`a2a.instance.${b.instanceId}`, 'x')
  await notify(`a2a.instance.${b.instanceId}`, 'null')
  await a.append(task, status(task, 2, 'completed', true))
  await expect.poll(() => heard, { timeout: 10_000 }).toEqual([1, 2])
  expect((await b.get(task.id))?.status.state).toBe('completed')
  expect(warnings.filter((warning) => warning.includes('could not be read'))).toHaveLength(1)
})
