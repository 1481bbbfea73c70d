import { DEFAULT_MAX_RUNNING_TASKS } from '../core/_engine.js'
import { readTaskByteLimits, type TaskByteLimits } from '../core/_task-bytes.js'
import { ConfigurationError } from '../errors.js'
import { choiceSetting, type Env, wholeNumberSetting } from '../settings.js'
import { DEFAULT_MAX_BODY_SIZE } from './_body.js'
import { type BodyBudget, readBodyBudget } from './_body-budget.js'
import type { SlashDialect } from './_dialect-router.js'
import { type OutgoingLimits, readOutgoingLimits } from './_outgoing.js'
import type { A2AAppOptions } from './app-options.js'

const DEFAULT_MAX_STREAMS = 10_000
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000

/** The app's settings, read and checked before anything is made: a bad one stops `createA2AApp` naming itself. */
export interface AppSettings {
  maxBodySize: number
  bodyBudget: BodyBudget
  maxRunningTasks: number
  taskBytes: TaskByteLimits
  dialect: SlashDialect
  heartbeatMs: number
  maxStreams: number
  outgoing: OutgoingLimits
  eventIds: boolean
  shutdownTimeoutMs: number
  publicUrl: string | undefined
}

export function readAppSettings(options: A2AAppOptions, env: Env): AppSettings {
  const maxBodySize = options.maxBodySize ?? DEFAULT_MAX_BODY_SIZE
  if (!Number.isInteger(maxBodySize) || maxBodySize <= 0)
    throw new ConfigurationError(`maxBodySize must be a positive integer (got ${maxBodySize})`)
  const { publicUrl } = options
  if (publicUrl && (!URL.canParse(publicUrl) || !/^https?:$/.test(new URL(publicUrl).protocol)))
    throw new ConfigurationError(
      `publicUrl (A2A_PUBLIC_URL) must be an absolute http(s) URL (got ${JSON.stringify(publicUrl)})`,
    )
  const maxRunningTasks = options.maxRunningTasks ?? DEFAULT_MAX_RUNNING_TASKS
  if (!Number.isInteger(maxRunningTasks) || maxRunningTasks <= 0)
    throw new ConfigurationError(`maxRunningTasks must be a positive integer (got ${maxRunningTasks})`)
  const maxStreams = options.maxStreams ?? DEFAULT_MAX_STREAMS
  if (!Number.isInteger(maxStreams) || maxStreams <= 0)
    throw new ConfigurationError(`maxStreams must be a positive integer (got ${maxStreams})`)
  return {
    maxBodySize,
    bodyBudget: readBodyBudget(options.maxBodyBytesInFlight, maxBodySize, env),
    maxRunningTasks,
    taskBytes: readTaskByteLimits(options, env),
    dialect:
      choiceSetting<SlashDialect>(options.dialect, 'dialect', env, 'A2A_DIALECT', ['platform', 'a2a-0.3']) ??
      'platform',
    heartbeatMs: wholeNumberSetting({
      option: 'sseHeartbeatMs',
      variable: 'A2A_SSE_HEARTBEAT_MS',
      given: options.sseHeartbeatMs,
      env,
      fallback: 0,
      min: 0,
      unit: 'ms',
      note: '0: none',
    }),
    maxStreams,
    outgoing: readOutgoingLimits(options, env),
    eventIds: options.eventIds ?? false,
    shutdownTimeoutMs: readShutdownTimeoutMs(options.shutdownTimeoutMs, env),
    publicUrl,
  }
}

/**
 * How long a shutdown lets running tasks finish: the option, else `A2A_SHUTDOWN_TIMEOUT_MS`, else 10 s. A platform
 * that kills soon after SIGTERM (Cloud Run: 10 s) needs it below its kill, so the tasks still running are failed
 * in the store before the process dies rather than left `working` in a shared one.
 */
export function readShutdownTimeoutMs(given: number | undefined, env: Env): number {
  return wholeNumberSetting({
    option: 'shutdownTimeoutMs',
    variable: 'A2A_SHUTDOWN_TIMEOUT_MS',
    given,
    env,
    fallback: DEFAULT_SHUTDOWN_TIMEOUT_MS,
    min: 0,
    // A timer's longest wait: past it Node fires at once.
    max: 2 ** 31 - 1,
    unit: 'ms',
  })
}
