import type { ClientInstrumentation } from '../telemetry/_client-hooks.js'
import { clientInstrumentationOf } from '../telemetry/_client-telemetry.js'
import type { Telemetry } from '../telemetry/telemetry.js'
import { cardReference, checkCard, loadCard } from './_card.js'
import { applyCredentials, secretValues } from './_credentials.js'
import type { HttpSettings } from './_http.js'
import { jsonRpcTransport } from './_jsonrpc.js'
import { restTransport } from './_rest.js'
import { bindingName, selectInterface, speaksVersion } from './_select.js'
import { checkShape, ShapeError, type ShapeName } from './_shapes.js'
import { type CallTarget, tracedStream, tracedUnary } from './_traced-calls.js'
import type { CallOptions, StreamEvent, StreamOptions, Traced, Transport, UnaryOperation } from './_transport.js'
import { redactor, type WireHook } from './_wire.js'
import { A2AClientFailure } from './errors.js'
import type {
  AgentCard,
  AgentInterface,
  CancelTaskRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  JsonObject,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  SendMessageRequest,
  SendMessageResponse,
  Task,
  TaskPushNotificationConfig,
} from './types.js'

export type { CallOptions, StreamEvent, StreamOptions } from './_transport.js'
export type { WireEntry, WireHook } from './_wire.js'

/**
 * An A2A v1.0 client: `connect` reads the agent's card, chooses the interface to speak to, and answers a client with
 * one method per v1.0 operation, over JSON-RPC or HTTP+JSON alike. Results are the protocol's ProtoJSON as the agent
 * sent it; failures are an `A2AProtocolError` (the agent's A2A error, named alike over every binding) or an
 * `A2AClientFailure` (no A2A answer). A call aborted by its signal rejects with the signal's reason.
 */

export interface ConnectOptions {
  /** A host or origin (its `/.well-known/agent-card.json`), a card's URL, or a card file (a path or `file://`). */
  agentCard: string
  /** Bindings in the caller's order of preference (`JSONRPC`, `HTTP+JSON`); the first the card offers is used. */
  transports?: readonly string[]
  /** The `A2A-Version` every request carries. @default '1.0' */
  a2aVersion?: string
  /** A bearer token, sent where the card's schemes accept one (HTTP bearer, OAuth 2.0, OpenID Connect). */
  bearer?: string
  /** An API key, sent where the card's API key scheme says (header, query parameter or cookie). */
  apiKey?: string
  /**
   * Of `bearer` and `apiKey`, those not to send to an agent whose card declares no security scheme (listed then in
   * the client's `unusedCredentials`). Such a card says nothing of where a credential goes: one not withheld goes
   * where agents usually look (`Authorization: Bearer`, `X-API-Key`), and is listed in `undeclaredCredentials`.
   */
  withholdWithoutScheme?: ReadonlyArray<'bearer' | 'apiKey'>
  /** More secrets to redact like the credentials, wherever they appear (a webhook's token the caller sends). */
  secrets?: readonly string[]
  /** Service parameters (A2A v1.0 §3.2.6), sent as request headers; their values are redacted like credentials. */
  serviceParams?: Record<string, string>
  /** Metadata added to every request that carries metadata (send, stream, cancel); the request's own keys win. */
  metadata?: JsonObject
  /** Sees each request, answer and stream event, with every credential and service parameter redacted. */
  wire?: WireHook
  /** The fetch to use. @default globalThis.fetch */
  fetch?: typeof fetch
  /**
   * The longest wait per request, in ms: for a unary call until its whole answer is read, for a stream until its
   * headers (events may then take as long as the task does). Unset: no limit, except 30 s for the card.
   */
  timeoutMs?: number
  /** The most bytes the client reads of one answer, or of one line or event of a stream. @default 33554432 */
  maxMessageBytes?: number
  /** Aborts reading the card (the client's calls each take their own signal). */
  signal?: AbortSignal
  /**
   * `otelTelemetry()` of `a2a-runtime/telemetry`: each call is an OpenTelemetry CLIENT span (named after its A2A v1.0
   * method, a child of the caller's active span), and its requests carry the trace context (`traceparent`) through the
   * registered propagator, so the agent's span joins the caller's trace. Unset, the client reports nothing.
   */
  telemetry?: Telemetry
}

