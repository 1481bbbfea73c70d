import type { Command } from 'commander'
import { envValue } from '../../settings.js'
import { loadDotEnv } from '../_env.js'

interface MigrateFlags {
  store?: string
}

/** The schema a PostgreSQL store uses when its URL names none (the store's own default). */
const DEFAULT_SCHEMA = 'a2a'
/**
 * The query keys of an `A2A_STORE=postgres://…` URL that are the store's options, not the connection's: taken off
 * before the URL reaches the driver (the others, `sslmode`, `application_name`…, are libpq's and stay).
 */
const STORE_OPTIONS = ['schema', 'leaseMs', 'ttlMs', 'maxTasks', 'poolSize', 'timeoutMs', 'migrate', 'eventLogBytes']

/**
 * `a2a store migrate`: applies the PostgreSQL store's pending schema migrations, for those who run migrations apart
 * from the agents (which otherwise apply them at start). Exit 0 once the schema is current, 1 when the database
 * cannot be reached or refuses, 2 when the store is not PostgreSQL (the other stores have no schema).
 */
export function registerStore(program: Command): void {
  const store = program.command('store').description('Manage the store the agent keeps its tasks in')
  store
    .command('migrate')
    .description("Apply the PostgreSQL store's pending schema migrations (agents apply them at start otherwise)")
    .option('--store <url>', 'the store: a postgres:// URL (default: A2A_STORE, read from .env as a2a start does)')
    .action(async (flags: MigrateFlags) => {
      process.exitCode = await migrate(flags.store, process.cwd())
    })
}

/** Migrates the store and says what it did in one line; answers the exit status. */
async function migrate(given: string | undefined, cwd: string): Promise<number> {
  // As `a2a start` reads its settings: the environment over the project's .env (PGPASSWORD included).
  loadDotEnv(cwd)
  const source = given === undefined ? 'A2A_STORE' : '--store'
  const setting = (given ?? envValue(process.env, 'A2A_STORE') ?? 'memory').trim()
  if (!/^postgres(ql)?:\/\//i.test(setting)) {
    console.error(`a2a: only the PostgreSQL store (postgres://…) has migrations; ${source} names ${storeKind(setting)}`)
    return 2
  }
  let url: URL
  try {
    url = new URL(setting)
  } catch {
    // The URL may hold a password: it is not repeated.
    console.error(`a2a: ${source} is not a valid postgres:// URL`)
    return 2
  }
  const schema = url.searchParams.get('schema') ?? DEFAULT_SCHEMA
  for (const key of STORE_OPTIONS) url.searchParams.delete(key)
  try {
    // Loaded here, not with the command: only a migration needs the store (and it loads `pg` itself).
    const { migratePostgresStore } = await import('../../entries/postgres-store.js')
    const { from, to } = await migratePostgresStore({ url: url.href, schema })
    console.log(
      from === to ? `Schema ${schema}: already at version ${to}` : `Schema ${schema}: version ${from} → ${to}`,
    )
    return 0
  } catch (error) {
    // The store's errors say what happened in one line (unreachable, refused, a newer schema): that line alone.
    const message = error instanceof Error ? error.message : String(error)
    console.error(`a2a: could not migrate schema ${schema}: ${message.split('\n')[0]}`)
    return 1
  }
}

/** What kind of store a setting names, without repeating it (a Redis URL may hold a password). */
function storeKind(setting: string): string {
  if (setting === '' || setting === 'memory') return 'the memory store'
  if (setting.startsWith('file:')) return 'the file store'
  if (/^rediss?:\/\//i.test(setting)) return 'a Redis store'
  return JSON.stringify(setting.split(':')[0]!.slice(0, 20))
}
