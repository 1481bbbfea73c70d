import { randomUUID } from 'node:crypto'
import { status as grpcStatus } from '@grpc/grpc-js'
import { type A2AServer, type Agent, serveAgent, type Task } from 'a2a-runtime'
import { createPostgresStore, type PostgresTaskStore } from 'a2a-runtime/postgres-store'
import pg from 'pg'
import { afterEach, expect, inject, it } from 'vitest'
import type { TaskEvent } from '../../runtime/src/types.ts'
import { rpc } from '../_rpc.ts'
import { agent, deferred, echoAgent } from './_agents.ts'
import { protoMessage, rawClient, serveWithGrpc } from './_grpc.ts'
import { captureLogger } from './_logger.ts'
import { eventReader } from './_sse.ts'

// What a send costs the PostgreSQL store and what it may skip: a task's events handed while its previous write is on
// its way go together in one statement, the event that ends a task gives its lease back (no release after it), and
// an event is notified only while the task has followers.

const url = inject('postgresUrl')
const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
const freshSchema = () => `writes_${Math.random().toString(36).slice(2, 10)}`
/** Long: no renewal nor lost-task check runs while a test counts statements. */
const QUIET_LEASE_MS = 600_000

function store(schema = freshSchema(), poolSize?: number, keepInstantLogs?: boolean): PostgresTaskStore {
  const made = createPostgresStore({ url, schema, leaseMs: QUIET_LEASE_MS, timeoutMs: 3000, poolSize, keepInstantLogs })
  cleanups.push(() => made.close())
  return made
}

async function serve(served: Agent, on: PostgresTaskStore): Promise<A2AServer> {
  const server = await serveAgent(served, {
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
    logger: captureLogger(),
    store: on,
    shutdownTimeoutMs: 500,
  })
  cleanups.unshift(() => server.close())
  return server
}

async function connected(): Promise<pg.Client> {
  const client = new pg.Client(url)
  await client.connect()
  cleanups.push(() => client.end())
  return client
}

/** A row trigger `name` (`when`: e.g. `BEFORE INSERT ON a2a_tasks`) of the schema `s`, running the plpgsql `body`. */
async function rowTrigger(client: pg.Client, s: string, name: string, when: string, body: string): Promise<void> {
  await client.query(`CREATE FUNCTION ${s}.${name}() RETURNS trigger LANGUAGE plpgsql AS $$\n${body} $$`)
  const [timing, table] = when.split(' ON ')
  await client.query(`CREATE TRIGGER ${name} ${timing} ON ${s}.${table} FOR EACH ROW EXECUTE FUNCTION ${s}.${name}()`)
}

const send = (server: A2AServer, text: string) => rpc(server.url, 'message/send', { message: userMessage(text) })

it('answers an echo message/send in one statement: the task written as its events left it, with them, its row never updated (no lease release)', async () => {
  const tasks = store()
  const server = await serve(echoAgent, tasks)
  await tasks.ready()
  // The first send prepares the statements on a connection and runs the check for lost tasks at start.
  expect((await send(server, 'warm')).status).toBe(200)
  // Counts the updates of each task's row: its status moves the row in every index of the table.
  const client = await connected()
  const s = `"${tasks.schema}"`
  await client.query(`CREATE TABLE ${s}.updates (id text)`)
  await rowTrigger(
    client,
    s,
    'count_update',
    'AFTER UPDATE ON a2a_tasks',
    `BEGIN INSERT INTO ${s}.updates VALUES (NEW.id); RETURN NULL; END`,
  )
  const before = tasks.statementsSent
  const { status, body } = await send(server, 'hi')
  expect(status).toBe(200)
  const task = (body as { result: Task }).result
  expect(task.status.state).toBe('completed')
  // The release (if any) goes after the answer: wait for the task's writes and the release to be over.
  await expect.poll(async () => (await tasks.get(task.id))?.status.state).toBe('completed')
  const sent = tasks.statementsSent - before - 1 // less the get
  expect(sent, 'statements of one echo send').toBe(1)
  const { rows } = await client.query(`SELECT lease_holder FROM ${s}.a2a_tasks WHERE id = $1`, [task.id])
  expect(rows[0].lease_holder, 'the ending event gave the lease back').toBeNull()
  const updates = await client.query(`SELECT count(*)::int AS n FROM ${s}.updates WHERE id = $1`, [task.id])
  expect(updates.rows[0].n, "updates of the task's row: none, it was inserted as its events left it").toBe(0)
})

