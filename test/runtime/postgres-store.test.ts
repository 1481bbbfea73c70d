import { randomUUID } from 'node:crypto'
import type { Task } from 'a2a-runtime'
import { createPostgresStore, migratePostgresStore, type PostgresTaskStore } from 'a2a-runtime/postgres-store'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { ConfigurationError, ServerUnavailableError } from '../../runtime/src/errors.ts'
import { storeFromSetting } from '../../runtime/src/stores/from-setting.ts'
import { MIGRATIONS } from '../../runtime/src/stores/postgres/_schema.ts'
import type { TaskQuery } from '../../runtime/src/stores/task-store.ts'

// What is the PostgreSQL store's own (the contract suite checks the rest): owners compared in SQL, ListTasks' views
// and total, migrations, push configs sealed at rest, and A2A_STORE=postgres://….

const url = inject('postgresUrl')
const freshSchema = () => `own_${Math.random().toString(36).slice(2, 10)}`
const stores: PostgresTaskStore[] = []
let client: pg.Client

beforeAll(async () => {
  client = new pg.Client(url)
  await client.connect()
})
afterAll(async () => {
  await client?.end()
})
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()))
})

function open(options: Partial<Parameters<typeof createPostgresStore>[0]> = {}): PostgresTaskStore {
  const store = createPostgresStore({ url, schema: freshSchema(), ...options })
  stores.push(store)
  return store
}

let clock = Date.now()

/** The event that ends `task` with its status as it is now, as its `seq`th. */
const ended = (task: Task, seq: number) => ({
  kind: 'status-update' as const,
  seq,
  taskId: task.id,
  contextId: task.contextId,
  status: task.status,
  final: true,
})

/** The tasks of `schema` that a SQL condition selects, counted in the table itself. */
const rowsWhere = async (schema: string, where: string, values: unknown[] = []): Promise<number> =>
  (await client.query(`SELECT count(*)::int AS n FROM "${schema}".a2a_tasks WHERE ${where}`, values)).rows[0].n

/** Each total a listing answers (its filter, and the same filter in SQL) is the rows of the table that match. */
async function expectTotalsOfRows(
  store: PostgresTaskStore,
  schema: string,
  cases: Array<[Partial<Pick<TaskQuery, 'owner' | 'state'>>, string, string[]]>,
): Promise<void> {
  for (const [query, where, values] of cases)
    expect((await store.list({ ...query, limit: 1 })).total, JSON.stringify(query)).toBe(
      await rowsWhere(schema, where, values),
    )
}
function newTask(options: { contextId?: string; state?: Task['status']['state']; messages?: number } = {}): Task {
  const id = randomUUID()
  const contextId = options.contextId ?? randomUUID()
  return {
    kind: 'task',
    id,
    contextId,
    status: { state: options.state ?? 'completed', timestamp: new Date(++clock).toISOString() },
    artifacts: [{ artifactId: 'a', parts: [{ kind: 'text', text: `answer of ${id}` }] }],
    history: Array.from({ length: options.messages ?? 1 }, (_, n) => ({
      kind: 'message' as const,
      messageId: `${id}-${n}`,
      role: n % 2 ? ('agent' as const) : ('user' as const),
      parts: [{ kind: 'text' as const, text: `message ${n}` }],
      taskId: id,
      contextId,
    })),
  }
}

