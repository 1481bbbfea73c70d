import type { H3 } from 'h3'
import type { Agent } from '../agent.js'
import type { Logger } from '../logger.js'
import type { PushOptions } from '../push/push-options.js'
import type { Env } from '../settings.js'
import type { TaskStore } from '../stores/task-store.js'
import type { Telemetry } from '../telemetry/telemetry.js'
import type { SlashDialect } from './_dialect-router.js'
import type { AuthOptions } from './auth-options.js'

/** How `createA2AApp` serves an agent (`serveAgent` and `agentWorker` pass these on); every field is optional. */
export interface A2AAppOptions {
  /**
   * Where the settings that are not given as options are read from (the variables of the runtime README's
   * table; `PORT`, `HOST` and `A2A_PUBLIC_URL` by `serveAgent`): the process's environment on Node, Bun and Deno,
   * none where there is no `process`. A Cloudflare Worker passes its `env`.
   * @default process.env
   */
  env?: Env
  /**
   * Where tasks live: a `TaskStore`, or a setting as in `A2A_STORE` (`memory`, `file:./.a2a`). The memory store
   * keeps at most 10,000 tasks within its byte budget (`A2A_STORE_MAX_BYTES`, else 128 MiB or a quarter of the heap
   * limit), each for an hour after it settles. A setting's file, Redis or PostgreSQL store is made by the store's
   * `ready()` (which `serveAgent` awaits before it listens) or at its first call; one that cannot be made fails
   * `ready()` with a `ConfigurationError`, and requests with a 503 saying why.
   * @default A2A_STORE, else createMemoryStore()
   */
  store?: TaskStore | string
  /**
   * Where the runtime reports what clients do not see: agent mistakes, internal errors, shutdown.
   * @default the console, at the level of A2A_LOG_LEVEL, else 'info'
   */
  logger?: Logger
  /**
   * The address clients reach the agent at, advertised as the card's `url`. Set it behind a proxy or load
   * balancer.
   * @default A2A_PUBLIC_URL (serveAgent), else the listening address (serveAgent), or the origin of the card request
   */
  publicUrl?: string
  /**
   * Largest JSON-RPC body accepted, in bytes (1 MiB); larger ones get HTTP 413.
   * @default 1_048_576
   */
  maxBodySize?: number
  /**
   * Most bytes of request bodies being received at once, across the server. A request holds its declared
   * `Content-Length` (a chunked one, what has arrived) from before its body is read until it has been read or
   * abandoned; one that does not fit gets HTTP 503 with `Retry-After` and a JSON-RPC error, and its connection is
   * closed without its body being read. Bodies over 64 KiB may fill only half of it, so ordinary messages keep
   * being read while large ones stall. At least twice `maxBodySize`.
   * @default A2A_MAX_BODY_BYTES_IN_FLIGHT, else 67_108_864 (64 MiB), or twice maxBodySize if that is more
   */
  maxBodyBytesInFlight?: number
  /**
   * Credentials for the schemes the card declares; a declared scheme without any stops the app from starting.
   * @default A2A_BEARER_TOKEN and A2A_API_KEY, each comma-separated
   */
  auth?: AuthOptions
  /**
   * Signs the A2A cards (`/.well-known/agent-card.json`, both shapes) with a private key, as A2A v1.0 §8.4 says:
   * a JWS (`typ` JOSE) over the card's RFC 8785 form in its `signatures`, which clients verify with the public key.
   * `key` is the key's text, PEM (PKCS#8) or JWK; RSA keys sign RS256, EC keys ES256/384/512 by curve, Ed25519
   * keys EdDSA. `keyId` is the `kid` the signatures name (publish the public key under it in your JWKS); without
   * it, the JWK's own `kid`, else the key's RFC 7638 thumbprint. The platform's `/.well-known/agent.json` is not
   * signed. A key that cannot sign stops the app from starting.
   * @default A2A_CARD_SIGNING_KEY (the path of the key file), else the cards are not signed
   */
  cardSigning?: {
    /** The private key's text: PEM (`-----BEGIN PRIVATE KEY-----`) or a JWK with its `d`. */
    key: string
    /** The `kid` the signatures name, under which clients find the public key in your JWKS. */
    keyId?: string
  }
  /**
   * Waits this long for running tasks on `close()` (SIGTERM) before failing them, in ms. Keep it below the time a
   * platform gives between SIGTERM and SIGKILL (Cloud Run: 10 s), so the tasks are failed before the process dies.
   * @default A2A_SHUTDOWN_TIMEOUT_MS, else 10_000
   */
  shutdownTimeoutMs?: number
  /**
   * What the slash-named methods (`message/send`…) speak: `platform` (exactly the platform spec) or `a2a-0.3`
   * (the official v0.3 dialect: result-style stream events, -32001 for unknown tasks). A request with
   * `A2A-Version: 0.3` always gets v0.3.
   * @default A2A_DIALECT, else 'platform'
   */
  dialect?: SlashDialect
  /**
   * Most tasks whose agent code runs at once; past it a new message gets HTTP 429 and a JSON-RPC error, so a
   * flood against a slow agent stays bounded.
   * @default 1_000
   */
  maxRunningTasks?: number
  /**
   * Most bytes of memory one task may hold (its history, artifacts and status message: what the heap pays for
   * them, structure included, which can be many times their JSON text), counted as it grows. A
   * message that would take a task past it is refused with -32602 (the task unchanged); an agent's artifact or
   * status message that would is not applied and the task is failed with the reason.
   * @default A2A_MAX_TASK_BYTES, else 8_388_608 (8 MiB)
   */
  maxTaskBytes?: number
  /**
   * Most bytes of memory the running tasks hold together (each task's count from the start of a turn until it
   * settles, what its agent produces included); a message that does not fit gets HTTP 429 and a JSON-RPC error, as
   * past `maxRunningTasks`. Past it, a running task that would hold more than its share (this over the tasks
   * running) is failed with the reason. At least `maxTaskBytes`. On Cloudflare Workers (`agentWorker`), without
   * the variable it is 33,554,432 (32 MiB): a quarter of a Durable Object's memory.
   * @default A2A_MAX_RUNNING_BYTES, else 268_435_456 (256 MiB) or a quarter of the heap limit
   * (`--max-old-space-size`) when that is less, and never less than maxTaskBytes
   */
  maxRunningBytes?: number
  /**
   * Number the events of platform-dialect streams (`id: <n>` before each `data:` line), so a client that
   * loses a stream can resume it with `Last-Event-ID`. The A2A dialects always number them; the platform
   * dialect does when this is set or the request carries `Last-Event-ID`. Off, streams keep the platform
   * spec's exact `data:` framing.
   * @default false
   */
  eventIds?: boolean
  /**
   * Writes an SSE comment (`: keep-alive`) on a stream that has been quiet this long, in ms, so proxies and
   * load balancers do not cut a long task's stream. 15000 suits most; 0 turns it off (the platform spec's exact
   * framing).
   * @default A2A_SSE_HEARTBEAT_MS, else 0
   */
  sseHeartbeatMs?: number
  /**
   * Most SSE streams open at once; past it a streaming request gets HTTP 503 and a JSON-RPC error.
   * @default 10_000
   */
  maxStreams?: number
  /**
   * Most bytes an SSE subscriber may leave unread behind the event being written to it, in bytes; past it the
   * subscriber is dropped (its connection closed, the task and other subscribers unaffected) and can resume with
   * `Last-Event-ID`.
   * @default A2A_SSE_MAX_BACKLOG_BYTES, else 1_048_576 (1 MiB)
   */
  maxStreamBacklogBytes?: number
  /**
   * Most bytes written for clients and not yet read by them, across the server: SSE backlogs and large JSON
   * answers (over 64 Ki characters), which are sent as the client reads. An SSE subscriber whose next write does
   * not fit is dropped; a large answer that does not fit gets HTTP 503 with `Retry-After`. Keep it at least twice
   * the largest task.
   * @default A2A_MAX_PENDING_RESPONSE_BYTES, else 67_108_864 (64 MiB)
   */
  maxPendingResponseBytes?: number
  /**
   * A response (an SSE stream or a large JSON answer) whose client reads nothing for this long while bytes wait
   * for it is cut (the connection closes), in ms. A quiet stream with nothing to send is never cut.
   * @default A2A_WRITE_TIMEOUT_MS, else 30_000
   */
  writeTimeoutMs?: number
  /**
   * Push notifications, for an agent whose card declares `capabilities.pushNotifications`: the SSRF guard's
   * allowances (webhooks on loopback, private or link-local addresses, and `http:` ones, are refused unless
   * allowed), delivery timeout and retries.
   */
  push?: PushOptions
  /**
   * Traces every A2A operation: `otelTelemetry()` of `a2a-runtime/telemetry` records OpenTelemetry spans (per the A2A
   * semantic conventions) through the SDK the process registers. `A2A_TELEMETRY=otel` does the same without the
   * option (how `a2a dev` and `a2a start` are told; on Node.js). Without either, nothing is recorded and nothing of
   * OpenTelemetry is loaded.
   * @default A2A_TELEMETRY (`otel` or `off`), else none
   */
  telemetry?: Telemetry
  /**
   * `Host` names the agent answers besides the ones always allowed (`localhost` and `*.localhost`, IP addresses,
   * the host of `publicUrl` and of the listening address): `agent.example.com`, or `.example.com` for it and its
   * subdomains; `true` answers any. A request naming another host gets 403, so a web page cannot reach the agent
   * through a name of its own that resolves here (DNS rebinding). Behind a proxy, list the name the proxy forwards
   * in `Host`. `serveAgent` listening on every interface with no `publicUrl` and no variable answers any host.
   * @default A2A_ALLOWED_HOSTS (comma-separated, * for any), else only the ones always allowed
   */
  allowedHosts?: string[] | true
  /**
   * Web origins whose pages may call the agent from a browser (`https://app.example.com`), or `['*']` for any.
   * Their requests get `Access-Control-Allow-Origin` and their preflights an answer; a request carrying any
   * other `Origin` (except the agent's own) gets 403.
   * @default A2A_CORS_ORIGINS (comma-separated), else none
   */
  corsOrigins?: string[]
}

/** The app `createA2AApp` returns: a Fetch API handler and an h3 app, with what serving it needs. */
export interface A2AApp {
  /** The h3 application: mount it, or serve it with any h3 adapter. */
  readonly h3: H3
  /** Answers one request (the Fetch API handler). */
  fetch(request: Request): Promise<Response>
  /** The agent served now (`replaceAgent` changes it). */
  readonly agent: Agent
  /** Where the app's tasks live: the `store` option, or the one it made. */
  readonly store: TaskStore
  /**
   * Sets the address the card advertises when no `publicUrl` is configured; its host is answered (`allowedHosts`)
   * and its origin is the agent's own.
   */
  setUrl(url: string): void
  /**
   * Serves another version of the agent from now on (`a2a dev` reloads this way): new tasks and the card use
   * it, tasks keep their store, and running tasks finish on the code they started with. Throws, changing
   * nothing, when the new card cannot be honoured.
   */
  replaceAgent(agent: Agent): void
  /** Lets running tasks finish (up to `shutdownTimeoutMs`), fails the rest, then closes the store. */
  close(): Promise<void>
}