/** A connected agent: its card, the interface spoken to, and one method per A2A v1.0 operation. */
export interface A2AClient {
  readonly card: AgentCard
  /** Where the card came from: its URL, or the file's path. */
  readonly cardSource: string
  /** The interface spoken to. */
  readonly selected: AgentInterface
  /**
   * The caller's credentials that no scheme of the card accepts (or withheld from a card without schemes), which are
   * therefore never sent.
   */
  readonly unusedCredentials: ReadonlyArray<'bearer' | 'apiKey'>
  /** The caller's credentials sent though the card declares no security scheme: it asked for none. */
  readonly undeclaredCredentials: ReadonlyArray<'bearer' | 'apiKey'>
  sendMessage(request: SendMessageRequest, options?: CallOptions): Promise<SendMessageResponse>
  sendStreamingMessage(request: SendMessageRequest, options?: StreamOptions): AsyncIterable<StreamEvent>
  getTask(request: GetTaskRequest, options?: CallOptions): Promise<Task>
  listTasks(request?: ListTasksRequest, options?: CallOptions): Promise<ListTasksResponse>
  cancelTask(request: CancelTaskRequest, options?: CallOptions): Promise<Task>
  /** Follows a task; `lastEventId` resumes after that event (the agent re-sends the Task first). */
  subscribeToTask(id: string, options?: StreamOptions): AsyncIterable<StreamEvent>
  createTaskPushNotificationConfig(
    config: TaskPushNotificationConfig & { taskId: string },
    options?: CallOptions,
  ): Promise<TaskPushNotificationConfig>
  getTaskPushNotificationConfig(
    request: GetTaskPushNotificationConfigRequest,
    options?: CallOptions,
  ): Promise<TaskPushNotificationConfig>
  listTaskPushNotificationConfigs(
    request: ListTaskPushNotificationConfigsRequest,
    options?: CallOptions,
  ): Promise<ListTaskPushNotificationConfigsResponse>
  deleteTaskPushNotificationConfig(request: GetTaskPushNotificationConfigRequest, options?: CallOptions): Promise<void>
  getExtendedAgentCard(options?: CallOptions): Promise<AgentCard>
}

const DEFAULT_MAX_BYTES = 32 * 1024 * 1024

/**
 * Reads the agent's card, chooses the interface (the card's first supported one, or the first of `transports` it
 * offers) and answers the client. Fails with `A2AClientFailure` when the card cannot be read or offers nothing
 * this client speaks.
 */
export async function connect(options: ConnectOptions): Promise<A2AClient> {
  const a2aVersion = options.a2aVersion ?? '1.0'
  // Versions before 1.0 need an explicit opt-in, which this client does not offer yet.
  if (!speaksVersion(a2aVersion))
    throw new RangeError(`a2aVersion ${JSON.stringify(a2aVersion)}: this client speaks A2A 1.x`)
  const instrumentation = options.telemetry === undefined ? undefined : clientInstrumentationOf(options.telemetry)
  if (options.telemetry !== undefined && !instrumentation)
    throw new TypeError('telemetry must be what otelTelemetry() of a2a-runtime/telemetry returns')
  const reference = cardReference(options.agentCard)
  const secrets = { headers: new Set<string>(), values: secretValues(options) }
  const settings: HttpSettings = {
    a2aVersion,
    // The card is public: it is fetched with no credential, and only redacted of every secret the caller gave.
    credentials: { headers: {}, sent: false, unused: [], undeclared: [], secrets },
    wire: options.wire,
    fetch: options.fetch ?? globalThis.fetch,
    timeoutMs: options.timeoutMs,
    maxBytes: options.maxMessageBytes ?? DEFAULT_MAX_BYTES,
  }
  const { card, source } = await loadCard(reference, settings, options.signal)
  const selected = reachable(selectInterface(card, options.transports), reference)
  const credentials = applyCredentials(card, options)
  const http: HttpSettings = { ...settings, credentials }
  const tenant = selected.tenant || undefined
  const transport: Transport =
    bindingName(selected.protocolBinding) === 'JSONRPC'
      ? jsonRpcTransport(selected.url, http)
      : restTransport(selected.url, tenant, http)
  const redact = redactor(credentials.secrets)
  const about = {
    card,
    cardSource: source,
    selected,
    unusedCredentials: credentials.unused,
    undeclaredCredentials: credentials.undeclared,
  }
  const where = redact.url(selected.url)
  const traced = instrumentation && {
    instrumentation,
    target: { url: selected.url, a2aVersion, agent: card },
  }
  return makeClient(about, transport, { tenant, metadata: options.metadata, where, traced })
}

