import type * as OtelApi from '@opentelemetry/api'
import type { Attributes, Context, MeterProvider, Span, SpanContext, TextMapGetter, Tracer } from '@opentelemetry/api'
import { isTerminal } from '../core/_lifecycle.js'
import { A2AError } from '../errors.js'
import type { Message, Task, TaskEvent } from '../types.js'
import { messagesJson, roleOf } from './_content.js'
import { FirstSpans } from './_first-spans.js'
import type {
  HookedStream,
  Instrumentation,
  ObservedSources,
  Operation,
  OperationStart,
  PushAttemptStart,
  PushOutcome,
  StoreCallStart,
  TraceIds,
} from './_hooks.js'
import { v1MethodName } from './_method-names.js'
import { OtelMetrics, pushOutcomeAttributes } from './_otel-metrics.js'
import { RegisteredTracer, SCOPE_NAME, SCOPE_VERSION } from './_registered-tracer.js'
import { type RequestFields, requestFields, resultFields, taskStateName } from './_wire-fields.js'

/**
 * The runtime's operations as OpenTelemetry spans, per the A2A semantic conventions (`docs/gen-ai/a2a.md` of
 * open-telemetry/semantic-conventions-genai): a SERVER span per operation named after its A2A v1.0 method, its
 * parent the trace context the request carries (or the transport's span, when an HTTP instrumentation made one),
 * made the active context while the method (and the agent's `execute`) runs; task lifecycle events as span events;
 * a follow-up linked to the span that started its task. Given the API module rather than importing it, so the
 * `A2A_TELEMETRY` setting can load it only when asked (`_app-telemetry.ts`).
 */

/** The parts of `@opentelemetry/api` used here (any 1.x has them). */
export type Api = Pick<
  typeof OtelApi,
  | 'trace'
  | 'context'
  | 'propagation'
  | 'createContextKey'
  | 'SpanKind'
  | 'ProxyTracerProvider'
  | 'metrics'
  | 'createNoopMeter'
  | 'INVALID_SPAN_CONTEXT'
  | 'ROOT_CONTEXT'
>

export interface OtelSettings {
  /** Messages and artifacts (text, data, file names) recorded on spans and events. */
  captureContent: boolean
  /** Tasks whose first span is remembered for links (`FirstSpans`). */
  maxLinkedTasks: number
}

/** Tasks whose first span a follow-up can link to: 10,000 span contexts are about a megabyte. */
export const DEFAULT_MAX_LINKED_TASKS = 10_000

/** What a span context holds when it names no trace (`INVALID_TRACEID` of the API). */
const INVALID_TRACE_ID = '00000000000000000000000000000000'
/** `SpanStatusCode.ERROR`, a number in every 1.x. */
const STATUS_ERROR = 2

/** Operations that start or continue a task's turn: a follow-up (a message naming its task) links to the first. */
const SENDS = new Set(['SendMessage', 'SendStreamingMessage'])
/** Operations that hear the events of the task their params name while they last. */
const FOLLOWING = new Set(['SubscribeToTask', 'CancelTask'])

const headersGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
}

export function otelInstrumentation(api: Api, settings: OtelSettings): Instrumentation {
  return new OtelInstrumentation(api, settings)
}

class OtelInstrumentation implements Instrumentation {
  readonly api: Api
  readonly captureContent: boolean
  /** The operation a context belongs to, found again when its task starts a turn. */
  readonly #operationKey: symbol
  readonly #firstSpans: FirstSpans<SpanContext>
  /** The operations hearing each task's events (a send for its turn, a subscription, a cancel): open ones only. */
  readonly #listening = new Map<string, Set<OtelOperation>>()
  readonly #tracer: RegisteredTracer
  #meterProvider: MeterProvider | undefined
  #metrics: OtelMetrics | undefined
  /** The apps' gauges and counters (`observe`), read at each collection. */
  readonly #sources = new Set<ObservedSources>()
  /** When each task this instance created began (`Date.now()`), for its duration when it ends: bounded as links. */
  readonly #taskStarts: FirstSpans<number>