describe('owners', () => {
  it("answers another owner's task as absent, in one statement, and lists an owner's page and total among many tasks of others", async () => {
    const store = open()
    const alices: Task[] = []
    const shared = randomUUID()
    for (let i = 0; i < 30; i++) {
      const task = newTask({ contextId: shared })
      await store.create(task, i % 10 === 0 ? 'alice' : 'bob')
      if (i % 10 === 0) alices.push(task)
    }
    const before = store.statementsSent
    expect(await store.get(alices[0]!.id, 'bob')).toBeUndefined()
    expect(await store.snapshot(alices[0]!.id, 'bob')).toBeUndefined()
    expect(store.statementsSent - before, 'one statement per read, the owner compared in it').toBe(2)
    expect((await store.get(alices[0]!.id, 'alice'))?.id).toBe(alices[0]!.id)
    const page = await store.list({ owner: 'alice', contextId: shared, state: 'completed', limit: 2 })
    expect(page.total).toBe(3)
    expect(page.tasks.map((task) => task.id)).toEqual([alices[2]!.id, alices[1]!.id])
    const rest = await store.list({
      owner: 'alice',
      contextId: shared,
      state: 'completed',
      limit: 2,
      cursor: page.nextCursor!,
    })
    expect(rest.tasks.map((task) => task.id)).toEqual([alices[0]!.id])
    expect(rest.nextCursor).toBeUndefined()
  })
})

describe('ListTasks', () => {
  it('reads only what the view shows: the newest historyLength messages, no artifacts when asked for none', async () => {
    const store = open()
    const task = newTask({ messages: 5 })
    await store.create(task)
    const [headOnly] = (await store.list({ limit: 10, historyLength: 2, includeArtifacts: false })).tasks
    expect(headOnly!.history.map((message) => message.messageId)).toEqual([`${task.id}-3`, `${task.id}-4`])
    expect(headOnly!.artifacts).toEqual([])
    expect(headOnly!.status).toEqual(task.status)
    const [withArtifacts] = (await store.list({ limit: 10, historyLength: 0 })).tasks
    expect(withArtifacts!.history).toEqual([])
    expect(withArtifacts!.artifacts).toEqual(task.artifacts)
    const [whole] = (await store.list({ limit: 10 })).tasks
    expect(whole).toEqual(task)
  })

  it('counts total with every filter, one statement per page, and pages by status time then id', async () => {
    const store = open()
    const contexts = [randomUUID(), randomUUID()]
    const states = ['completed', 'failed', 'working'] as const
    for (let i = 0; i < 24; i++) await store.create(newTask({ contextId: contexts[i % 2]!, state: states[i % 3]! }))
    const before = store.statementsSent
    const page = await store.list({ contextId: contexts[0]!, state: 'completed', limit: 2 })
    expect(store.statementsSent - before).toBe(1)
    expect(page.total).toBe(4)
    expect(page.tasks).toHaveLength(2)
    expect((await store.list({ limit: 1 })).total).toBe(24)
    expect((await store.list({ state: 'working', limit: 50 })).total).toBe(8)
    expect((await store.list({ updatedAfter: new Date(clock - 4).toISOString(), limit: 50 })).total).toBe(5)
  })
})