it('keeps no event row for a task that ends in the statement that creates it, its log read as compacted; a task still running keeps every event', async () => {
  const tasks = store()
  const keeping = store(tasks.schema, undefined, true)
  await Promise.all([tasks.ready(), keeping.ready()])
  const client = await connected()
  const s = `"${tasks.schema}"`
  /** The task's first events, handed in the turn of its create (so written with it), ending it when `ends`. */
  const createWithEvents = async (ends: boolean, on = tasks) => {
    const task = newTask()
    const { id: taskId, contextId } = task
    const creating = on.create(task)
    task.status = { state: 'working', timestamp: new Date().toISOString() }
    const working: TaskEvent = { kind: 'status-update', taskId, contextId, status: task.status, final: false, seq: 1 }
    const handing = [on.append(task, working)]
    const artifact = { artifactId: 'art', parts: [{ kind: 'text' as const, text: 'Echo: hi' }] }
    task.artifacts = [artifact]
    const made: TaskEvent = {
      kind: 'artifact-update',
      taskId,
      contextId,
      artifact,
      append: false,
      lastChunk: true,
      seq: 2,
    }
    handing.push(on.append(task, made))
    const handed = [working, made]
    if (ends) {
      task.status = { state: 'completed', timestamp: new Date(Date.now() + 1).toISOString() }
      const done: TaskEvent = { kind: 'status-update', taskId, contextId, status: task.status, final: true, seq: 3 }
      handing.push(on.append(task, done))
      handed.push(done)
    }
    await Promise.all([creating, ...handing])
    return { task, handed }
  }
  const rowsOf = async (taskId: string) =>
    (await client.query(`SELECT seq FROM ${s}.a2a_events WHERE task_id = $1 ORDER BY seq`, [taskId])).rows.map(
      (row) => row.seq,
    )

  const ended = await createWithEvents(true)
  expect(await rowsOf(ended.task.id), 'rows of the log').toEqual([])
  expect(await tasks.get(ended.task.id)).toEqual(ended.task)
  expect(await tasks.snapshot(ended.task.id)).toEqual({ task: ended.task, seq: 3 })
  expect(await tasks.lastSeq(ended.task.id)).toBe(3)
  // Its log is in the task: a resume from before its last event is refused (the client is told to read the task),
  // never answered short; from the last event, nothing is missed.
  expect(await tasks.events(ended.task.id)).toBeUndefined()
  for (const afterSeq of [0, 1, 2]) expect(await tasks.events(ended.task.id, afterSeq)).toBeUndefined()
  expect(await tasks.events(ended.task.id, 3)).toEqual([])

  const running = await createWithEvents(false)
  expect(await rowsOf(running.task.id), 'rows of the log').toEqual([1, 2])
  expect(await tasks.events(running.task.id, 0)).toEqual(running.handed)
  expect(await tasks.get(running.task.id)).toEqual(running.task)

  // keepInstantLogs (a2a dev's store): every event kept, a replay from the first one answered.
  const kept = await createWithEvents(true, keeping)
  expect(await rowsOf(kept.task.id), 'rows of the log').toEqual([1, 2, 3])
  expect(await keeping.events(kept.task.id, 0)).toEqual(kept.handed)
  expect(await tasks.events(kept.task.id, 0), 'read by another instance').toEqual(kept.handed)
})

