import { isAbsolute, resolve } from 'node:path'
import { ConfigurationError } from '../errors.js'
import type { Logger } from '../logger.js'
import { type Env, processEnv } from '../settings.js'
import { createFileStore } from './file/store.js'
import { createMemoryStore } from './memory.js'
import { createPostgresStore } from './postgres/store.js'
import { createRedisStore } from './redis/store.js'
import type { TaskStore } from './task-store.js'

const STORE_SETTING_FORMS =
  '"memory", "file:<directory>", "redis://host:port/db" or "postgres://user@host:port/database"'

/**
 * The store one setting names (`A2A_STORE`): `memory` (the default), `file:<directory>` for the durable
 * embedded store (a relative directory is taken from `cwd`), or `redis://…` or `postgres://…` (`postgresql://…`)
 * for several instances.
 */
export function storeFromSetting(
  setting: string,
  options: { cwd?: string; logger?: Pick<Logger, 'warn' | 'error'>; env?: Env } = {},
): TaskStore {
  const value = setting.trim()
  const env = options.env ?? processEnv()
  if (value === '' || value === 'memory') return createMemoryStore({ env })
  if (value.startsWith('file:')) {
    const dir = value.slice('file:'.length)
    if (!dir) throw new ConfigurationError(`A2A_STORE: "file:" needs a directory, e.g. file:./.a2a`)
    return createFileStore({
      dir: isAbsolute(dir) ? dir : resolve(options.cwd ?? process.cwd(), dir),
      env,
      ...(options.logger && { logger: options.logger }),
    })
  }
  if (value.startsWith('redis://') || value.startsWith('rediss://')) return redisFromUrl(value, options.logger, env)
  if (value.startsWith('postgres://') || value.startsWith('postgresql://'))
    return postgresFromUrl(value, options.logger, env)
  throw new ConfigurationError(`A2A_STORE must be ${STORE_SETTING_FORMS} (got ${JSON.stringify(value.slice(0, 80))})`)
}

/** `redis://host:port/db?prefix=…&leaseMs=…&ttlMs=…&maxTasks=…&cluster=true`: the query sets the store's options. */
function redisFromUrl(value: string, logger: Pick<Logger, 'warn' | 'error'> | undefined, env: Env): TaskStore {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new ConfigurationError(`A2A_STORE: ${JSON.stringify(value.slice(0, 80))} is not a valid redis:// URL`)
  }
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
  return createRedisStore({
    url: url.href,
    env,
    ...numbers,
    ...(prefix !== undefined && { prefix }),
    ...(cluster && { cluster }),
    ...(logger && { logger }),
  })
}

/** The query options the PostgreSQL store takes from its URL; any other key is libpq's, passed on to the client. */
const POSTGRES_NUMBERS = ['leaseMs', 'ttlMs', 'maxTasks', 'poolSize', 'timeoutMs'] as const

/**
 * `postgres://user:password@host:port/database?schema=…&leaseMs=…&ttlMs=…&maxTasks=…&poolSize=…&timeoutMs=…&migrate=false`:
 * those keys set the store's options; others (`sslmode`, `application_name`…) stay in the URL for the client.
 */
function postgresFromUrl(value: string, logger: Pick<Logger, 'warn' | 'error'> | undefined, env: Env): TaskStore {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new ConfigurationError(`A2A_STORE: ${JSON.stringify(value.slice(0, 80))} is not a valid postgres:// URL`)
  }
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
  return createPostgresStore({
    url: url.href,
    env,
    ...numbers,
    ...(schema !== undefined && { schema }),
    ...(!migrate && { migrate }),
    ...(logger && { logger }),
  })
}