describe('the counts behind total', () => {
  it('stay exact through creates, status changes and retention, for every filter they serve', async () => {
    const schema = freshSchema()
    const store = open({ schema, ttlMs: 60_000 })
    const owners = ['alice', 'bob', undefined]
    const tasks: Task[] = []
    for (let i = 0; i < 18; i++) {
      const task = newTask({ state: 'working' })
      tasks.push(task)
      await store.create(task, owners[i % 3])
    }
    // Half of them end, some failed: their status moves them between the counts.
    for (const [i, task] of tasks.entries()) {
      if (i % 2) continue
      task.status = { state: i % 4 ? 'failed' : 'completed', timestamp: new Date(++clock).toISOString() }
      await store.append(task, ended(task, 1))
    }
    // Retention takes the ended ones once they are older than ttlMs.
    await client.query(`UPDATE "${schema}".a2a_tasks SET changed_at = now() - interval '1 hour' WHERE id = $1`, [
      tasks[0]!.id,
    ])
    await store.sweep()
    expect(await store.get(tasks[0]!.id)).toBeUndefined()
    await expectTotalsOfRows(store, schema, [
      [{}, 'true', []],
      [{ state: 'working' }, 'state = $1', ['working']],
      [{ state: 'failed' }, 'state = $1', ['failed']],
      [{ owner: 'alice' }, 'owner = $1', ['alice']],
      [{ owner: 'bob', state: 'completed' }, 'owner = $1 AND state = $2', ['bob', 'completed']],
    ])
    expect(await rowsWhere(schema, 'true')).toBe(17)
  })

  it('stay exact with two instances creating, ending and trimming tasks at once (their writes in many sessions)', async () => {
    const schema = freshSchema()
    // Two instances, each its own pool of sessions (the counts' rows are per session), retention busy past 40 tasks.
    const instances = [open({ schema, maxTasks: 40 }), open({ schema, maxTasks: 40 })]
    const owners = ['alice', 'bob', undefined]
    await Promise.all(
      Array.from({ length: 240 }, async (_, i) => {
        const store = instances[i % 2]!
        const task = newTask({ state: 'working' })
        await store.create(task, owners[i % 3])
        if (i % 4 === 3) return // left running
        task.status = { state: i % 5 ? 'completed' : 'failed', timestamp: new Date(++clock).toISOString() }
        await store.append(task, ended(task, 1))
      }),
    )
    // Retention runs in the background after settlings: wait for it to bring the store down past the cap.
    await expect.poll(async () => rowsWhere(schema, 'settled'), { timeout: 20_000 }).toBeLessThan(120)
    await expectTotalsOfRows(instances[0]!, schema, [
      [{}, 'true', []],
      [{ state: 'working' }, 'state = $1', ['working']],
      [{ state: 'completed' }, 'state = $1', ['completed']],
      [{ state: 'failed' }, 'state = $1', ['failed']],
      [{ owner: 'alice' }, 'owner = $1', ['alice']],
      [{ owner: 'bob', state: 'working' }, 'owner = $1 AND state = $2', ['bob', 'working']],
      [{ owner: 'alice', state: 'completed' }, 'owner = $1 AND state = $2', ['alice', 'completed']],
    ])
  })
})