  constructor(api: Api, settings: OtelSettings) {
    this.api = api
    this.captureContent = settings.captureContent
    this.#operationKey = api.createContextKey('a2a-runtime operation')
    this.#firstSpans = new FirstSpans(settings.maxLinkedTasks)
    this.#taskStarts = new FirstSpans(DEFAULT_MAX_LINKED_TASKS)
    this.#tracer = new RegisteredTracer(api)
  }

  /**
   * The instruments on the meter of the MeterProvider registered now, made again only when another one is; undefined
   * while none is (the API's no-op provider): then nothing is measured, and the app's sources are never read.
   */
  metricsNow(): OtelMetrics | undefined {
    const provider = this.api.metrics.getMeterProvider()
    if (provider !== this.#meterProvider) {
      this.#meterProvider = provider
      const meter = provider.getMeter(SCOPE_NAME, SCOPE_VERSION)
      this.#metrics = meter === this.api.createNoopMeter() ? undefined : new OtelMetrics(meter, this.#sources)
    }
    return this.#metrics
  }

  operation(start: OperationStart): Operation | undefined {
    const tracer = this.#tracer.now()
    const metrics = this.metricsNow()
    if (!tracer) return metrics && new OtelOperation(this, this.#untraced(), start, v1MethodName(start.method), metrics)
    const { api } = this
    const method = v1MethodName(start.method)
    const fields = requestFields(method, start.dialect, start.params)
    const active = api.context.active()
    const { parent, nested } = this.#parentOf(active, start.headers)
    const first = fields.taskId !== undefined && SENDS.has(method) ? this.#firstSpans.get(fields.taskId) : undefined
    const span = tracer.startSpan(
      method,
      {
        // One SERVER span per request: under a transport's SERVER span the A2A span is an INTERNAL one.
        kind: nested ? api.SpanKind.INTERNAL : api.SpanKind.SERVER,
        attributes: startAttributes(method, start, fields),
        ...(first && { links: [{ context: first }] }),
      },
      parent,
    )
    const operation = new OtelOperation(this, span, start, method, metrics)
    operation.context = api.trace.setSpan(parent, span).setValue(this.#operationKey, operation)
    if (fields.taskId !== undefined && FOLLOWING.has(method)) this.listen(fields.taskId, operation)
    return operation
  }

  /**
   * An operation's parent: the active span when it continues the caller's trace (a transport's span, an HTTP
   * instrumentation's, already does), else the trace context the request carries. A span active for another reason
   * (a server started under an application's own span: Node runs the requests in the context of `listen`) never hides
   * a caller's valid \`traceparent\` of another trace. `nested` when the parent is a SERVER span of this process.
   */
  #parentOf(active: Context, headers: Headers): { parent: Context; nested: boolean } {
    const { api } = this
    const span = api.trace.getSpan(active)
    if (!span) return { parent: api.propagation.extract(active, headers, headersGetter), nested: false }
    const extracted = api.propagation.extract(active, headers, headersGetter)
    const caller = api.trace.getSpanContext(extracted)
    const callerTrace = caller?.traceId
    if (callerTrace && callerTrace !== INVALID_TRACE_ID && callerTrace !== span.spanContext().traceId) {
      return { parent: extracted, nested: false }
    }
    // The API's Span has no kind; the SDK's spans (and most others) carry it.
    return { parent: active, nested: (span as { kind?: unknown }).kind === api.SpanKind.SERVER }
  }

  /** A span that records nothing, for an operation measured but not traced (a MeterProvider without a tracer). */
  #untraced(): Span {
    return this.api.trace.wrapSpanContext(this.api.INVALID_SPAN_CONTEXT)
  }

