import { ConfigurationError } from './errors.js'

/**
 * Every setting the runtime and its `a2a` command take from the environment, in one place: each variable, the
 * option that overrides it, its default and what it does (the runtime README's table of environment variables is
 * this list, and a test keeps the two the same), and the readers that turn a value into a setting or a
 * ConfigurationError naming the option, the variable and what was given.
 */

/** Environment variables as a runtime hands them over: Node's, Bun's and Deno's `process.env`, a Worker's `env`. */
export type Env = Readonly<Record<string, string | undefined>>

/** The process's environment where there is one (Node, Bun, Deno); none elsewhere. */
export function processEnv(): Env {
  return (globalThis as { process?: { env?: Env } }).process?.env ?? {}
}

export const SETTINGS = [
  { variable: 'PORT', option: 'port', default: '3000', means: 'Port to listen on (`0`: a free one).' },
  {
    variable: 'HOST',
    option: 'hostname',
    default: '`127.0.0.1` (`a2a dev`: `localhost`)',
    means: 'Address to listen on; `0.0.0.0` in a container.',
  },
  {
    variable: 'A2A_GRPC_PORT',
    option: 'grpcPort',
    default: 'none (no gRPC)',
    means:
      'Also serve A2A v1.0 over gRPC on this port (`0`: a free one), Node only; needs `@grpc/grpc-js` and `@bufbuild/protobuf`.',
  },
  {
    variable: 'A2A_GRPC_PUBLIC_ADDRESS',
    option: 'grpcPublicAddress',
    default: 'the host of `A2A_PUBLIC_URL` (or the listening one) and the gRPC port',
    means: '`host:port` the cards list for gRPC, behind a proxy or a port mapping.',
  },
  {
    variable: 'A2A_PUBLIC_URL',
    option: 'publicUrl',
    default: 'the listening address',
    means: "The card's `url` behind a proxy or load balancer.",
  },
  {
    variable: 'A2A_ALLOWED_HOSTS',
    option: 'allowedHosts',
    default: 'none beyond `localhost` and IP addresses',
    means: '`Host` names answered, comma-separated (`*`: any).',
  },
  {
    variable: 'A2A_CORS_ORIGINS',
    option: 'corsOrigins',
    default: 'none',
    means: 'Web origins whose pages may call the agent, comma-separated (`*`: any).',
  },
  {
    variable: 'A2A_BEARER_TOKEN',
    option: 'auth.bearerTokens',
    default: 'none',
    means: 'Accepted bearer tokens, comma-separated; `name:token` names its caller.',
  },
  {
    variable: 'A2A_API_KEY',
    option: 'auth.apiKeys',
    default: 'none',
    means: 'Accepted `X-API-Key` values, comma-separated; `name:key` names its caller.',
  },
  {
    variable: 'A2A_OIDC_ISSUER',
    option: 'auth.oidc.issuer',
    default: 'none',
    means: 'OpenID Connect issuer whose JWTs are accepted as bearer tokens (`https:`; `http:` on loopback only).',
  },
  {
    variable: 'A2A_OIDC_AUDIENCE',
    option: 'auth.oidc.audience',
    default: 'none (required with the issuer)',
    means: 'The `aud` those tokens must carry, comma-separated for several.',
  },
  {
    variable: 'A2A_OIDC_SCOPES',
    option: 'auth.oidc.requiredScopes',
    default: 'none',
    means: 'Scopes every token must grant, comma-separated.',
  },
  {
    variable: 'A2A_CARD_SIGNING_KEY',
    option: 'cardSigning.key',
    default: 'none (cards unsigned)',
    means: 'A private key file (PEM or JWK) the A2A cards are signed with.',
  },
  {
    variable: 'A2A_DIALECT',
    option: 'dialect',
    default: '`platform`',
    means: 'What slash-named methods speak: `platform` or `a2a-0.3`.',
  },
  {
    variable: 'A2A_STORE',
    option: 'store',
    default: '`memory`',
    means: 'Where tasks live: `memory`, `file:<directory>`, `redis://host:port/db` or `postgres://user@host/db`.',
  },
  {
    variable: 'A2A_PUSH_CONFIG_KEY',
    option: 'pushConfigKey (store)',
    default: 'none (stored as JSON)',
    means:
      'Base64 of 32 bytes (`openssl rand -base64 32`): the Redis and PostgreSQL stores keep push configs sealed with it (AES-256-GCM).',
  },
  {
    variable: 'A2A_STORE_MAX_BYTES',
    option: 'maxBytes (store)',
    default: '128 MiB, or ¼ of the heap limit',
    means: 'Bytes of memory the tasks the memory and file stores keep take.',
  },
  {
    variable: 'A2A_EVENT_LOG_BYTES',
    option: 'eventLogBytes (store)',
    default: '1 MiB',
    means: "Bytes of one task's newest events kept for resumes.",
  },
  {
    variable: 'A2A_STORE_SEGMENT_BYTES',
    option: 'segmentBytes (file store)',
    default: '8 MiB',
    means: "Size past which the file store's log begins a new segment.",
  },
  {
    variable: 'A2A_MAX_TASK_BYTES',
    option: 'maxTaskBytes',
    default: '8 MiB',
    means: 'Bytes of memory one task may hold.',
  },
  {
    variable: 'A2A_MAX_RUNNING_BYTES',
    option: 'maxRunningBytes',
    default: '256 MiB, or ¼ of the heap limit',
    means: 'Bytes of memory the running tasks hold together.',
  },
  {
    variable: 'A2A_MAX_BODY_BYTES_IN_FLIGHT',
    option: 'maxBodyBytesInFlight',
    default: '64 MiB',
    means: 'Request bodies being received at once, in bytes.',
  },
  {
    variable: 'A2A_SSE_MAX_BACKLOG_BYTES',
    option: 'maxStreamBacklogBytes',
    default: '1 MiB',
    means: 'Unread events one stream subscriber may leave behind.',
  },
  {
    variable: 'A2A_MAX_PENDING_RESPONSE_BYTES',
    option: 'maxPendingResponseBytes',
    default: '64 MiB',
    means: 'Bytes written and not yet read, across the server.',
  },
  {
    variable: 'A2A_WRITE_TIMEOUT_MS',
    option: 'writeTimeoutMs',
    default: '30000',
    means: 'A response whose client reads nothing this long is cut.',
  },
  {
    variable: 'A2A_SSE_HEARTBEAT_MS',
    option: 'sseHeartbeatMs',
    default: '0 (off)',
    means: 'A `: keep-alive` line on a stream quiet this long.',
  },
  {
    variable: 'A2A_HEADERS_TIMEOUT_MS',
    option: 'headersTimeoutMs',
    default: '15000',
    means: "Time to send a request's headers.",
  },
  {
    variable: 'A2A_REQUEST_TIMEOUT_MS',
    option: 'requestTimeoutMs',
    default: '30000',
    means: 'Time to send a whole request, body included.',
  },
  {
    variable: 'A2A_KEEP_ALIVE_TIMEOUT_MS',
    option: 'keepAliveTimeoutMs',
    default: '5000',
    means: 'Idle keep-alive connections close after this.',
  },
  {
    variable: 'A2A_SHUTDOWN_TIMEOUT_MS',
    option: 'shutdownTimeoutMs',
    default: '10000',
    means: 'On SIGTERM: how long running tasks may finish before they are failed (keep it below the platform kill).',
  },
  { variable: 'A2A_MAX_CONNECTIONS', option: 'maxConnections', default: '4096', means: 'Connections at once.' },
  {
    variable: 'A2A_MAX_CONNECTIONS_PER_ADDRESS',
    option: 'maxConnectionsPerAddress',
    default: 'half of `maxConnections`',
    means: 'Connections from one client address (`0`: no cap).',
  },
  {
    variable: 'A2A_PUSH_ALLOW',
    option: 'push.allow',
    default: 'none (`a2a dev`: loopback)',
    means: 'Addresses and ranges webhooks may reach although private.',
  },
  {
    variable: 'A2A_PUSH_ALLOW_HTTP',
    option: 'push.allowHttp',
    default: '`false` (`a2a dev`: `true`)',
    means: 'Accept `http:` webhooks (`true`/`1`).',
  },
  {
    variable: 'A2A_LOG_LEVEL',
    option: 'logger',
    default: '`info`',
    means: '`debug`, `info`, `warn`, `error` or `silent`.',
  },
  {
    variable: 'A2A_LOG_FORMAT',
    option: '--log-format (`a2a start`)',
    default: '`text`',
    means:
      '`json`: one JSON object per line for log shippers (time, level, message, request and trace fields); `text`: for people.',
  },
  {
    variable: 'A2A_REQUEST_LOG',
    option: '--request-log (`a2a start`)',
    default: '`debug`',
    means: 'The level of the one line logged per request.',
  },
  {
    variable: 'A2A_TELEMETRY',
    option: 'telemetry',
    default: '`off`',
    means:
      '`otel`: an OpenTelemetry span per A2A operation, through the SDK the process registers; needs `@opentelemetry/api`.',
  },
  {
    variable: 'A2A_TRACE_URL',
    option: '- (a2a dev only)',
    default: 'none (the inspector shows trace ids alone)',
    means:
      "The trace viewer's address with `{traceId}` where the id goes (`http://localhost:16686/trace/{traceId}`): the dev inspector links each task's traces to it.",
  },
] as const