describe('migrations', () => {
  it('applies each migration once when two stores start at once on a new schema', async () => {
    const schema = freshSchema()
    const [a, b] = [open({ schema }), open({ schema })]
    await Promise.all([a.ready(), b.ready()])
    const { rows } = await client.query(`SELECT version FROM "${schema}".a2a_migrations ORDER BY version`)
    expect(rows.map((row) => row.version)).toEqual([1, 2, 3, 4, 5])
    await a.create(newTask())
    expect((await b.list({ limit: 5 })).total).toBe(1)
  })

  it('refuses, in one line, a schema newer than the code; requests get a 503 saying so', async () => {
    const schema = freshSchema()
    await open({ schema }).ready()
    await client.query(`INSERT INTO "${schema}".a2a_migrations (version) VALUES (99)`)
    const newer = open({ schema })
    const refusal = await newer.ready().then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(refusal).toBeInstanceOf(ConfigurationError)
    expect((refusal as Error).message).toMatch(/schema ".*" is at version 99, newer than this runtime knows \(5\)/)
    expect((refusal as Error).message).not.toContain('\n')
    await expect(newer.get(randomUUID())).rejects.toThrow(ServerUnavailableError)
    await expect(newer.get(randomUUID())).rejects.toThrow(/version 99/)
  })

  it('with migrate: false refuses an empty schema naming a2a store migrate; migratePostgresStore then brings it up', async () => {
    const schema = freshSchema()
    const unmigrated = open({ schema, migrate: false })
    await expect(unmigrated.ready()).rejects.toThrow(/is at version 0, this runtime needs 5: run `a2a store migrate`/)
    expect(await migratePostgresStore({ url, schema })).toEqual({ from: 0, to: 5 })
    expect(await migratePostgresStore({ url, schema })).toEqual({ from: 5, to: 5 })
    const current = open({ schema, migrate: false })
    await current.ready()
    const task = newTask()
    await current.create(task)
    expect(await current.get(task.id)).toEqual(task)
  })

  it('brings a schema of the first release (version 1) to the current one, its tasks and their totals kept', async () => {
    const schema = freshSchema()
    const q = `"${schema}"`
    // Version 1 as released, its tasks written by its own function: one working with an owner, one completed.
    await client.query(`CREATE SCHEMA ${q}`)
    await client.query(
      `CREATE TABLE ${q}.a2a_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    )
    await client.query(MIGRATIONS[0]!(q))
    await client.query(`INSERT INTO ${q}.a2a_migrations (version) VALUES (1)`)
    const old = [newTask({ state: 'working' }), newTask({ state: 'completed' })]
    for (const [i, task] of old.entries()) {
      const json = JSON.stringify({ ...task, history: [] })
      const head = JSON.stringify({ ...task, artifacts: [], history: [] })
      const messages = task.history.map((message) => JSON.stringify(message))
      const { state, timestamp } = task.status
      await client.query(`SELECT ${q}.a2a_create($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, [
        task.id,
        task.contextId,
        i === 0 ? 'alice' : null,
        state,
        state === 'completed',
        Date.parse(timestamp),
        json,
        head,
        messages,
        'an-instance-of-version-1',
        60_000,
      ])
    }
    await expect(open({ schema, migrate: false }).ready()).rejects.toThrow(/is at version 1, this runtime needs 5/)
    expect(await migratePostgresStore({ url, schema })).toEqual({ from: 1, to: 5 })
    const upgraded = open({ schema, migrate: false })
    await upgraded.ready()
    for (const task of old) expect(await upgraded.get(task.id)).toEqual(task)
    // A create alone, and one that carries its first event (handed in the same turn: one statement).
    const alone = newTask({ state: 'submitted' })
    await upgraded.create(alone)
    const joined = newTask({ state: 'submitted' })
    const creating = upgraded.create(joined)
    joined.status = { state: 'completed', timestamp: new Date(++clock).toISOString() }
    const ended = { kind: 'status-update' as const, taskId: joined.id, contextId: joined.contextId }
    await Promise.all([creating, upgraded.append(joined, { ...ended, status: joined.status, final: true, seq: 1 })])
    expect(await upgraded.get(joined.id)).toEqual(joined)
    const total = async (query: object) => (await upgraded.list({ limit: 10, ...query })).total
    expect(await total({})).toBe(4)
    expect(await total({ state: 'completed' })).toBe(2)
    expect(await total({ state: 'submitted' })).toBe(1)
    expect(await total({ state: 'working' })).toBe(1)
    expect((await upgraded.list({ limit: 10, owner: 'alice' })).total).toBe(1)
  })
})