  turnStarted(task: Task, message: Message): void {
    const metrics = this.metricsNow()
    if (metrics) this.#turnMeasured(metrics, task)
    const operation = this.api.context.active().getValue(this.#operationKey) as OtelOperation | undefined
    if (!operation || operation.ended) return
    const { span } = operation
    span.setAttribute('a2a.task.id', task.id)
    span.setAttribute('gen_ai.conversation.id', task.contextId)
    span.setAttribute('a2a.message.id', message.messageId)
    if (this.captureContent) span.setAttribute('gen_ai.input.messages', messagesJson('user', message.parts))
    // A new task's first message is its whole history; a follow-up's span links to the span remembered here.
    if (task.history.length === 1) this.#firstSpans.remember(task.id, span.spanContext())
    this.listen(task.id, operation)
  }

  /** A new task starts its clock; a follow-up ends the wait of a task that asked for input. */
  #turnMeasured(metrics: OtelMetrics, task: Task): void {
    const now = Date.now()
    if (task.history.length === 1) {
      this.#taskStarts.remember(task.id, now)
    } else if (task.status.state === 'input-required') {
      const since = Date.parse(task.status.timestamp ?? '')
      if (Number.isFinite(since)) metrics.inputWait.record(Math.max(0, now - since) / 1000)
    }
  }

  taskEvent(task: Task, event: TaskEvent): void {
    const operations = this.#listening.get(task.id)
    if (operations) for (const operation of operations) operation.taskEvent(event)
    if (event.kind === 'status-update' && isTerminal(event.status.state)) this.#taskEnded(task.id, event.status.state)
  }