it('fails the send whose create (with the events its agent handed meanwhile) fails: the run stops, no task is left', async () => {
  const tasks = store()
  const aborted = deferred()
  const started = deferred()
  const server = await serve(
    agent(async (ctx, task) => {
      started.resolve()
      task.working('on it')
      // Ends only when stopped: a run the failed create did not stop would keep this test waiting.
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()))
      aborted.resolve()
    }),
    tasks,
  )
  await tasks.ready()
  const client = await connected()
  const s = `"${tasks.schema}"`
  await rowTrigger(
    client,
    s,
    'refuse',
    'BEFORE INSERT ON a2a_tasks',
    `BEGIN RAISE EXCEPTION 'refused for the test'; END`,
  )
  const { status, body } = await send(server, 'hi')
  // The agent started while the create was on its way, handed its first status (joined to the create), and is
  // stopped once the create failed; the client hears the store's error, never of a task.
  await started.promise
  await aborted.promise
  expect(status).toBe(200)
  const { error, result } = body as { error?: { code: number; message: string }; result?: unknown }
  // An error PostgreSQL raises for no known reason is the server's fault: -32603, its text (SQL included) not shown.
  expect(error?.code).toBe(-32603)
  expect(error?.message).not.toMatch(/refused for the test/)
  expect(result).toBeUndefined()
  const { rows } = await client.query(`SELECT count(*)::int AS n FROM ${s}.a2a_tasks`)
  expect(rows[0].n).toBe(0)
})

it('tells a gRPC stream nothing of a task whose create fails: no frame, the error only, none of its events called unsaved', async () => {
  const tasks = store()
  const target = await serveWithGrpc(echoAgent, { store: tasks })
  await tasks.ready()
  const client = await connected()
  const s = `"${tasks.schema}"`
  // Slow, then refused: the agent answers at once, its events wait with the create.
  await rowTrigger(
    client,
    s,
    'refuse',
    'BEFORE INSERT ON a2a_tasks',
    `BEGIN PERFORM pg_sleep(0.3); RAISE EXCEPTION 'refused for the test'; END`,
  )
  const stream = rawClient(target.grpcAddress).SendStreamingMessage({ message: protoMessage('hi') })
  const frames: unknown[] = []
  stream.on('data', (frame: unknown) => frames.push(frame))
  const error = await new Promise<{ code: number }>((resolve) => stream.on('error', resolve))
  expect(error.code).toBe(grpcStatus.INTERNAL)
  expect(frames).toEqual([])
  expect(target.logger.text('error'), 'no event of a task never created is said to be unsaved').not.toMatch(
    /could not save an event/,
  )
})

it('sends a gRPC stream its first frame only once the task is in the store', async () => {
  const tasks = store()
  const target = await serveWithGrpc(echoAgent, { store: tasks })
  await tasks.ready()
  const client = await connected()
  const s = `"${tasks.schema}"`
  await rowTrigger(client, s, 'slow', 'BEFORE INSERT ON a2a_tasks', `BEGIN PERFORM pg_sleep(0.3); RETURN NEW; END`)
  const stream = rawClient(target.grpcAddress).SendStreamingMessage({ message: protoMessage('hi') })
  // Counted from another session the moment the first frame arrives.
  let storedAtFirst: Promise<number> | undefined
  const frames: Array<{ task?: { id: string } }> = []
  stream.on('data', (frame: { task?: { id: string } }) => {
    frames.push(frame)
    storedAtFirst ??= client
      .query(`SELECT count(*)::int AS n FROM ${s}.a2a_tasks WHERE id = $1`, [frame.task?.id])
      .then(({ rows }) => rows[0].n)
  })
  await new Promise((resolve, reject) => stream.on('end', resolve).on('error', reject))
  expect(frames[0]?.task?.id).toBeTypeOf('string')
  expect(await storedAtFirst, 'the task is stored when its first frame arrives').toBe(1)
})