describe('retention', () => {
  /** Rows of the history and the log whose task is gone: none, ever. */
  const orphans = async (schema: string) => {
    const q = `"${schema}"`
    const { rows } = await client.query(
      `SELECT (SELECT count(*) FROM ${q}.a2a_history h WHERE NOT EXISTS (SELECT 1 FROM ${q}.a2a_tasks t
         WHERE t.id = h.task_id))::int AS history,
       (SELECT count(*) FROM ${q}.a2a_events e WHERE NOT EXISTS (SELECT 1 FROM ${q}.a2a_tasks t
         WHERE t.id = e.task_id))::int AS events`,
    )
    return rows[0]
  }

  it("deletes a task's history and events with it, by age and by count (each a statement deleting tasks, as every version's), and counts them out", async () => {
    const schema = freshSchema()
    const store = open({ schema, maxTasks: 20 })
    const tasks: Task[] = []
    const owners = ['alice', 'bob', undefined]
    for (let i = 0; i < 100; i++) {
      const task = newTask({ state: 'working', messages: 2 })
      tasks.push(task)
      await store.create(task, owners[i % 3])
      task.status = { state: i % 5 ? 'completed' : 'failed', timestamp: new Date(++clock).toISOString() }
      await store.append(task, ended(task, 1))
    }
    // Past maxTasks the oldest settled tasks go (checked every 64 settlings, in the background).
    await expect.poll(async () => (await store.list({ limit: 1 })).total).toBeLessThan(100)
    expect(await store.get(tasks[0]!.id)).toBeUndefined()
    expect(await orphans(schema)).toEqual({ history: 0, events: 0 })
    // The totals a listing answers are the rows left, for every key a delete moves: all, a state, an owner, both.
    await expectTotalsOfRows(store, schema, [
      [{}, 'true', []],
      [{ state: 'failed' }, 'state = $1', ['failed']],
      [{ state: 'completed' }, 'state = $1', ['completed']],
      [{ owner: 'alice' }, 'owner = $1', ['alice']],
      [{ owner: 'bob', state: 'failed' }, 'owner = $1 AND state = $2', ['bob', 'failed']],
    ])
    // By age: every task left made old.
    await client.query(`UPDATE "${schema}".a2a_tasks SET changed_at = now() - interval '1 year'`)
    await open({ schema, ttlMs: 60_000 }).sweep()
    expect((await client.query(`SELECT count(*)::int AS n FROM "${schema}".a2a_tasks`)).rows[0].n).toBe(0)
    expect(await orphans(schema)).toEqual({ history: 0, events: 0 })
  })

  it("deletes a statement's tasks' history and events by looking their ids up, never by reading the whole tables", async () => {
    const schema = freshSchema()
    const store = open({ schema })
    // Tasks with events, their tables never analyzed (as in a schema's first minutes): the planner knows nothing of
    // how many rows a task has, nor how many tasks a statement deletes.
    const tasks = Array.from({ length: 300 }, () => newTask({ state: 'working', messages: 2 }))
    await Promise.all(tasks.map((task) => store.create(task)))
    await Promise.all(
      tasks.map((task) => {
        task.status = { state: 'completed', timestamp: new Date(++clock).toISOString() }
        return store.append(task, ended(task, 1))
      }),
    )
    const q = `"${schema}"`
    const deleting = new pg.Client(url)
    await deleting.connect()
    try {
      await deleting.query('BEGIN')
      const gone = await deleting.query(
        `DELETE FROM ${q}.a2a_tasks WHERE id IN (SELECT id FROM ${q}.a2a_tasks LIMIT 200)`,
      )
      expect(gone.rowCount).toBe(200)
      const { rows } = await deleting.query(
        `SELECT relname, seq_scan::int FROM pg_stat_xact_user_tables WHERE schemaname = $1 AND relname IN ('a2a_history', 'a2a_events') ORDER BY relname`,
        [schema],
      )
      expect(rows).toEqual([
        { relname: 'a2a_events', seq_scan: 0 },
        { relname: 'a2a_history', seq_scan: 0 },
      ])
      await deleting.query('COMMIT')
    } finally {
      await deleting.end()
    }
    expect(await orphans(schema)).toEqual({ history: 0, events: 0 })
    expect((await store.list({ limit: 1 })).total).toBe(100)
  })

  it('leaves no event behind when a write of the task holds its row as a statement deletes it', async () => {
    const schema = freshSchema()
    const store = open({ schema })
    const task = newTask({ state: 'completed' })
    await store.create(task)
    // A write of the task's events as a2a_append makes it: the task's row locked first, then its rows inserted.
    const writer = new pg.Client(url)
    await writer.connect()
    try {
      await writer.query('BEGIN')
      await writer.query(`SELECT 1 FROM "${schema}".a2a_tasks WHERE id = $1 FOR UPDATE`, [task.id])
      await writer.query(`INSERT INTO "${schema}".a2a_events (task_id, seq, event, bytes) VALUES ($1, 7, '{}', 2)`, [
        task.id,
      ])
      // As every version's retention deletes tasks: one statement.
      const sweeping = client.query(`DELETE FROM "${schema}".a2a_tasks WHERE settled /* retention */ RETURNING 1`)
      // The delete waits for the row; the write's rows are committed while it does. (Polled for long: on a loaded
      // machine the delete's session may take seconds to reach the wait.)
      await expect
        .poll(
          async () => {
            const { rows } = await writer.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%/* retention */%'`,
            )
            return rows[0].n
          },
          { timeout: 30_000, interval: 50 },
        )
        .toBe(1)
      await writer.query('COMMIT')
      expect((await sweeping).rowCount).toBe(1)
    } finally {
      await writer.end()
    }
    expect(await orphans(schema)).toEqual({ history: 0, events: 0 })
  })
})