/** A variable the runtime reads. */
export type Variable = (typeof SETTINGS)[number]['variable']

/** The variable's text; undefined when it is unset or blank. */
export function envValue(env: Env, variable: Variable): string | undefined {
  const raw = env[variable]
  return raw === undefined || raw.trim() === '' ? undefined : raw
}

/** Set at all, blank included (`A2A_PUSH_ALLOW=` in a .env says "nothing", not "the default"). */
export function envGiven(env: Env, variable: Variable): boolean {
  return env[variable] !== undefined
}

/** A comma-separated variable's entries, trimmed, the empty ones dropped; undefined when it is unset or blank. */
export function envList(env: Env, variable: Variable): string[] | undefined {
  const raw = envValue(env, variable)
  return raw === undefined ? undefined : raw.split(',').flatMap((entry) => (entry.trim() ? [entry.trim()] : []))
}

/** `true`, `1` or `yes` (any case) turn a switch on; anything else set turns it off; undefined when unset. */
export function envSwitch(env: Env, variable: Variable): boolean | undefined {
  const raw = envValue(env, variable)
  return raw === undefined ? undefined : /^(1|true|yes)$/i.test(raw.trim())
}

/** One of `choices`, from the option, else the variable; undefined when neither is set. */
export function choiceSetting<T extends string>(
  option: T | undefined,
  optionName: string,
  env: Env,
  variable: Variable,
  choices: readonly T[],
): T | undefined {
  const value = option ?? envValue(env, variable)?.trim()
  if (value === undefined) return undefined
  if (!(choices as readonly string[]).includes(value)) {
    const quoted = choices.map((choice) => `"${choice}"`)
    throw new ConfigurationError(
      `${optionName} (${variable}) must be ${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)} (got ${JSON.stringify(value)})`,
    )
  }
  return value as T
}

