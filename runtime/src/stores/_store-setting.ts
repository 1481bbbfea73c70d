import { isAbsolute, resolve } from 'node:path'
import { ConfigurationError } from '../errors.js'
import type { Logger } from '../logger.js'
import { type Env, processEnv } from '../settings.js'
import type { FileStoreOptions } from './file/store.js'
import type { PostgresStoreOptions } from './postgres/store.js'
import type { RedisStoreOptions } from './redis/store.js'

const STORE_SETTING_FORMS =
  '"memory", "file:<directory>", "redis://host:port/db" or "postgres://user@host:port/database"'

/** Where `A2A_STORE` reads its paths from and what the store it names is given. */
export interface StoreSettingOptions {
  cwd?: string
  logger?: Pick<Logger, 'warn' | 'error'>
  env?: Env
  /** A PostgreSQL store keeps the events of tasks that end as they are created (`a2a dev`: its timeline). */
  keepInstantLogs?: boolean
}

/**
 * The store one setting names and the options it is made with, read and checked without loading any store's module:
 * only the store a setting names is loaded (a start on the memory store reads none of the others).
 */
export type StoreSetting =
  | { kind: 'memory'; env: Env }
  | { kind: 'file'; options: FileStoreOptions }
  | { kind: 'redis'; options: RedisStoreOptions }
  | { kind: 'postgres'; options: PostgresStoreOptions }

/**
 * Reads one setting (`A2A_STORE`): `memory` (the default), `file:<directory>` for the durable embedded store (a
 * relative directory is taken from `cwd`), or `redis://…` or `postgres://…` (`postgresql://…`) for several instances.
 * A malformed setting throws a `ConfigurationError` naming it.
 */
export function readStoreSetting(setting: string, options: StoreSettingOptions = {}): StoreSetting {
  const value = setting.trim()
  const env = options.env ?? processEnv()
  const logger = options.logger
  if (value === '' || value === 'memory') return { kind: 'memory', env }
  if (value.startsWith('file:')) {
    const dir = value.slice('file:'.length)
    if (!dir) throw new ConfigurationError(`A2A_STORE: "file:" needs a directory, e.g. file:./.a2a`)
    return {
      kind: 'file',
      options: {
        dir: isAbsolute(dir) ? dir : resolve(options.cwd ?? process.cwd(), dir),
        env,
        ...(logger && { logger }),
      },
    }
  }
  if (value.startsWith('redis://') || value.startsWith('rediss://'))
    return { kind: 'redis', options: redisOptions(value, logger, env) }
  if (value.startsWith('postgres://') || value.startsWith('postgresql://'))
    return {
      kind: 'postgres',
      options: { ...postgresOptions(value, logger, env), ...(options.keepInstantLogs && { keepInstantLogs: true }) },
    }
  throw new ConfigurationError(`A2A_STORE must be ${STORE_SETTING_FORMS} (got ${JSON.stringify(value.slice(0, 80))})`)
}

/** The setting as a URL, or a ConfigurationError naming the form it should have. */
function storeUrl(value: string, scheme: 'redis' | 'postgres'): URL {
  try {
    return new URL(value)
  } catch {
    throw new ConfigurationError(`A2A_STORE: ${JSON.stringify(value.slice(0, 80))} is not a valid ${scheme}:// URL`)
  }
}

/** `redis://host:port/db?prefix=…&leaseMs=…&ttlMs=…&maxTasks=…&cluster=true`: the query sets the store's options. */
function redisOptions(value: string, logger: StoreSettingOptions['logger'], env: Env): RedisStoreOptions {
  const url = storeUrl(value, 'redis')
  const numbers: Record<string, number> = {}
  let prefix: string | undefined
  let cluster = false
  for (const [key, raw] of url.searchParams) {
    if (key === 'prefix') prefix = raw
    else if (key === 'cluster') {
      if (raw !== 'true' && raw !== 'false')
        throw new ConfigurationError(`A2A_STORE: cluster must be true or false (got ${JSON.stringify(raw)})`)
      cluster = raw === 'true'
    } else if (key === 'leaseMs' || key === 'ttlMs' || key === 'maxTasks') {
      const number = Number(raw)
      if (!Number.isInteger(number) || number <= 0)
        throw new ConfigurationError(`A2A_STORE: ${key} must be a positive integer (got ${JSON.stringify(raw)})`)
      numbers[key] = number
    } else
      throw new ConfigurationError(
        `A2A_STORE: unknown option ${JSON.stringify(key)} (prefix, leaseMs, ttlMs, maxTasks, cluster)`,
      )
  }
  url.search = ''
  return {
    url: url.href,
    env,
    ...numbers,
    ...(prefix !== undefined && { prefix }),
    ...(cluster && { cluster }),
    ...(logger && { logger }),
  }
}

/** The query options the PostgreSQL store takes from its URL; any other key is libpq's, passed on to the client. */
const POSTGRES_NUMBERS = ['leaseMs', 'ttlMs', 'maxTasks', 'poolSize', 'timeoutMs'] as const

/**
 * `postgres://user:password@host:port/database?schema=…&leaseMs=…&ttlMs=…&maxTasks=…&poolSize=…&timeoutMs=…&migrate=false`:
 * those keys set the store's options; others (`sslmode`, `application_name`…) stay in the URL for the client.
 */
function postgresOptions(value: string, logger: StoreSettingOptions['logger'], env: Env): PostgresStoreOptions {
  const url = storeUrl(value, 'postgres')
  const numbers: Partial<Record<(typeof POSTGRES_NUMBERS)[number], number>> = {}
  let schema: string | undefined
  let migrate = true
  for (const [key, raw] of [...url.searchParams]) {
    if (key === 'schema') schema = raw
    else if (key === 'migrate') {
      if (raw !== 'true' && raw !== 'false')
        throw new ConfigurationError(`A2A_STORE: migrate must be true or false (got ${JSON.stringify(raw)})`)
      migrate = raw === 'true'
    } else if ((POSTGRES_NUMBERS as readonly string[]).includes(key)) {
      const number = Number(raw)
      if (!Number.isSafeInteger(number) || number <= 0)
        throw new ConfigurationError(`A2A_STORE: ${key} must be a positive integer (got ${JSON.stringify(raw)})`)
      numbers[key as (typeof POSTGRES_NUMBERS)[number]] = number
    } else continue
    url.searchParams.delete(key)
  }
  // The schema's name is checked by the store (one rule for the option and the setting).
  return {
    url: url.href,
    env,
    ...numbers,
    ...(schema !== undefined && { schema }),
    ...(!migrate && { migrate }),
    ...(logger && { logger }),
  }
}