/** What each operation answers, checked before the caller reads it. */
const ANSWERS: Record<Exclude<UnaryOperation, 'DeleteTaskPushNotificationConfig'>, ShapeName | 'AgentCard'> = {
  SendMessage: 'SendMessageResponse',
  GetTask: 'Task',
  ListTasks: 'ListTasksResponse',
  CancelTask: 'Task',
  CreateTaskPushNotificationConfig: 'TaskPushNotificationConfig',
  GetTaskPushNotificationConfig: 'TaskPushNotificationConfig',
  ListTaskPushNotificationConfigs: 'ListTaskPushNotificationConfigsResponse',
  GetExtendedAgentCard: 'AgentCard',
}

function makeClient(
  about: Pick<A2AClient, 'card' | 'cardSource' | 'selected' | 'unusedCredentials' | 'undeclaredCredentials'>,
  transport: Transport,
  {
    tenant,
    metadata,
    where,
    traced,
  }: {
    tenant?: string
    metadata?: JsonObject
    where: string
    /** Where each call is reported, with what the calls of this connection share. */
    traced?: { instrumentation: ClientInstrumentation; target: CallTarget } | undefined
  },
): A2AClient {
  /** The request as the operation's message: the interface's tenant set exactly as declared, or absent. */
  const message = (request: object, withMetadata = false): JsonObject => {
    const out = { ...(request as JsonObject) }
    if (tenant !== undefined) out.tenant = tenant
    else delete out.tenant
    if (withMetadata && metadata) out.metadata = { ...metadata, ...(out.metadata as JsonObject | undefined) }
    return out
  }
  /** A unary call, its answer checked. */
  const checked = async (operation: UnaryOperation, request: JsonObject, options: Traced<CallOptions>) => {
    const answer = await transport.call(operation, request, options)
    if (operation !== 'DeleteTaskPushNotificationConfig') checkAnswer(operation, ANSWERS[operation], answer, where)
    return answer
  }
  // Each call reported when the client has telemetry: chosen here, once.
  const unary = traced ? tracedUnary(traced.instrumentation, traced.target, checked) : checked
  const stream = traced
    ? tracedStream(traced.instrumentation, traced.target, transport.stream.bind(transport))
    : transport.stream.bind(transport)
  const call = async <T>(operation: UnaryOperation, request: object, options: CallOptions = {}) => {
    const withMetadata = operation === 'SendMessage' || operation === 'CancelTask'
    return (await unary(operation, message(request, withMetadata), options)) as T
  }

  return {
    ...about,
    sendMessage: (request, options) => call<SendMessageResponse>('SendMessage', request, options),
    sendStreamingMessage: (request, options = {}) => stream('SendStreamingMessage', message(request, true), options),
    getTask: (request, options) => call<Task>('GetTask', request, options),
    listTasks: (request = {}, options) => call<ListTasksResponse>('ListTasks', request, options),
    cancelTask: (request, options) => call<Task>('CancelTask', request, options),
    subscribeToTask: (id, options = {}) => stream('SubscribeToTask', message({ id }), options),
    createTaskPushNotificationConfig: (config, options) =>
      call<TaskPushNotificationConfig>('CreateTaskPushNotificationConfig', config, options),
    getTaskPushNotificationConfig: (request, options) =>
      call<TaskPushNotificationConfig>('GetTaskPushNotificationConfig', request, options),
    listTaskPushNotificationConfigs: (request, options) =>
      call<ListTaskPushNotificationConfigsResponse>('ListTaskPushNotificationConfigs', request, options),
    async deleteTaskPushNotificationConfig(request, options) {
      await call('DeleteTaskPushNotificationConfig', request, options)
    },
    getExtendedAgentCard: (options) => call<AgentCard>('GetExtendedAgentCard', {}, options),
  }
}

/** An answer outside the operation's shape is a bad response naming the field, before anything reads it. */
function checkAnswer(operation: UnaryOperation, shape: ShapeName | 'AgentCard', answer: unknown, where: string) {
  try {
    if (shape === 'AgentCard') checkCard(answer)
    else checkShape(shape, answer)
  } catch (error) {
    if (!(error instanceof ShapeError) && !(error instanceof A2AClientFailure)) throw error
    throw new A2AClientFailure('bad-response', `${where} answered ${operation} outside A2A v1.0: ${error.message}`)
  }
}

/**
 * An interface at an unspecified address (`0.0.0.0`, `[::]`: what a server listening on every interface may write into
 * its card) is the host the card came from: there is no such host to connect to.
 */
function reachable(selected: AgentInterface, reference: ReturnType<typeof cardReference>): AgentInterface {
  const url = new URL(selected.url)
  if (!('url' in reference) || (url.hostname !== '0.0.0.0' && url.hostname !== '[::]')) return selected
  url.hostname = new URL(reference.url).hostname
  return { ...selected, url: url.href }
}
