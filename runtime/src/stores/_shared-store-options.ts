import type { Logger } from '../logger.js'
import type { Env } from '../settings.js'

/** What the stores shared by several instances (Redis, PostgreSQL) keep of the tasks, and where they report. */
export interface SharedStoreOptions {
  /**
   * Most tasks kept; past it the oldest settled ones go.
   * @default 10_000
   */
  maxTasks?: number
  /**
   * How long a settled task is kept after its last change, in ms.
   * @default 3_600_000 (one hour)
   */
  ttlMs?: number
  /**
   * Most bytes of one task's event log kept for clients that resume a broken stream with `Last-Event-ID` (its
   * newest events); a resume from before them is told to get the task.
   * @default A2A_EVENT_LOG_BYTES, else 1_048_576 (1 MiB)
   */
  eventLogBytes?: number
  /**
   * Where the store reports tasks failed because their instance stopped, and checks for them that failed.
   * @default undefined (silent)
   */
  logger?: Pick<Logger, 'warn' | 'error'>
  /**
   * Where `A2A_EVENT_LOG_BYTES` and `A2A_PUSH_CONFIG_KEY` are read from when `eventLogBytes` and `pushConfigKey`
   * are not given: the process's environment, none where there is no `process`.
   * @default process.env
   */
  env?: Env
  /**
   * The key push configs (webhook URLs, tokens, credentials) are sealed with in the store (AES-256-GCM): the
   * base64 of 32 bytes (`openssl rand -base64 32`), or the bytes. Configs stored in plain before it was set stay
   * readable.
   * @default A2A_PUSH_CONFIG_KEY, else none (stored as JSON)
   */
  pushConfigKey?: string | Uint8Array
}