  #taskEnded(taskId: string, state: Task['status']['state']): void {
    this.#firstSpans.forget(taskId)
    const started = this.#taskStarts.get(taskId)
    if (started === undefined) return
    this.#taskStarts.forget(taskId)
    this.metricsNow()?.taskDuration.record((Date.now() - started) / 1000, { 'a2a.task.state': taskStateName(state) })
  }

  /**
   * The span context alone, not the active context: a queued notification keeps no operation (its span, its result)
   * alive, and a webhook the client chose is never sent the request's baggage.
   */
  eventTrace(): unknown {
    if (!this.#tracer.now()) return undefined
    const span = this.api.trace.getSpan(this.api.context.active())
    return span?.spanContext()
  }

  pushAttempt(attempt: PushAttemptStart): (<O extends PushOutcome>(outcome: O) => O) | undefined {
    const tracer = this.#tracer.now()
    const metrics = this.metricsNow()
    if (!tracer && !metrics) return undefined
    const span = tracer && this.#pushSpan(tracer, attempt)
    const begun = performance.now()
    return <O extends PushOutcome>(outcome: O): O => {
      const attributes = pushOutcomeAttributes(outcome)
      metrics?.pushRequestDuration.record((performance.now() - begun) / 1000, attributes)
      if (span) {
        span.setAttributes(attributes)
        if (!outcome.delivered) span.setStatus({ code: STATUS_ERROR })
        span.end()
      }
      return outcome
    }
  }

  /** The CLIENT span of a POST to a webhook, child of the trace its event happened in, announced in `traceparent`. */
  #pushSpan(tracer: Tracer, attempt: PushAttemptStart): Span {
    const { api } = this
    const { url } = attempt
    const traced = attempt.trace as SpanContext | undefined
    // Only the trace: the webhook learns nothing of the request's baggage.
    const parent = traced ? api.trace.setSpanContext(api.ROOT_CONTEXT, traced) : api.ROOT_CONTEXT
    const secure = url.protocol === 'https:'
    // The webhook is named by its host: its path and query often carry a secret (as the logs name its origin only).
    const attributes: Attributes = {
      'http.request.method': 'POST',
      'server.address': url.hostname,
      'server.port': url.port ? Number(url.port) : secure ? 443 : 80,
      'url.scheme': secure ? 'https' : 'http',
      'a2a.task.id': attempt.taskId,
    }
    if (attempt.resendCount > 0) attributes['http.request.resend_count'] = attempt.resendCount
    const span = tracer.startSpan('POST', { kind: api.SpanKind.CLIENT, attributes }, parent)
    api.propagation.inject(api.trace.setSpan(parent, span), attempt.headers)
    return span
  }

  pushDelivered(outcome: PushOutcome): void {
    this.metricsNow()?.pushDeliveries.add(1, pushOutcomeAttributes({ ...outcome, status: undefined }))
  }

  storeCall<T>(call: StoreCallStart, io: () => Promise<T>): Promise<T> {
    const tracer = this.#tracer.now()
    const metrics = this.metricsNow()
    if (!tracer && !metrics) return io()
    const { api } = this
    const active = api.context.active()
    // Spans only under an operation's: a call of background work (a sweep) would be a trace of its own each time.
    const span = tracer && api.trace.getSpan(active)?.isRecording() ? this.#storeSpan(tracer, call, active) : undefined
    const begun = performance.now()
    const ended = (error?: unknown) => {
      const attributes: Attributes = { 'a2a.store.name': call.store, 'a2a.store.operation': call.operation }
      if (error !== undefined) attributes['error.type'] = errorTypeOf(error)
      metrics?.storeDuration.record((performance.now() - begun) / 1000, attributes)
      if (!span) return
      if (error !== undefined) {
        span.setAttribute('error.type', attributes['error.type'] as string)
        span.setStatus({ code: STATUS_ERROR })
      }
      span.end()
    }
    let running: Promise<T>
    try {
      running = span ? api.context.with(api.trace.setSpan(active, span), io) : io()
    } catch (error) {
      ended(error)
      throw error
    }
    return running.then(
      (value) => {
        ended()
        return value
      },
      (error: unknown) => {
        ended(error)
        throw error
      },
    )
  }

  /**
   * A store call's span: CLIENT to Redis or PostgreSQL (the database conventions' `db.*`), INTERNAL around the file
   * store's disk.
   */
  #storeSpan(tracer: Tracer, call: StoreCallStart, parent: Context): Span {
    const database = call.store !== 'file'
    const attributes: Attributes = { 'a2a.store.name': call.store, 'a2a.store.operation': call.operation }
    if (database) {
      attributes['db.system.name'] = call.store === 'postgres' ? 'postgresql' : 'redis'
      attributes['db.operation.name'] = call.operation
    }
    if (call.taskId !== undefined) attributes['a2a.task.id'] = call.taskId
    const kind = database ? this.api.SpanKind.CLIENT : this.api.SpanKind.INTERNAL
    return tracer.startSpan(`${call.store} ${call.operation}`, { kind, attributes }, parent)
  }

  observe(sources: ObservedSources): () => void {
    this.#sources.add(sources)
    // Instruments made now: a collection reads the sources even before the first request.
    this.metricsNow()
    return () => this.#sources.delete(sources)
  }

  currentTrace(): TraceIds | undefined {
    const span = this.api.trace.getSpan(this.api.context.active())
    if (!span) return undefined
    const { traceId, spanId, traceFlags } = span.spanContext()
    // A span with no trace behind it (the API's no-op span carries the all-zero trace id) names no trace.
    return traceId === INVALID_TRACE_ID ? undefined : { traceId, spanId, flags: traceFlags }
  }

  listen(taskId: string, operation: OtelOperation): void {
    if (operation.listeningTo === taskId) return
    if (operation.listeningTo !== undefined) this.unlisten(operation)
    const operations = this.#listening.get(taskId)
    if (operations) operations.add(operation)
    else this.#listening.set(taskId, new Set([operation]))
    operation.listeningTo = taskId
  }

  unlisten(operation: OtelOperation): void {
    const taskId = operation.listeningTo
    if (taskId === undefined) return
    operation.listeningTo = undefined
    const operations = this.#listening.get(taskId)
    if (!operations) return
    operations.delete(operation)
    if (operations.size === 0) this.#listening.delete(taskId)
  }
}

/** The binding a transport is, as A2A's cards name it (`protocolBinding`). */
const BINDINGS = { jsonrpc: 'JSONRPC', 'http+json': 'HTTP+JSON', grpc: 'GRPC' } as const