export interface WholeNumberSetting {
  /** The option's name, as the error says it. */
  option: string
  variable: Variable
  /** The option's value: it wins over the variable. */
  given: number | undefined
  env: Env
  /** When neither is set. */
  fallback: number
  min: number
  max?: number
  /** What the number counts, as the error says it (`of bytes`). */
  unit?: 'bytes' | 'ms'
  /** Said after the minimum (`0: no cap`). */
  note?: string
  /** Said in place of "from <min>…" (`at least twice maxBodySize (2097152), so the largest body fits`). */
  atLeast?: string
}

/**
 * A whole number from the option, else the variable, else the fallback. One outside its range, or a variable
 * that is not a number, is a ConfigurationError naming the option, the variable and what was given.
 */
export function wholeNumberSetting(setting: WholeNumberSetting): number {
  const { option, variable, given, env, fallback, min, max = Number.MAX_SAFE_INTEGER } = setting
  const raw = given === undefined ? envValue(env, variable) : undefined
  const value = given ?? (raw === undefined ? fallback : Number(raw))
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const what = `a whole number${setting.unit ? ` of ${setting.unit}` : ''}`
    const range = setting.atLeast
      ? `, at least ${setting.atLeast}`
      : ` from ${min}${setting.note ? ` (${setting.note})` : ''}${setting.max !== undefined ? ` to ${max}` : ''}`
    throw new ConfigurationError(
      `${option} (${variable}) must be ${what}${range} (got ${given !== undefined ? String(given) : JSON.stringify(raw)})`,
    )
  }
  return value
}

/** As `wholeNumberSetting`, for a setting with no fixed default: undefined when neither option nor variable is set. */
export function optionalWholeNumberSetting(setting: Omit<WholeNumberSetting, 'fallback'>): number | undefined {
  if (setting.given === undefined && envValue(setting.env, setting.variable) === undefined) return undefined
  return wholeNumberSetting({ ...setting, fallback: 0 })
}

/** The table of environment variables the runtime README shows (a test keeps it the same as `SETTINGS`). */
export function settingsTable(): string {
  const rows = SETTINGS.map(
    (setting) => `| \`${setting.variable}\` | \`${setting.option}\` | ${setting.default} | ${setting.means} |`,
  )
  return ['| Variable | Option | Default | |', '|---|---|---|---|', ...rows].join('\n')
}
