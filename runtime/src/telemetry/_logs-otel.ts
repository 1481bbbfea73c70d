import type * as LogsApi from '@opentelemetry/api-logs'
import type { AnyValueMap, Logger, LoggerProvider } from '@opentelemetry/api-logs'
import { jsonText, lineFields } from '../_log-json.js'
import type { LineLevel, LineShape, LogRecords } from './_logs.js'
import { runtimeVersion } from './_runtime-version.js'

/**
 * The runtime's log lines as OpenTelemetry log records, through the logger `a2a-runtime` of the LoggerProvider the
 * process registers: the severity of the line's level, the message as the body, the line's fields as attributes, and
 * the async context the line is written in, so an SDK gives the record the trace of the span active there. Given the
 * `@opentelemetry/api-logs` module rather than importing it, so it is loaded only when telemetry is on
 * (`_app-telemetry.ts`). With no LoggerProvider registered nothing is built.
 */

/** The part of `@opentelemetry/api-logs` used here (every 0.x since 0.200 has it). */
export type LogsApiModule = Pick<typeof LogsApi, 'logs'>

const SCOPE_NAME = 'a2a-runtime'
const SCOPE_VERSION = runtimeVersion()

/** `SeverityNumber` of the API for each level (DEBUG, INFO, WARN, ERROR): numbers the data model fixes. */
const SEVERITY: Record<LineLevel, number> = { debug: 5, info: 9, warn: 13, error: 17 }

/**
 * The JSON line's fields under the names OpenTelemetry's semantic conventions give them, so a backend reads a
 * record's error as an exception and joins it to the spans of its task; the others keep the JSON line's names.
 */
const CONVENTION_NAMES: Readonly<Record<string, string>> = {
  method: 'http.request.method',
  route: 'http.route',
  status: 'http.response.status_code',
  task_id: 'a2a.task.id',
  error_name: 'exception.type',
  error_message: 'exception.message',
  error_stack: 'exception.stacktrace',
}

/**
 * The API's proxy provider, which `logs.getLoggerProvider()` answers while no provider is registered: it hands out a
 * delegate's logger once one is (never while none is). Every 0.x API has it, internal as it is.
 */
interface ProxyProvider {
  _getDelegateLogger(name: string, version?: string): Logger | undefined
}

export function otelLogRecords(api: LogsApiModule): LogRecords {
  return new OtelLogRecords(api)
}

class OtelLogRecords implements LogRecords {
  readonly #api: LogsApiModule
  #provider: LoggerProvider | undefined
  #logger: Logger | undefined

  constructor(api: LogsApiModule) {
    this.#api = api
  }

  /** The logger of the provider registered now, asked again only when another one is; undefined while none is. */
  #loggerNow(): Logger | undefined {
    const provider = this.#api.logs.getLoggerProvider()
    if (provider !== this.#provider) {
      this.#provider = provider
      const proxy = provider as Partial<ProxyProvider>
      this.#logger =
        typeof proxy._getDelegateLogger === 'function'
          ? proxy._getDelegateLogger(SCOPE_NAME, SCOPE_VERSION)
          : provider.getLogger(SCOPE_NAME, SCOPE_VERSION)
    }
    return this.#logger
  }

  emit(level: LineLevel, message: string, detail: unknown, line: LineShape): void {
    const logger = this.#loggerNow()
    if (!logger) return
    const severityNumber = SEVERITY[level]
    // Asked when the API has it (its newer versions): a provider that drops this severity gets nothing built.
    if (logger.enabled?.({ severityNumber }) === false) return
    logger.emit({ severityNumber, severityText: level, body: message, attributes: attributesOf(message, detail, line) })
  }
}

function attributesOf(message: string, detail: unknown, line: LineShape): AnyValueMap {
  const attributes: AnyValueMap = {}
  for (const [field, value] of Object.entries(lineFields(message, detail, line))) {
    const name = CONVENTION_NAMES[field] ?? field
    // A detail is given as text: JSON of what the agent logged, which a backend may not take as nested values.
    if (field === 'detail') attributes[name] = typeof value === 'string' ? value : jsonText(value)
    else attributes[name] = value as string | number | string[]
  }
  return attributes
}