it('holds the events of a large task for a stream while its create is on its way without a copy of it per event', async () => {
  const tasks = store()
  const events = 400
  const burst = agent((_ctx, task) => {
    task.working('writing')
    for (let i = 0; i < events; i++)
      task.artifact('z', { artifactId: 'answer', append: i > 0, lastChunk: i === events - 1 })
    task.complete()
  })
  const target = await serveWithGrpc(burst, { store: tasks })
  await tasks.ready()
  const client = await connected()
  const s = `"${tasks.schema}"`
  // Every event is handed while the create waits: all of them are held for the stream.
  await rowTrigger(client, s, 'slow', 'BEFORE INSERT ON a2a_tasks', `BEGIN PERFORM pg_sleep(0.5); RETURN NEW; END`)
  const before = process.memoryUsage().heapUsed
  let peak = before
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 5)
  const frames: Array<{ task?: Task; artifactUpdate?: unknown; statusUpdate?: { status: { state: string } } }> = []
  // The task holds a message of 512 KiB: a copy of it per held event came to 200 MiB.
  const stream = rawClient(target.grpcAddress).SendStreamingMessage({ message: protoMessage('y'.repeat(512 * 1024)) })
  stream.on('data', (frame: (typeof frames)[number]) => frames.push(frame))
  await new Promise((resolve, reject) => stream.on('end', resolve).on('error', reject))
  clearInterval(sampler)
  const grewMiB = (peak - before) / 2 ** 20
  expect(grewMiB, `heap grew ${grewMiB.toFixed(0)} MiB while the events were held`).toBeLessThan(100)
  // The stream opens with the task as of its first event, then every event once, in order.
  expect(frames[0]?.task?.artifacts ?? []).toEqual([])
  expect(frames.filter((frame) => frame.artifactUpdate)).toHaveLength(events)
  expect(frames.at(-1)?.statusUpdate?.status.state).toBe('TASK_STATE_COMPLETED')
})

it('reads back a task written with its events (one statement) as answered, its log in the task, and its totals', async () => {
  const tasks = store()
  const server = await serve(echoAgent, tasks)
  await tasks.ready()
  const answers = await Promise.all(['a', 'b', 'c'].map((text) => send(server, text)))
  for (const { body } of answers) {
    const answered = (body as { result: Task }).result
    expect(answered.status.state).toBe('completed')
    expect(await tasks.get(answered.id)).toEqual(answered)
    // It ended in its create: its log is in the task (the working status, the answer and the end).
    expect(await tasks.events(answered.id)).toBeUndefined()
    expect(await tasks.lastSeq(answered.id)).toBe(3)
  }
  const listed = await tasks.list({ limit: 10, state: 'completed' })
  expect(listed.total).toBe(3)
  expect((await tasks.list({ limit: 10 })).total).toBe(3)
  expect((await tasks.list({ limit: 10, state: 'working' })).total).toBe(0)
})

/** A new task of its own context, as a run creates it. */
function newTask(state: Task['status']['state'] = 'submitted'): Task {
  return {
    kind: 'task',
    id: randomUUID(),
    contextId: randomUUID(),
    status: { state, timestamp: new Date().toISOString() },
    artifacts: [],
    history: [{ kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'hi' }] }],
  }
}

/** Ends `task` as its agent does in the turn it was created: its status moved, the event handed to the store. */
function endNow(tasks: PostgresTaskStore, task: Task): Promise<void> {
  task.status = { state: 'completed', timestamp: new Date(Date.now() + 1).toISOString() }
  const { id: taskId, contextId, status } = task
  return tasks.append(task, { kind: 'status-update', taskId, contextId, status, final: true, seq: 1 })
}

it('keeps every character of the JSON it writes: the character that joins texts, quotes, backslashes, braces, NULL and line breaks, in a create with its events and in a later write', async () => {
  const tasks = store()
  await tasks.ready()
  // \x1e joins the JSON texts of a statement's parameter: JSON.stringify writes it escaped, never raw.
  const awkward = (n: number) => `${n} a\x1eb\x1e "quoted", \\ {braces} NULL \n\r\u2028 \u0000 ✓ \ud83d\ude00`
  const task = newTask('working')
  task.history[0]!.parts = [{ kind: 'text', text: awkward(1) }]
  const { id: taskId, contextId } = task
  const creating = tasks.create(task)
  const artifact = { artifactId: 'art', parts: [{ kind: 'text' as const, text: awkward(2) }] }
  task.artifacts = [artifact]
  // Handed in the create's turn: written with it, in one statement.
  const handed = {
    kind: 'artifact-update' as const,
    taskId,
    contextId,
    artifact,
    append: false,
    lastChunk: true,
    seq: 1,
  }
  await Promise.all([creating, tasks.append(task, handed)])
  // A follow-up: its message and the event that ends the task, written by a later statement.
  task.history.push({
    kind: 'message',
    messageId: randomUUID(),
    role: 'user',
    parts: [{ kind: 'text', text: awkward(3) }],
  })
  task.status = {
    state: 'completed',
    timestamp: new Date(Date.now() + 1).toISOString(),
    message: { kind: 'message', messageId: randomUUID(), role: 'agent', parts: [{ kind: 'text', text: awkward(4) }] },
  }
  await tasks.append(task, { kind: 'status-update', taskId, contextId, status: task.status, final: true, seq: 2 })
  expect(await tasks.get(taskId)).toEqual(task)
  const events = await tasks.events(taskId, 0)
  expect(events?.map((event) => event.seq)).toEqual([1, 2])
  expect(JSON.stringify(events)).toContain(JSON.stringify(awkward(2)).slice(1, -1))
  expect(JSON.stringify(events)).toContain(JSON.stringify(awkward(4)).slice(1, -1))
})

