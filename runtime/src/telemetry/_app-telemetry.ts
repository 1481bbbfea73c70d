import { ConfigurationError } from '../errors.js'
import { choiceSetting, type Env } from '../settings.js'
import type { Instrumentation } from './_hooks.js'
import { type Api, DEFAULT_MAX_LINKED_TASKS, otelInstrumentation } from './_otel.js'
import { instrumentationOf, type Telemetry } from './telemetry.js'

/**
 * The app's instrumentation: the `telemetry` option, else `A2A_TELEMETRY`. The variable is how `a2a dev` and
 * `a2a start`, which make the app from the project's agent module, are told to trace: `otel` loads
 * `@opentelemetry/api` where the app is made (synchronously, through Node's `require`, so `createA2AApp` stays
 * synchronous and no bundler meets the optional package), and records through whatever SDK the process registered.
 */
export function readTelemetry(option: Telemetry | undefined, env: Env): Instrumentation | undefined {
  if (option !== undefined) {
    const instrumentation = typeof option === 'object' && option !== null ? instrumentationOf(option) : undefined
    if (!instrumentation)
      throw new ConfigurationError('telemetry must be what otelTelemetry() of a2a-runtime/telemetry returns')
    return instrumentation
  }
  if (choiceSetting(undefined, 'telemetry', env, 'A2A_TELEMETRY', ['otel', 'off']) !== 'otel') return undefined
  return otelInstrumentation(loadApi(), { captureContent: false, maxLinkedTasks: DEFAULT_MAX_LINKED_TASKS })
}

const PEER = '@opentelemetry/api'

function loadApi(): Api {
  const nodeModule = (
    globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
  ).process?.getBuiltinModule?.('node:module') as typeof import('node:module') | undefined
  if (!nodeModule)
    throw new ConfigurationError(
      'telemetry (A2A_TELEMETRY): "otel" loads @opentelemetry/api, which needs Node.js; here pass the option telemetry: otelTelemetry() (a2a-runtime/telemetry)',
    )
  try {
    return nodeModule.createRequire(import.meta.url)(PEER) as Api
  } catch (error) {
    const { code } = error as { code?: string }
    if (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND')
      throw new ConfigurationError(
        `telemetry (A2A_TELEMETRY): "otel" needs the package ${PEER}, which is not installed: run \`npm install ${PEER}\` in the project (with an OpenTelemetry SDK that exports what it records)`,
      )
    throw error
  }
}
