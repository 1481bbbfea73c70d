import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { freePort, makeAgentProject, runA2a } from '../_support.ts'

/**
 * `a2a store migrate` as a process: it applies the PostgreSQL store's migrations to the schema `A2A_STORE` (or
 * `--store`) names and says from which version to which, once; on a store that has no schema, or a database it
 * cannot reach, it says so in one line and exits 2 or 1.
 */

const running = new Set<ChildProcess>()
const ECHO_AGENT = `import { defineAgent } from 'a2a-runtime'
export default defineAgent({
  card: {
    name: 'Echo',
    description: 'Says hello',
    skills: [{ id: 'hello', name: 'Hello', description: 'Says hello', tags: ['hello'], examples: ['Hi'] }],
  },
  execute(_ctx, task) {
    task.artifact('Hello')
    task.complete()
  },
})
`
let dir: string
let database: pg.Client

/** An environment with none of the caller's store settings (the test's own shell may have some). */
const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const { A2A_STORE: _store, PGPASSWORD: _password, ...rest } = process.env
  return { ...rest, ...extra }
}
const migrate = (args: string[] = [], extra: Record<string, string> = {}) =>
  runA2a(['store', 'migrate', ...args], { cwd: dir, env: env(extra), running })
const newSchema = () => `migrate_${Math.random().toString(36).slice(2, 10)}`

function postgresUrl(): string {
  const url = inject('postgresUrl')
  if (!url) throw new Error('PostgreSQL is not installed (Debian: apt-get install postgresql; .ci/run installs it)')
  return url
}

/** The versions the schema's migrations table holds. */
async function versions(schema: string): Promise<number[]> {
  const { rows } = await database.query(`SELECT version FROM "${schema}".a2a_migrations ORDER BY version`)
  return rows.map((row: { version: number }) => row.version)
}

beforeAll(async () => {
  database = new pg.Client({ connectionString: postgresUrl() })
  await database.connect()
})

afterAll(async () => {
  await database?.end()
})

