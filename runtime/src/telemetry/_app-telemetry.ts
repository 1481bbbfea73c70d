import { ConfigurationError } from '../errors.js'
import type { Logger } from '../logger.js'
import { choiceSetting, type Env } from '../settings.js'
import { guardedInstrumentation, INSTRUMENTATION_FAILED, reportOnce } from './_guarded.js'
import type { Instrumentation } from './_hooks.js'
import { sendLogRecords } from './_logs.js'
import { type LogsApiModule, otelLogRecords } from './_logs-otel.js'
import { type Api, DEFAULT_MAX_LINKED_TASKS, otelInstrumentation } from './_otel.js'
import { instrumentationOf, type Telemetry } from './telemetry.js'

/**
 * The app's instrumentation: the `telemetry` option, else `A2A_TELEMETRY`. The variable is how `a2a dev` and
 * `a2a start`, which make the app from the project's agent module, are told to trace: `otel` loads
 * `@opentelemetry/api` where the app is made (synchronously, through Node's `require`, so `createA2AApp` stays
 * synchronous and no bundler meets the optional package), and records through whatever SDK the process registered.
 * Either way the runtime's log lines become log records when `@opentelemetry/api-logs` is there too.
 */
export function readTelemetry(option: Telemetry | undefined, env: Env, logger?: Logger): Instrumentation | undefined {
  const chosen = chosenInstrumentation(option, env)
  if (!chosen) return undefined
  // Guarded: an SDK that throws is logged (once) and never fails what it records.
  const report = reportOnce((error) => (logger ?? console).warn(INSTRUMENTATION_FAILED, error))
  const instrumentation = guardedInstrumentation(chosen, report)
  withLogRecords(instrumentation)
  return instrumentation
}

function chosenInstrumentation(option: Telemetry | undefined, env: Env): Instrumentation | undefined {
  if (option !== undefined) {
    const instrumentation = typeof option === 'object' && option !== null ? instrumentationOf(option) : undefined
    if (!instrumentation)
      throw new ConfigurationError('telemetry must be what otelTelemetry() of a2a-runtime/telemetry returns')
    return instrumentation
  }
  if (choiceSetting(undefined, 'telemetry', env, 'A2A_TELEMETRY', ['otel', 'off']) !== 'otel') return undefined
  return otelInstrumentation(loadApi(), { captureContent: false, maxLinkedTasks: DEFAULT_MAX_LINKED_TASKS })
}

/**
 * The runtime's log lines as OpenTelemetry log records too, when `@opentelemetry/api-logs` (an optional peer, which
 * an SDK's logs bring) is installed: loaded as the API is, here where the app is made. Without it, no records.
 */
function withLogRecords(instrumentation: Instrumentation): void {
  const load = nodeRequire()
  if (!load) return
  try {
    sendLogRecords(instrumentation, otelLogRecords(load(LOGS_PEER) as LogsApiModule))
  } catch (error) {
    if (!notInstalled(error)) throw error
  }
}

const PEER = '@opentelemetry/api'
const LOGS_PEER = '@opentelemetry/api-logs'

/** Node's `require`, from here (where the runtime is installed); undefined on a runtime without it (Workers). */
function nodeRequire(): NodeJS.Require | undefined {
  const nodeModule = (
    globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
  ).process?.getBuiltinModule?.('node:module') as typeof import('node:module') | undefined
  return nodeModule?.createRequire(import.meta.url)
}

const notInstalled = (error: unknown): boolean => {
  const { code } = error as { code?: string }
  return code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND'
}

function loadApi(): Api {
  const load = nodeRequire()
  if (!load)
    throw new ConfigurationError(
      'telemetry (A2A_TELEMETRY): "otel" loads @opentelemetry/api, which needs Node.js; here pass the option telemetry: otelTelemetry() (a2a-runtime/telemetry)',
    )
  try {
    return load(PEER) as Api
  } catch (error) {
    if (notInstalled(error))
      throw new ConfigurationError(
        `telemetry (A2A_TELEMETRY): "otel" needs the package ${PEER}, which is not installed: run \`npm install ${PEER}\` in the project (with an OpenTelemetry SDK that exports what it records)`,
      )
    throw error
  }
}
