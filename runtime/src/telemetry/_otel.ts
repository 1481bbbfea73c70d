import type * as OtelApi from '@opentelemetry/api'
import type { Attributes, Context, Span, SpanContext, TextMapGetter, Tracer, TracerProvider } from '@opentelemetry/api'
import { isTerminal } from '../core/_lifecycle.js'
import { A2AError } from '../errors.js'
import type { Message, Task, TaskEvent } from '../types.js'
import { messagesJson, roleOf } from './_content.js'
import { FirstSpans } from './_first-spans.js'
import type { HookedStream, Instrumentation, Operation, OperationStart, TraceIds } from './_hooks.js'
import { v1MethodName } from './_method-names.js'
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
  'trace' | 'context' | 'propagation' | 'createContextKey' | 'SpanKind' | 'ProxyTracerProvider'
>

export interface OtelSettings {
  /** Messages and artifacts (text, data, file names) recorded on spans and events. */
  captureContent: boolean
  /** Tasks whose first span is remembered for links (`FirstSpans`). */
  maxLinkedTasks: number
}

/** Tasks whose first span a follow-up can link to: 10,000 span contexts are about a megabyte. */
export const DEFAULT_MAX_LINKED_TASKS = 10_000

const TRACER_NAME = 'a2a-runtime'
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
  #provider: TracerProvider | undefined
  #tracer: Tracer | undefined

  constructor(api: Api, settings: OtelSettings) {
    this.api = api
    this.captureContent = settings.captureContent
    this.#operationKey = api.createContextKey('a2a-runtime operation')
    this.#firstSpans = new FirstSpans(settings.maxLinkedTasks)
  }

  /**
   * The tracer of the provider registered now, asked again only when another one is; undefined while none is (the
   * API's own proxy has no SDK behind it): then an operation records nothing and costs next to nothing.
   */
  #tracerNow(): Tracer | undefined {
    const global = this.api.trace.getTracerProvider()
    // The API's proxy, unless another copy of the API registered its own: the SDK behind it, if any, is its delegate.
    const proxy = global instanceof this.api.ProxyTracerProvider ? global : undefined
    const provider = proxy ? proxy.getDelegate() : global
    if (provider !== this.#provider) {
      this.#provider = provider
      this.#tracer = proxy ? proxy.getDelegateTracer(TRACER_NAME) : global.getTracer(TRACER_NAME)
    }
    return this.#tracer
  }

  operation(start: OperationStart): Operation | undefined {
    const tracer = this.#tracerNow()
    if (!tracer) return undefined
    const { api } = this
    const method = v1MethodName(start.method)
    const fields = requestFields(method, start.dialect, start.params)
    const active = api.context.active()
    // A transport span (an HTTP instrumentation's) already continues the caller's trace: the A2A span goes under it.
    const parent = api.trace.getSpan(active) ? active : api.propagation.extract(active, start.headers, headersGetter)
    const first = fields.taskId !== undefined && SENDS.has(method) ? this.#firstSpans.get(fields.taskId) : undefined
    const span = tracer.startSpan(
      method,
      {
        kind: api.SpanKind.SERVER,
        attributes: startAttributes(method, start, fields),
        ...(first && { links: [{ context: first }] }),
      },
      parent,
    )
    const operation = new OtelOperation(this, span, start.errorCode)
    operation.context = api.trace.setSpan(parent, span).setValue(this.#operationKey, operation)
    if (fields.taskId !== undefined && FOLLOWING.has(method)) this.listen(fields.taskId, operation)
    return operation
  }

  turnStarted(task: Task, message: Message): void {
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

  taskEvent(task: Task, event: TaskEvent): void {
    const operations = this.#listening.get(task.id)
    if (operations) for (const operation of operations) operation.taskEvent(event)
    if (event.kind === 'status-update' && isTerminal(event.status.state)) this.#firstSpans.forget(task.id)
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

  constructor(
    readonly instrumentation: OtelInstrumentation,
    readonly span: Span,
    readonly errorCode: OperationStart['errorCode'],
  ) {}

  run<T>(method: () => T): T {
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
    span.setAttribute('error.type', String(this.errorCode(error)))
    if (error instanceof A2AError) span.setStatus({ code: STATUS_ERROR, message: error.message })
    else {
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
    this.instrumentation.unlisten(this)
    this.span.end()
  }
}