/** An operation's attributes on its duration: what it was, in which dialect and binding (no id: bounded values). */
function requestAttributes(method: string, start: OperationStart): Attributes {
  const attributes: Attributes = { 'a2a.method.name': method, 'a2a.protocol.binding': BINDINGS[start.transport] }
  if (start.dialect !== 'platform') attributes['a2a.protocol.version'] = start.dialect === 'a2a-1.0' ? '1.0' : '0.3'
  return attributes
}

/** What an operation's span carries from the start: what samplers may decide on. */
function startAttributes(method: string, start: OperationStart, fields: RequestFields): Attributes {
  const { card, dialect } = start
  const attributes: Attributes = { 'a2a.method.name': method, 'gen_ai.agent.name': card.name }
  if (card.description) attributes['gen_ai.agent.description'] = card.description
  if (card.version) attributes['gen_ai.agent.version'] = card.version
  if (dialect !== 'platform') attributes['a2a.protocol.version'] = dialect === 'a2a-1.0' ? '1.0' : '0.3'
  if (fields.taskId !== undefined) attributes['a2a.task.id'] = fields.taskId
  if (fields.messageId !== undefined) attributes['a2a.message.id'] = fields.messageId
  if (fields.contextId !== undefined) attributes['gen_ai.conversation.id'] = fields.contextId
  if (fields.tenant !== undefined) attributes['a2a.tenant'] = fields.tenant
  if (fields.referenceTaskIds) attributes['a2a.message.reference_task_ids'] = fields.referenceTaskIds
  return attributes
}

/** Where an operation's stream is: an operation that opened one ends once its method returned and the stream ended. */
const NO_STREAM = 0
const STREAM_OPEN = 1
const STREAM_ENDED = 2

class OtelOperation implements Operation {
  context!: Context
  ended = false
  /** The task whose events the span records (`OtelInstrumentation.listen`). */
  listeningTo: string | undefined
  #returned: unknown
  #hasReturned = false
  #stream = NO_STREAM
  readonly errorCode: OperationStart['errorCode']
  readonly transport: OperationStart['transport']
  /** The operation's attributes on `a2a.server.request.duration`, `error.type` added if it fails. */
  readonly #measured: Attributes | undefined
  readonly #begun = performance.now()

  constructor(
    readonly instrumentation: OtelInstrumentation,
    /** A span that records nothing when only metrics are (`context` is then left unset). */
    readonly span: Span,
    start: OperationStart,
    method: string,
    readonly metrics: OtelMetrics | undefined,
  ) {
    this.errorCode = start.errorCode
    this.transport = start.transport
    if (metrics) this.#measured = requestAttributes(method, start)
  }

  run<T>(method: () => T): T {
    // Measured only: the method runs as without telemetry.
    if (!this.context) return method()
    return this.instrumentation.api.context.with(this.context, method)
  }

