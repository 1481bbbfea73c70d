import { H3, type H3Event, HTTPError } from 'h3'
import type { Agent } from '../agent.js'
import type { Binding } from '../bindings/_binding.js'
import { type CardDialect, renderCard } from '../bindings/_cards.js'
import { InputModes } from '../bindings/_input-modes.js'
import { platformBinding } from '../bindings/_platform.js'
import { renderPush } from '../bindings/_push.js'
import { v1Binding, withErrorInfo } from '../bindings/_v1.js'
import { v03Binding } from '../bindings/_v03.js'
import { normalizeCard } from '../core/_card.js'
import { DEFAULT_MAX_RUNNING_TASKS, TaskEngine } from '../core/_engine.js'
import { readTaskByteLimits } from '../core/_task-bytes.js'
import { A2AError, ConfigurationError, ErrorCode, MethodNotFoundError, ParseError, ServerUnavailableError } from '../errors.js'
import { createConsoleLogger, type Logger } from '../logger.js'
import { PushService } from '../push/_service.js'
import type { PushOptions } from '../push/push-options.js'
import { choiceSetting, type Env, envValue, processEnv, wholeNumberSetting } from '../settings.js'
import { storeFromSetting } from '../stores/from-setting.js'
import { createMemoryStore } from '../stores/memory.js'
import type { TaskStore } from '../stores/task-store.js'
import { createAuthCheck } from './_auth.js'
import { DEFAULT_MAX_BODY_SIZE, isJsonContentType, readJsonBody, unsupportedContentType } from './_body.js'
import { readBodyBudget } from './_body-budget.js'
import { type CachedCard, cacheableCard, cardResponse } from './_card-response.js'
import { errorResponse, idOf, isPlainObject, type JsonRpcId, readCall, resultResponse } from './_jsonrpc.js'
import { Outgoing, readOutgoingLimits } from './_outgoing.js'
import { SseStream } from './_sse.js'
import { readWebOrigin, WebOriginGuard } from './_web-origin.js'
import type { AuthOptions } from './auth-options.js'

export type SlashDialect = 'platform' | 'a2a-0.3'