afterEach(() => {
  for (const child of running) process.kill(child.pid!, 'SIGKILL')
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('a2a store migrate', () => {
  it('migrates the schema --store names from version 0, then finds it current', async () => {
    dir = mkdtempSync(join(tmpdir(), 'a2a-migrate-'))
    const schema = newSchema()
    // The URL as A2A_STORE holds it: the store's own options beside libpq's (sslmode), which go to the driver.
    const store = `${postgresUrl()}?schema=${schema}&leaseMs=5000&sslmode=disable`
    const first = await migrate(['--store', store])
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    const applied = await versions(schema)
    const current = applied.at(-1)!
    expect(applied).toEqual(Array.from({ length: current }, (_, at) => at + 1))
    expect(first.stdout).toBe(`Schema ${schema}: version 0 → ${current}\n`)

    const again = await migrate(['--store', store])
    expect(again).toMatchObject({ code: 0, stdout: `Schema ${schema}: already at version ${current}\n`, stderr: '' })
    expect(await versions(schema)).toEqual(applied)
  })

  it('reads A2A_STORE from the project .env as a2a start does, the environment winning over it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'a2a-migrate-'))
    const fromFile = newSchema()
    const fromEnv = newSchema()
    writeFileSync(join(dir, '.env'), `A2A_STORE=${postgresUrl()}?schema=${fromFile}\n`)
    const result = await migrate()
    expect(result.stderr).toBe('')
    expect(result.stdout).toMatch(new RegExp(`^Schema ${fromFile}: version 0 → \\d+\\n$`))
    const overridden = await migrate([], { A2A_STORE: `${postgresUrl()}?schema=${fromEnv}` })
    expect(overridden.stdout).toMatch(new RegExp(`^Schema ${fromEnv}: version 0 → \\d+\\n$`))
  })

  it('migrates the schema a2a when the URL names none', async () => {
    dir = mkdtempSync(join(tmpdir(), 'a2a-migrate-'))
    // A database of its own: the run's other files keep apart by schema, and may use a2a's.
    const name = newSchema()
    await database.query(`CREATE DATABASE ${name}`)
    const url = new URL(postgresUrl())
    url.pathname = `/${name}`
    const other = new pg.Client({ connectionString: url.href })
    try {
      const result = await migrate(['--store', url.href])
      expect(result.stderr).toBe('')
      expect(result.code).toBe(0)
      expect(result.stdout).toMatch(/^Schema a2a: version 0 → \d+\n$/)
      await other.connect()
      const { rows } = await other.query('SELECT count(*)::int AS n FROM a2a.a2a_migrations')
      expect(rows[0].n).toBeGreaterThan(0)
    } finally {
      await other.end().catch(() => {})
      await database.query(`DROP DATABASE ${name} WITH (FORCE)`)
    }
  })

  it('refuses a schema newer than the runtime knows in one line, exit 1, and leaves it as it is', async () => {
    dir = mkdtempSync(join(tmpdir(), 'a2a-migrate-'))
    const schema = newSchema()
    const store = `${postgresUrl()}?schema=${schema}`
    expect((await migrate(['--store', store])).code).toBe(0)
    await database.query(`INSERT INTO "${schema}".a2a_migrations (version, applied_at) VALUES (9999, now())`)
    const result = await migrate(['--store', store])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(new RegExp(`^a2a: could not migrate schema ${schema}: .+\\n$`))
    expect((await versions(schema)).at(-1)).toBe(9999)
  })

  it('a2a start on a schema left for a2a store migrate (migrate=false) stops before it listens, in one line naming the command', async () => {
    dir = makeAgentProject('a2a-migrate-start-', ECHO_AGENT)
    const schema = newSchema()
    const port = String(await freePort())
    const store = `${postgresUrl()}?schema=${schema}&migrate=false`
    const refused = await runA2a(['start'], { cwd: dir, env: env({ A2A_STORE: store, PORT: port }), running })
    expect(refused.code, refused.stderr).toBe(1)
    expect(refused.stderr.trim().split('\n')).toHaveLength(1)
    expect(refused.stderr).toMatch(/a2a store migrate/)
    expect(refused.stderr).not.toMatch(/\n\s+at /)
    // Once migrated, the same start serves.
    expect((await migrate(['--store', store])).code).toBe(0)
    const started = runA2a(['start'], { cwd: dir, env: env({ A2A_STORE: store, PORT: port }), running })
    await expect
      .poll(
        async () => (await fetch(`http://127.0.0.1:${port}/.well-known/agent.json`).catch(() => undefined))?.status,
        {
          timeout: 15_000,
        },
      )
      .toBe(200)
    for (const child of running) process.kill(child.pid!, 'SIGTERM')
    await started
  })

  it('says in one line, exit 1, that a database it cannot reach could not be migrated', async () => {
    dir = mkdtempSync(join(tmpdir(), 'a2a-migrate-'))
    const port = await freePort()
    const result = await migrate(['--store', `postgres://postgres:hunter2secret@127.0.0.1:${port}/postgres`])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(/^a2a: could not migrate schema a2a: .*PostgreSQL.*\n$/)
    expect(result.stderr).not.toContain('hunter2secret')
  })

  it('exits 2 saying only PostgreSQL has migrations for any other store, naming no secret', async () => {
    dir = mkdtempSync(join(tmpdir(), 'a2a-migrate-'))
    const none = await migrate()
    expect(none).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'a2a: only the PostgreSQL store (postgres://…) has migrations; A2A_STORE names the memory store\n',
    })
    const redis = await migrate(['--store', 'redis://:hunter2secret@127.0.0.1:6379/0'])
    expect(redis).toMatchObject({
      code: 2,
      stderr: 'a2a: only the PostgreSQL store (postgres://…) has migrations; --store names a Redis store\n',
    })
    const file = await migrate([], { A2A_STORE: 'file:./.a2a' })
    expect(file.stderr).toBe(
      'a2a: only the PostgreSQL store (postgres://…) has migrations; A2A_STORE names the file store\n',
    )
    expect(file.code).toBe(2)
  })
})