  streamOpened(stream: HookedStream): HookedStream {
    this.#stream = STREAM_OPEN
    let clientLeft: (() => void) | undefined
    const left = () => {
      if (this.#stream === STREAM_OPEN) this.span.addEvent('a2a.stream.client_left')
      this.#streamEnded()
      clientLeft?.()
    }
    stream.onCancel(left)
    return {
      send: (frame, seq) => stream.send(frame, seq),
      close: () => {
        stream.close()
        this.#streamEnded()
      },
      // The stream keeps one callback: the method's is called from the operation's.
      onCancel: (callback) => {
        clientLeft = callback
        stream.onCancel(left)
      },
      get response() {
        return stream.response
      },
    }
  }

  #streamEnded(): void {
    if (this.#stream !== STREAM_OPEN) return
    this.#stream = STREAM_ENDED
    if (this.#hasReturned) this.#end(this.#returned)
  }

  returned(result: unknown): void {
    this.#hasReturned = true
    this.#returned = result
    if (this.#stream !== STREAM_OPEN) this.#end(result)
  }

  failed(error: unknown): void {
    if (this.ended) return
    const { span } = this
    const errorType = String(this.errorCode(error))
    span.setAttribute('error.type', errorType)
    if (this.#measured) this.#measured['error.type'] = errorType
    // A SERVER span is an ERROR only for the server's failures; a client's mistake (an unknown task, bad params, a
    // 4xx) is said by error.type alone, as the conventions leave the status unset for codes the client caused.
    if (error instanceof A2AError) {
      if (serverSide(this.transport, Number(errorType))) span.setStatus({ code: STATUS_ERROR, message: error.message })
    } else {
      // Not the agent's nor the client's doing: the runtime answered "Internal error"; the span says what it was.
      span.recordException(error instanceof Error ? error : String(error))
      span.setStatus({ code: STATUS_ERROR })
    }
    this.#finish()
  }

  taskEvent(event: TaskEvent): void {
    if (this.ended) return
    const { span } = this
    const content = this.instrumentation.captureContent
    if (event.kind === 'status-update') {
      const state = taskStateName(event.status.state)
      span.setAttribute('a2a.task.state', state)
      const attributes: Attributes = { 'a2a.task.state': state, 'a2a.event.final': event.final }
      const { message } = event.status
      if (content && message) attributes['gen_ai.output.messages'] = messagesJson(roleOf(message.role), message.parts)
      span.addEvent('a2a.task.status_update', attributes)
      return
    }
    const { artifact } = event
    const attributes: Attributes = {
      'a2a.artifact.id': artifact.artifactId,
      'a2a.artifact.append': event.append,
      'a2a.artifact.last_chunk': event.lastChunk,
    }
    if (content) attributes['gen_ai.output.messages'] = messagesJson('assistant', artifact.parts)
    span.addEvent('a2a.task.artifact_update', attributes)
  }

  /** Ends with what the method answered: the task's id, context and state as the client reads them. */
  #end(result: unknown): void {
    if (this.ended) return
    const fields = resultFields(result)
    const { span } = this
    if (fields.taskId !== undefined) span.setAttribute('a2a.task.id', fields.taskId)
    if (fields.contextId !== undefined) span.setAttribute('gen_ai.conversation.id', fields.contextId)
    if (fields.state !== undefined) span.setAttribute('a2a.task.state', fields.state)
    this.#finish()
  }

  #finish(): void {
    this.ended = true
    // The result is let go: a span or a context still held elsewhere does not keep it alive.
    this.#returned = undefined
    this.instrumentation.unlisten(this)
    this.span.end()
    if (this.#measured) this.metrics?.requestDuration.record((performance.now() - this.#begun) / 1000, this.#measured)
  }
}

/** JSON-RPC codes of the server's own failures: Internal error, and A2A's invalid agent response. */
const SERVER_RPC_CODES = new Set([-32603, -32006])
/** gRPC statuses of the server's failures, per the RPC conventions for SERVER spans. */
const SERVER_GRPC_CODES = new Set([2, 4, 12, 13, 14, 15])

/** Whether the code a failure is answered with in `transport` says the server failed (not the client). */
function serverSide(transport: OperationStart['transport'], code: number): boolean {
  if (transport === 'http+json') return code >= 500
  if (transport === 'grpc') return SERVER_GRPC_CODES.has(code)
  // JSON-RPC: -32000 to -32099 are implementation-defined server errors unless A2A gives them a meaning.
  return SERVER_RPC_CODES.has(code) || (code <= -32000 && code >= -32099 && !A2A_CLIENT_RPC_CODES.has(code))
}

/** A2A's JSON-RPC codes for what the client did wrong (no credentials, an unknown task, an unsupported version…). */
const A2A_CLIENT_RPC_CODES = new Set([-32000, -32001, -32002, -32003, -32004, -32005, -32007, -32009])

/** `error.type` of a failed store call: its system error code (`ENOSPC`) or its class (`ServerUnavailableError`). */
function errorTypeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string' && code.length <= 32) return code
  return error instanceof Error ? error.name : '_OTHER'
}