it('writes the tasks created in the same turn in one statement, each with the events its agent handed meanwhile', async () => {
  const tasks = store()
  await tasks.ready()
  await tasks.create(newTask()) // prepares the statement
  const answered = [newTask(), newTask(), newTask()]
  const alone = [newTask(), newTask()]
  const owned = newTask()
  const before = tasks.statementsSent
  const writes = [
    ...answered.map((task) => tasks.create(task)),
    ...alone.map((task) => tasks.create(task)),
    tasks.create(owned, 'alice'),
  ]
  // In the same turn, as an agent that answers at once hands its end: these join their creates.
  writes.push(...answered.map((task) => endNow(tasks, task)))
  await Promise.all(writes)
  expect(tasks.statementsSent - before, 'statements for six creates and three events').toBe(1)
  for (const task of [...answered, ...alone, owned]) expect(await tasks.get(task.id)).toEqual(task)
  // Ended as they were created: their log is in the task, from their end on.
  for (const task of answered) {
    expect(await tasks.lastSeq(task.id)).toBe(1)
    expect(await tasks.events(task.id, 1)).toEqual([])
  }
  for (const task of alone) expect(await tasks.lastSeq(task.id)).toBe(0)
  const total = async (query: object) => (await tasks.list({ limit: 1, ...query })).total
  expect(await total({})).toBe(7)
  expect(await total({ state: 'completed' })).toBe(3)
  expect(await total({ state: 'submitted' })).toBe(4)
  expect(await total({ owner: 'alice' })).toBe(1)
  expect(await total({ owner: 'alice', state: 'submitted' })).toBe(1)
  // The ended tasks gave their leases back in that statement; the others hold theirs.
  const client = await connected()
  const { rows } = await client.query(`SELECT id, lease_holder FROM "${tasks.schema}".a2a_tasks`)
  const holders = new Map(rows.map((row) => [row.id, row.lease_holder]))
  for (const task of answered) expect(holders.get(task.id)).toBeNull()
  for (const task of [...alone, owned]) expect(holders.get(task.id)).toBe(tasks.instanceId)
})