export interface A2AAppOptions {
  /**
   * Where every setting not given as an option is read from (the `A2A_*` variables of the runtime README's
   * table). Default: the process's environment (Node, Bun, Deno); a Cloudflare Worker passes its `env`.
   */
  env?: Env
  /**
   * Where tasks live: a `TaskStore`, or a setting as in `A2A_STORE` (`memory`, `file:./.a2a`). Default:
   * `A2A_STORE`, else `createMemoryStore()` (10,000 tasks or 128 MiB, one hour after they settle).
   */
  store?: TaskStore | string
  /** Default: the console, at `A2A_LOG_LEVEL` or `info`. */
  logger?: Logger
  /**
   * The address clients reach the agent at, advertised as the card's `url`. Set it behind a proxy or load
   * balancer. Default: the listening address (`serveAgent`), or the origin of the card request.
   */
  publicUrl?: string
  /** Largest JSON-RPC body accepted, in bytes; larger ones get HTTP 413. Default 1 MiB. */
  maxBodySize?: number
  /**
   * Most bytes of request bodies being received at once, across the server. A request holds its declared
   * `Content-Length` (a chunked one, what has arrived) from before its body is read until it has been read or
   * abandoned; one that does not fit gets HTTP 503 with `Retry-After` and a JSON-RPC error, and its connection is
   * closed without its body being read. Bodies over 64 KiB may fill only half of it, so ordinary messages keep
   * being read while large ones stall. At least twice `maxBodySize`. Default: `A2A_MAX_BODY_BYTES_IN_FLIGHT`,
   * else 67,108,864 (64 MiB), or twice `maxBodySize` if that is more.
   */
  maxBodyBytesInFlight?: number
  /** Credentials for the schemes the card declares. Default: from the environment. */
  auth?: AuthOptions
  /** Waits this long for running tasks on `close()` before failing them, in ms. Default 10,000. */
  shutdownTimeoutMs?: number
  /**
   * What the slash-named methods (`message/send`…) speak: `platform` (the default, exactly the platform spec)
   * or `a2a-0.3` (the official v0.3 dialect: result-style stream events, -32001 for unknown tasks). A request
   * with `A2A-Version: 0.3` always gets v0.3. Default: `A2A_DIALECT`, else `platform`.
   */
  dialect?: SlashDialect
  /**
   * Most tasks whose agent code runs at once; past it a new message gets HTTP 429 and a JSON-RPC error, so a
   * flood against a slow agent stays bounded. Default 1,000.
   */
  maxRunningTasks?: number
  /**
   * Most bytes of JSON one task may hold (its history, artifacts and status message), counted as it grows. A
   * message that would take a task past it is refused with -32602 (the task unchanged); an agent's artifact or
   * status message that would is not applied and the task is failed with the reason. Default:
   * `A2A_MAX_TASK_BYTES`, else 8,388,608 (8 MiB).
   */
  maxTaskBytes?: number
  /**
   * Most bytes the running tasks hold together (each task's count from the start of a turn until it settles); a
   * message that does not fit gets HTTP 429 and a JSON-RPC error, as past `maxRunningTasks`. At least
   * `maxTaskBytes`. Default: `A2A_MAX_RUNNING_BYTES`, else 268,435,456 (256 MiB).
   */
  maxRunningBytes?: number
  /**
   * Number the events of platform-dialect streams (`id: <n>` before each `data:` line), so a client that
   * loses a stream can resume it with `Last-Event-ID`. The A2A dialects always number them; the platform
   * dialect does when this is set or the request carries `Last-Event-ID`. Default `false` (the platform
   * spec's exact `data:` framing).
   */
  eventIds?: boolean
  /**
   * Writes an SSE comment (`: keep-alive`) on a stream that has been quiet this long, in ms, so proxies and
   * load balancers do not cut a long task's stream. 15000 suits most; 0 turns it off. Default:
   * `A2A_SSE_HEARTBEAT_MS`, else 0 (the platform spec's exact framing).
   */
  sseHeartbeatMs?: number
  /** Most SSE streams open at once; past it a streaming request gets HTTP 503 and a JSON-RPC error. Default 10,000. */
  maxStreams?: number
  /**
   * Most bytes an SSE subscriber may leave unread behind the event being written to it, in bytes; past it the
   * subscriber is dropped (its connection closed, the task and other subscribers unaffected) and can resume with
   * `Last-Event-ID`. Default: `A2A_SSE_MAX_BACKLOG_BYTES`, else 1,048,576 (1 MiB).
   */
  maxStreamBacklogBytes?: number
  /**
   * Most bytes written for clients and not yet read by them, across the server: SSE backlogs and large JSON
   * answers (over 64 Ki characters), which are sent as the client reads. An SSE subscriber whose next write does
   * not fit is dropped; a large answer that does not fit gets HTTP 503 with `Retry-After`. Keep it at least twice
   * the largest task. Default: `A2A_MAX_PENDING_RESPONSE_BYTES`, else 67,108,864 (64 MiB).
   */
  maxPendingResponseBytes?: number
  /**
   * A response (an SSE stream or a large JSON answer) whose client reads nothing for this long while bytes wait
   * for it is cut (the connection closes), in ms. A quiet stream with nothing to send is never cut. Default:
   * `A2A_WRITE_TIMEOUT_MS`, else 30,000.
   */
  writeTimeoutMs?: number
  /**
   * Push notifications, for an agent whose card declares `capabilities.pushNotifications`: the SSRF guard's
   * allowances (webhooks on loopback, private or link-local addresses, and `http:` ones, are refused unless
   * allowed), delivery timeout and retries.
   */
  push?: PushOptions
  /**
   * `Host` names the agent answers besides the ones always allowed (`localhost` and `*.localhost`, IP addresses,
   * the host of `publicUrl` and of the listening address): `agent.example.com`, or `.example.com` for it and its
   * subdomains; `true` answers any. A request naming another host gets 403, so a web page cannot reach the agent
   * through a name of its own that resolves here (DNS rebinding). Behind a proxy, list the name the proxy forwards
   * in `Host`. Default: `A2A_ALLOWED_HOSTS` (comma-separated, `*` for any), else only the ones always allowed
   * (`serveAgent` listening on every interface with no `publicUrl` answers any host).
   */
  allowedHosts?: string[] | true
  /**
   * Web origins whose pages may call the agent from a browser (`https://app.example.com`), or `['*']` for any.
   * Their requests get `Access-Control-Allow-Origin` and their preflights an answer; a request carrying any
   * other `Origin` (except the agent's own) gets 403. Default: `A2A_CORS_ORIGINS` (comma-separated), else none.
   */
  corsOrigins?: string[]
}

