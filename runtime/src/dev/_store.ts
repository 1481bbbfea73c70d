import type { Logger } from '../logger.js'
import { type Env, envValue } from '../settings.js'
import { storeFromSetting } from '../stores/from-setting.js'
import type { TaskStore } from '../stores/task-store.js'

/** Query keys that may carry a secret (libpq takes `password` in the query too): never printed. */
const SECRET_KEYS = ['password', 'sslpassword']

/** The store `a2a dev` keeps tasks in, and the banner's words for it. */
export interface DevStore {
  store: TaskStore
  /** Where the tasks are, for the banner: `memory`, the file setting, or the URL without its password. */
  where: string
  /** Whether the tasks outlive the dev server (any store but memory). */
  durable: boolean
}

/**
 * The store `A2A_STORE` names, read as `a2a start` reads it (the environment over the project's .env, already
 * applied to `env`): memory when unset. A bad value throws the store's one-line `ConfigurationError`.
 */
export function openDevStore(env: Env, cwd: string, logger: Pick<Logger, 'warn' | 'error'>): DevStore {
  const setting = (envValue(env, 'A2A_STORE') ?? '').trim()
  // The inspector's timeline replays a task from its first event, also one its agent answered at once.
  const store = storeFromSetting(setting, { cwd, logger, env, keepInstantLogs: true })
  const memory = setting === '' || setting === 'memory'
  return { store, where: memory ? 'memory' : shownSetting(setting), durable: !memory }
}

/** The banner line saying where tasks are kept. */
export function storeBanner({ where, durable }: DevStore): string {
  return durable
    ? `Tasks kept in ${where} (A2A_STORE)`
    : 'Tasks kept in memory: they go when a2a dev stops (A2A_STORE=file:./.a2a keeps them across restarts)'
}

/**
 * A setting as it may be printed: a URL without its password (in the user part or the query), anything else as
 * it is. A URL that does not parse is named by its scheme alone (what follows may hold a password).
 */
function shownSetting(setting: string): string {
  if (setting.startsWith('file:')) return setting
  let url: URL
  try {
    url = new URL(setting)
  } catch {
    return `${setting.split(':')[0]!.slice(0, 20)}://…`
  }
  url.password = ''
  for (const key of SECRET_KEYS) url.searchParams.delete(key)
  return url.href
}