it('fails only the create whose row PostgreSQL refuses, and its events, when other tasks were created in its turn', async () => {
  const tasks = store()
  await tasks.ready()
  const client = await connected()
  const s = `"${tasks.schema}"`
  const refused = newTask()
  const others = [newTask(), newTask(), newTask()]
  await rowTrigger(
    client,
    s,
    'refuse',
    'BEFORE INSERT ON a2a_tasks',
    `BEGIN IF NEW.id = '${refused.id}' THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END`,
  )
  const creates = [refused, ...others].map((task) => tasks.create(task))
  const ends = [refused, ...others].map((task) => endNow(tasks, task))
  const [[refusedCreate, ...otherCreates], [refusedEnd, ...otherEnds]] = await Promise.all([
    Promise.allSettled(creates),
    Promise.allSettled(ends),
  ])
  expect(refusedCreate?.status).toBe('rejected')
  expect(refusedEnd?.status).toBe('rejected')
  expect(otherCreates.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled'])
  expect(otherEnds.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled'])
  expect(await tasks.get(refused.id)).toBeUndefined()
  for (const task of others) expect(await tasks.get(task.id)).toEqual(task)
  expect((await tasks.list({ limit: 1 })).total).toBe(3)
})

it('answers the create of a task another instance holds with a 503, and writes the tasks created in its turn', async () => {
  const schema = freshSchema()
  const first = store(schema)
  const second = store(schema)
  await Promise.all([first.ready(), second.ready()])
  const held = newTask()
  await first.create(held)
  const others = [newTask(), newTask()]
  const [again, ...rest] = await Promise.allSettled([held, ...others].map((task) => second.create(task)))
  expect(again?.status).toBe('rejected')
  expect(((again as PromiseRejectedResult).reason as Error).message).toMatch(/held by another instance/)
  expect(rest.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled'])
  for (const task of others) expect(await first.get(task.id)).toEqual(task)
  expect((await first.list({ limit: 1 })).total).toBe(3)
})

it('answers a retried statement of creates that landed with 2 for each of its tasks, and 0 to another instance', async () => {
  const tasks = store()
  await tasks.ready()
  const client = await connected()
  const s = `"${tasks.schema}"`
  const event = JSON.stringify({ kind: 'status-update', final: true, seq: 1 })
  // Three tasks: one still held by the instance, one ended by its event (its lease freed), one ended as it was created
  // (its three events not kept: the row alone tells the retry).
  const values = (instance: string) => [
    ['t-held', 't-ended', 't-at-once'],
    ['c', 'c', 'c'],
    [null, null, null],
    ['working', 'completed', 'completed'],
    [false, true, true],
    [1, 2, 3],
    ['{}', '{}', '{"id":"t-at-once"}'],
    ['{}', '{}', '{}'],
    [0, 1, 3],
    [false, true, true],
    instance,
    60_000,
    [1],
    [0],
    ['{}'],
    [2],
    [1],
    [event],
  ]
  const call = `SELECT ${s}.a2a_create_many($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
    $18) AS created`
  const answer = async (instance: string) => (await client.query(call, values(instance))).rows[0].created
  expect(await answer('one')).toEqual([1, 1, 1])
  expect(await answer('one'), 'the same statement again (its answer was lost)').toEqual([2, 2, 2])
  expect(
    await answer('other'),
    'another instance: the held task is not its; the ended ones match their event and their row',
  ).toEqual([0, 2, 2])
  const moved = values('one')
  ;(moved[6] as string[])[2] = '{"id":"t-at-once","other":true}'
  expect((await client.query(call, moved)).rows[0].created, 'a row another write left').toEqual([2, 2, 0])
  const counted = await client.query(`SELECT sum(n)::int AS n FROM ${s}.a2a_counts WHERE key = ''`)
  expect(counted.rows[0].n, 'tasks counted once').toBe(3)
  const log = await client.query(`SELECT id AS task_id, kept_after, last_seq FROM ${s}.a2a_tasks ORDER BY id`)
  expect(log.rows, 'where each log starts').toEqual([
    { task_id: 't-at-once', kept_after: 3, last_seq: 3 },
    { task_id: 't-ended', kept_after: 0, last_seq: 1 },
    { task_id: 't-held', kept_after: 0, last_seq: 0 },
  ])
  const { rows } = await client.query(`SELECT task_id, n FROM ${s}.a2a_history`)
  expect(rows).toEqual([{ task_id: 't-held', n: 0 }])
})

it('fails a task whose event, handed while its create was on its way and written after it, could not be saved', async () => {
  const tasks = store()
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
  const server = await serve(
    agent(async (_ctx, task) => {
      task.working('on it')
      // Past the turn the create waits for, before the create lands: this event is written after it.
      await pause(30)
      task.artifact('part')
      await pause(900)
      task.complete()
    }),
    tasks,
  )
  await tasks.ready()
  const client = await connected()
  const s = `"${tasks.schema}"`
  await rowTrigger(client, s, 'slow', 'BEFORE INSERT ON a2a_tasks', `BEGIN PERFORM pg_sleep(0.3); RETURN NEW; END`)
  await rowTrigger(
    client,
    s,
    'refuse',
    'BEFORE INSERT ON a2a_events',
    `BEGIN IF NEW.event LIKE '%"artifact-update"%' THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END`,
  )
  await send(server, 'hi')
  const { rows } = await client.query(`SELECT state FROM ${s}.a2a_tasks`)
  expect(
    rows.map((row) => row.state),
    'the task ends rather than completing without the event',
  ).toEqual(['failed'])
})

it('fails every event of a write whose statement fails, none of them landed, and writes the task whole next', async () => {
  const tasks = store()
  await tasks.ready()
  const client = await connected()
  const s = `"${tasks.schema}"`
  const id = randomUUID()
  const task: Task = {
    kind: 'task',
    id,
    contextId: randomUUID(),
    status: { state: 'submitted', timestamp: new Date().toISOString() },
    artifacts: [],
    history: [{ kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] }],
  }
  await tasks.create(task)
  // The second event's row is refused: the statement that carries it (and the events around it) fails.
  await rowTrigger(
    client,
    s,
    'refuse',
    'BEFORE INSERT ON a2a_events',
    `BEGIN IF NEW.seq = 2 THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END`,
  )
  const status = (seq: number, state: Task['status']['state'], final = false): TaskEvent => {
    task.status = { state, timestamp: new Date(Date.now() + seq).toISOString() }
    return { kind: 'status-update', taskId: id, contextId: task.contextId, status: task.status, final, seq }
  }
  // Handed in one go, as a run hands a status, its answer and its end: they go in one statement.
  const before = tasks.statementsSent
  const writes = [1, 2, 3].map((seq) => tasks.append(task, status(seq, 'working')))
  const settled = await Promise.allSettled(writes)
  expect(settled.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected'])
  expect(tasks.statementsSent - before, 'one statement for the three events').toBe(1)
  expect(await tasks.lastSeq(id), 'none of them landed').toBe(0)
  await client.query(`DROP TRIGGER refuse ON ${s}.a2a_events`)
  await tasks.append(task, status(4, 'completed', true))
  expect((await tasks.get(id))?.status.state).toBe('completed')
  expect(await tasks.lastSeq(id)).toBe(4)
})

it("notifies a task's events only while another instance follows it, and the follower hears every one", async () => {
  const schema = freshSchema()
  const a = store(schema)
  const b = store(schema)
  const step = deferred()
  const chunks = 40
  const streaming = agent(async (ctx, task) => {
    task.working('started')
    if (ctx.text === 'followed') await step.promise
    for (let i = 0; i < chunks; i++) {
      task.artifact(`${i},`, { artifactId: 'a', append: i > 0, lastChunk: i === chunks - 1 })
      await new Promise((resolve) => setImmediate(resolve))
    }
    task.complete()
  })
  const onA = await serve(streaming, a)
  const onB = await serve(streaming, b)
  const listener = await connected()
  const heard: string[] = []
  listener.on('notification', (message) => heard.push(message.payload ?? ''))
  await listener.query(`LISTEN "a2a.events.${schema}"`)

  // Nobody follows this one: its events are not notified.
  const alone = (await send(onA, 'alone')).body as { result: Task }
  expect(alone.result.status.state).toBe('completed')

  // Followed on B while it runs on A: B's stream has every event after the task it starts with, to the end.
  const { id } = (
    await rpc(onA.url, 'message/send', { message: userMessage('followed'), configuration: { blocking: false } })
  ).body.result as Task
  const followed = eventReader(await stream(onB, 'SubscribeToTask', { id }))
  expect((await followed.next()).result.task.id).toBe(id)
  // B counts its follower in just after the stream's first frame: the run goes on once it has (else every event may
  // land before it, and B rightly reads them all from the table, with nothing to notify).
  await expect
    .poll(async () => (await listener.query(`SELECT followers FROM "${schema}".a2a_tasks WHERE id = $1`, [id])).rows[0])
    .toEqual({ followers: 1 })
  step.resolve()
  const events: Array<Record<string, { lastChunk?: boolean; status?: { state: string } }>> = []
  for (let event = await followed.next(); event; event = await followed.next()) events.push(event.result)
  expect(events.filter((event) => event.artifactUpdate)).toHaveLength(chunks)
  expect(events.at(-1)?.statusUpdate?.status?.state).toBe('TASK_STATE_COMPLETED')
  // The test's own listening connection reads its notifications when it gets to them: maybe after B's stream ended.
  await expect.poll(() => heard.filter((payload) => payload.includes(id)).length).toBeGreaterThan(0)
  expect(heard.filter((payload) => payload.includes(alone.result.id))).toEqual([])
})

const userMessage = (text: string) => ({ role: 'user', messageId: randomUUID(), parts: [{ kind: 'text', text }] })

const stream = (server: A2AServer, method: string, params: unknown) =>
  fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })

it("creates tasks while another session's create waits for its commit: the counts behind total keep them apart", async () => {
  // A few sessions of its own: each writes the rows of the counts of its server process, the holder's others.
  const tasks = store(freshSchema(), 3)
  await tasks.ready()
  const s = `"${tasks.schema}"`
  // A create whose transaction stays open: its rows of the counts stay locked until it ends.
  const holder = await connected()
  await holder.query('BEGIN')
  await holder.query(
    `SELECT ${s}.a2a_create($1, 'c', NULL, 'submitted', false, 1, '{}', '{}', '{}', 'elsewhere', 60000)`,
    [randomUUID()],
  )
  try {
    const creates = Array.from({ length: 64 }, (_, n) => {
      const id = randomUUID()
      const task: Task = {
        kind: 'task',
        id,
        contextId: `context-${n}`,
        status: { state: 'submitted', timestamp: new Date().toISOString() },
        artifacts: [],
        history: [],
      }
      return tasks.create(task)
    })
    // Each would wait for the open transaction (its statement timeout, then a 503) on a row of the counts it shares.
    const settled = await Promise.allSettled(creates)
    expect(settled.filter((result) => result.status === 'rejected')).toEqual([])
  } finally {
    await holder.query('ROLLBACK')
  }
  expect((await tasks.list({ limit: 1 })).total).toBe(64)
})

it('writes a backlog of events handed at once in bounded statements (256 events, about 4 MiB each at most), every one in order', async () => {
  const tasks = store()
  await tasks.ready()
  const id = randomUUID()
  const task: Task = {
    kind: 'task',
    id,
    contextId: randomUUID(),
    status: { state: 'working', timestamp: new Date().toISOString() },
    artifacts: [],
    history: [{ kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] }],
  }
  await tasks.create(task)
  const count = 600
  const before = tasks.statementsSent
  const writes: Array<Promise<void>> = []
  for (let seq = 1; seq <= count; seq++) {
    const text = `${seq},`
    const event: TaskEvent = {
      kind: 'artifact-update',
      taskId: id,
      contextId: task.contextId,
      artifact: { artifactId: 'a', parts: [{ kind: 'text', text }] },
      append: seq > 1,
      lastChunk: seq === count,
      seq,
    }
    writes.push(tasks.append(task, event))
  }
  await Promise.all(writes)
  expect(tasks.statementsSent - before, 'statements for 600 events').toBe(Math.ceil(count / 256))
  expect(await tasks.lastSeq(id)).toBe(count)
  expect((await tasks.events(id, 0))?.map((event) => event.seq)).toEqual(Array.from({ length: count }, (_, i) => i + 1))

  // And by bytes: three events of 1.5 MiB go in two statements (4 MiB each at most).
  const large = 'x'.repeat(1.5 * 1024 * 1024)
  const beforeLarge = tasks.statementsSent
  await Promise.all(
    [1, 2, 3].map((i) =>
      tasks.append(task, {
        kind: 'artifact-update',
        taskId: id,
        contextId: task.contextId,
        artifact: { artifactId: `large-${i}`, parts: [{ kind: 'text', text: large }] },
        append: false,
        lastChunk: true,
        seq: count + i,
      }),
    ),
  )
  expect(tasks.statementsSent - beforeLarge, 'statements for 4.5 MiB of events').toBe(2)
  expect(await tasks.lastSeq(id)).toBe(count + 3)
})