export interface A2AApp {
  /** The h3 application: mount it, or serve it with any h3 adapter. */
  readonly h3: H3
  /** Answers one request (the Fetch API handler). */
  fetch(request: Request): Promise<Response>
  readonly agent: Agent
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

const DEFAULT_MAX_STREAMS = 10_000
const PUSH_FLUSH_MS = 5000
const CARD_PATH = '/.well-known/agent.json'
const A2A_CARD_PATH = '/.well-known/agent-card.json'
export const RPC_PATHS = ['/', '/jsonrpc'] as const
/** Every path the app serves (the request log prints no other). */
export const SERVED_PATHS: ReadonlySet<string> = new Set([CARD_PATH, A2A_CARD_PATH, ...RPC_PATHS])
const V1_VERSION = /^1(\.0(\.\d+)?)?$/
const V03_VERSION = /^0\.3(\.\d+)?$/
// The card is public; a cache keyed by the requested origin must not grow with hostile Host headers.
const MAX_CACHED_CARDS = 16
const CLOSE_CONNECTION = { connection: 'close' } as const
const RETRY_LATER = { 'retry-after': '1' } as const
const CLOSE_RETRY_LATER = { ...CLOSE_CONNECTION, ...RETRY_LATER } as const

/**
 * Builds the h3 app that serves an agent: the card at `/.well-known/agent.json` and JSON-RPC 2.0 at `POST /`
 * (and `POST /jsonrpc`).
 *
 * @example
 * const app = createA2AApp(agent)
 * const response = await app.fetch(new Request('http://localhost/.well-known/agent.json'))
 */
export function createA2AApp(agent: Agent, options: A2AAppOptions = {}): A2AApp {
  const env = options.env ?? processEnv()
  const logger = options.logger ?? createConsoleLogger(undefined, env)
  const storeSetting = options.store ?? envValue(env, 'A2A_STORE')
  const store = typeof storeSetting === 'string' ? storeFromSetting(storeSetting, { logger, env }) : (storeSetting ?? createMemoryStore({ env }))
  const maxBodySize = options.maxBodySize ?? DEFAULT_MAX_BODY_SIZE
  if (!Number.isInteger(maxBodySize) || maxBodySize <= 0) throw new ConfigurationError(`maxBodySize must be a positive integer (got ${maxBodySize})`)
  const bodyBudget = readBodyBudget(options.maxBodyBytesInFlight, maxBodySize, env)
  const webOrigin = new WebOriginGuard(readWebOrigin(options, env), { rpc: new Set(RPC_PATHS), served: SERVED_PATHS }, logger)
  if (options.publicUrl) {
    if (!URL.canParse(options.publicUrl) || !/^https?:$/.test(new URL(options.publicUrl).protocol))
      throw new ConfigurationError(`publicUrl (A2A_PUBLIC_URL) must be an absolute http(s) URL (got ${JSON.stringify(options.publicUrl)})`)
    webOrigin.addUrl(options.publicUrl)
  }
  const maxRunningTasks = options.maxRunningTasks ?? DEFAULT_MAX_RUNNING_TASKS
  if (!Number.isInteger(maxRunningTasks) || maxRunningTasks <= 0)
    throw new ConfigurationError(`maxRunningTasks must be a positive integer (got ${maxRunningTasks})`)
  // Slash-named methods speak the platform dialect, or A2A v0.3 when the agent opts in (or the request says
  // A2A-Version: 0.3); A2A v1.0 methods (and A2A-Version: 1.0) speak v1.0.
  const dialect = choiceSetting<SlashDialect>(options.dialect, 'dialect', env, 'A2A_DIALECT', ['platform', 'a2a-0.3']) ?? 'platform'
  const legacyBinding: Binding = dialect === 'a2a-0.3' ? v03Binding : platformBinding
  const bindingFor = (method: string, version: string | null): Binding => {
    const requested = version?.trim()
    if (!requested) return v1Binding.methods.has(method) ? v1Binding : legacyBinding
    if (V1_VERSION.test(requested)) return v1Binding
    if (V03_VERSION.test(requested)) return v03Binding
    throw withErrorInfo(
      new A2AError(ErrorCode.VersionNotSupported, `A2A-Version ${JSON.stringify(requested.slice(0, 20))} is not supported; this agent speaks 1.0 and 0.3`),
    )
  }

  /** The binding a request would get, for an error sent before it is read as a call (never throws). */
  const dialectOf = (body: unknown, version: string | null): Binding => {
    const method = isPlainObject(body) && typeof body.method === 'string' ? body.method : ''
    try {
      return bindingFor(method, version)
    } catch {
      return legacyBinding
    }
  }

  const engine = new TaskEngine(agent, store, logger, maxRunningTasks, readTaskByteLimits(options, env))

  // Made when a card first declares push notifications (a2a dev may turn them on in a reload).
  let pushService: PushService | undefined
  const pushFor = (declared: boolean): PushService | undefined => {
    if (!declared) return undefined
    if (!pushService) {
      const service = new PushService(store, renderPush, options.push ?? {}, logger, env)
      // A reload that drops push (a2a dev) stops deliveries with it.
      engine.onEvent = (task, event) => current.push && service.delivery.event(task, event)
      pushService = service
    }
    return pushService
  }

  // Everything that follows from the agent's card, settled once per agent (and again on replaceAgent).
  const prepare = (next: Agent) => {
    const template = normalizeCard(next.card)
    return {
      push: pushFor(template.capabilities.pushNotifications),
      agent: next,
      template,
      inputModes: InputModes.of(template),
      authCheck: createAuthCheck(template.authentication?.schemes, options.auth, logger, env),
      streaming: template.capabilities.streaming,
      wwwAuthenticate: template.authentication?.schemes.includes('bearer') ? { 'www-authenticate': 'Bearer' } : undefined,
      cards: new Map<string, CachedCard>(),
    }
  }
  let current = prepare(agent)
  const eventIds = options.eventIds ?? false
  const heartbeatMs = wholeNumberSetting({
    option: 'sseHeartbeatMs',
    variable: 'A2A_SSE_HEARTBEAT_MS',
    given: options.sseHeartbeatMs,
    env,
    fallback: 0,
    min: 0,
    unit: 'ms',
    note: '0: none',
  })
  const maxStreams = options.maxStreams ?? DEFAULT_MAX_STREAMS
  if (!Number.isInteger(maxStreams) || maxStreams <= 0) throw new ConfigurationError(`maxStreams must be a positive integer (got ${maxStreams})`)
  const outgoing = new Outgoing(readOutgoingLimits(options, env), logger)
  let openStreams = 0
  const streamEnded = () => openStreams--
  const openStream = (): SseStream => {
    if (openStreams >= maxStreams) throw new ServerUnavailableError(`Too many open streams (${maxStreams}); retry shortly`, 503)
    openStreams++
    return new SseStream({ heartbeatMs, onEnd: streamEnded, outgoing })
  }

  let listeningUrl: string | undefined
  /** The card in one dialect at one address, serialised once with its ETag. */
  const cardFor = (dialect: CardDialect, url: string): CachedCard => {
    const { cards, template } = current
    const key = `${dialect} ${url}`
    let card = cards.get(key)
    if (card === undefined) {
      card = cacheableCard(renderCard(dialect, template, url), dialect !== 'platform')
      if (cards.size >= MAX_CACHED_CARDS) cards.clear()
      cards.set(key, card)
    }
    return card
  }
  const cardUrl = (event: H3Event) => options.publicUrl ?? listeningUrl ?? `${event.url.origin}/`

  const rpc = async (request: Request): Promise<Response> => {
    let id: JsonRpcId = null
    let binding = legacyBinding
    try {
      const { authCheck, streaming, wwwAuthenticate, push } = current
      if (authCheck) {
        const denied = authCheck(request.headers)
        if (denied) return errorResponse(null, denied, wwwAuthenticate)
      }
      const contentType = request.headers.get('content-type')
      if (!isJsonContentType(contentType)) {
        // Read (within the same limits) only to answer in the client's dialect with its id; nothing is run.
        const body = await readJsonBody(request, maxBodySize, bodyBudget).catch((error) => (error instanceof ParseError ? undefined : Promise.reject(error)))
        id = idOf(body)
        binding = dialectOf(body, request.headers.get('a2a-version'))
        throw unsupportedContentType(contentType, binding === v1Binding)
      }
      const body = await readJsonBody(request, maxBodySize, bodyBudget)
      id = idOf(body)
      const call = readCall(body)
      binding = bindingFor(call.method, request.headers.get('a2a-version'))
      const method = binding.methods.get(call.method)
      if (!method) throw new MethodNotFoundError(call.method)
      const result = await method(call.params, {
        id,
        engine,
        streaming,
        outputModes: current.template.defaultOutputModes,
        inputModes: current.inputModes,
        headers: request.headers,
        eventIds,
        openStream,
        push,
        dialect: binding.name,
      })
      return result instanceof Response ? result : resultResponse(id, result, outgoing)
    } catch (error) {
      if (error instanceof A2AError) {
        // After a refused body the rest of it is still on the connection, and a server that is going away
        // wants the client elsewhere: close the connection rather than keep it alive.
        const close = error.httpStatus === 413 || error.httpStatus === 503
        const headers = error.httpStatus === 503 ? CLOSE_RETRY_LATER : close ? CLOSE_CONNECTION : error.httpStatus === 429 ? RETRY_LATER : undefined
        return errorResponse(id, binding.wireError(error), headers)
      }
      // A client that hung up while sending its request is no server error: nobody is left to answer.
      if (clientLeft(error)) {
        logger.debug('A client left before its request was read')
        return errorResponse(id, new A2AError(ErrorCode.InvalidRequest, 'Invalid Request: the request body ended early'))
      }
      // The client learns only that something failed; the detail stays in the log.
      logger.error('Unexpected error while answering a JSON-RPC request', error)
      return errorResponse(id, new A2AError(ErrorCode.Internal, 'Internal error'))
    }
  }

  const h3 = new H3({ silent: true })
  // A foreign Host or Origin never reaches the agent: every route checks first.
  const checked =
    (route: (event: H3Event) => Response | Promise<Response>) =>
    (event: H3Event): Response | Promise<Response> =>
      webOrigin.check(event) ?? route(event)
  h3.get(
    CARD_PATH,
    checked((event) => cardResponse(event.req, cardFor('platform', cardUrl(event)))),
  )
  // A2A clients: v1.0 ones say so in A2A-Version; any other request gets the v0.3 shape.
  h3.get(
    A2A_CARD_PATH,
    checked((event) => cardResponse(event.req, cardFor(V1_VERSION.test(event.req.headers.get('a2a-version') ?? '') ? 'a2a-1.0' : 'a2a-0.3', cardUrl(event)))),
  )
  const rpcRoute = checked((event) => rpc(event.req as Request))
  for (const path of RPC_PATHS) h3.post(path, rpcRoute)
  // Any other path or method: refused as the routes are, a preflight answered, anything else not found.
  h3.all(
    '/**',
    checked(() => {
      throw new HTTPError({ status: 404, statusText: 'Not Found' })
    }),
  )

  return {
    h3,
    fetch: async (request) => h3.fetch(request),
    get agent() {
      return current.agent
    },
    store,
    setUrl(url) {
      listeningUrl = url
      webOrigin.addUrl(url)
    },
    replaceAgent(next) {
      current = prepare(next)
      engine.agent = next
    },
    async close() {
      await engine.drain(options.shutdownTimeoutMs ?? 10_000)
      // The final notifications of tasks that just ended get a moment to go out.
      await pushService?.close(PUSH_FLUSH_MS)
      await store.close?.()
    },
  }
}

/** Node's error for a request whose connection closed before its body was read. */
function clientLeft(error: unknown): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === 'ECONNRESET' && error.message === 'aborted'
}