describe('push configs sealed at rest', () => {
  it("keeps a webhook's URL and token out of the table with A2A_PUSH_CONFIG_KEY, and reads them back", async () => {
    const key = Buffer.alloc(32, 7).toString('base64')
    const schema = freshSchema()
    const store = open({ schema, env: { A2A_PUSH_CONFIG_KEY: key } })
    const task = newTask()
    await store.create(task)
    const config = {
      taskId: task.id,
      id: 'hook',
      url: 'https://hooks.example/secret-path',
      token: 'secret-token',
      dialect: 'a2a-1.0' as const,
    }
    await store.pushConfigs.save(config)
    const { rows } = await client.query(`SELECT config FROM "${schema}".a2a_push_configs`)
    expect(rows[0].config).toMatch(/^sealed:v1:/)
    expect(rows[0].config).not.toContain('secret')
    expect(await store.pushConfigs.list(task.id)).toEqual([config])
    await expect(store.pushConfigs.save({ ...config, taskId: randomUUID() })).rejects.toThrow(/not found/i)
    expect(await store.pushConfigs.delete(task.id, 'hook')).toBe(true)
    expect(await store.pushConfigs.list(task.id)).toEqual([])
  })
})

describe('options', () => {
  it('refuses a schema name that is not an identifier, and a bad number, naming the option', () => {
    expect(() => createPostgresStore({ url, schema: 'a-b' })).toThrow(/schema must be letters, digits and _/)
    expect(() => createPostgresStore({ url, schema: 'pg_catalog' })).toThrow(ConfigurationError)
    expect(() => createPostgresStore({ url, poolSize: 0 })).toThrow(/poolSize must be a positive integer/)
  })
})

describe('A2A_STORE=postgres://…', () => {
  it('reads schema, leaseMs, ttlMs, maxTasks, poolSize, timeoutMs and migrate from the query, and passes the rest to the client', async () => {
    const schema = freshSchema()
    const setting = `${url.replace('postgres://', 'postgresql://')}?schema=${schema}&leaseMs=1234&ttlMs=99000&maxTasks=77&poolSize=3&timeoutMs=2500&application_name=setting-${schema}`
    const store = storeFromSetting(setting, { env: {} }) as PostgresTaskStore
    stores.push(store)
    expect([store.schema, store.leaseMs, store.ttlMs, store.maxTasks]).toEqual([schema, 1234, 99000, 77])
    await store.create(newTask())
    const { rows } = await client.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [
      `setting-${schema}`,
    ])
    expect(rows[0].n).toBeGreaterThan(0)
  })

  it('names a bad value', () => {
    expect(() => storeFromSetting(`${url}?leaseMs=soon`)).toThrow(
      'A2A_STORE: leaseMs must be a positive integer (got "soon")',
    )
    expect(() => storeFromSetting(`${url}?migrate=maybe`)).toThrow(
      'A2A_STORE: migrate must be true or false (got "maybe")',
    )
    expect(() => storeFromSetting(`${url}?schema=no-dashes`)).toThrow(/schema must be letters, digits and _/)
    expect(() => storeFromSetting('postgres://[')).toThrow(/is not a valid postgres:\/\/ URL/)
  })
})
