import type { Attributes, Context, Span, TextMapGetter } from '@opentelemetry/api'
import { isObject } from '../_is-object.js'
import { wireMessagesJson, wireRoleOf } from './_client-content.js'
import type { ClientCall, ClientCallStart, ClientInstrumentation } from './_client-hooks.js'
import type { Api } from './_otel.js'
import { RegisteredTracer } from './_registered-tracer.js'
import { requestFields, resultFields, taskStateName } from './_wire-fields.js'

/**
 * The client's calls as OpenTelemetry spans, per the A2A semantic conventions (`docs/gen-ai/a2a.md`): a CLIENT span per
 * call named after its A2A v1.0 method, a child of the caller's active context (so a GetTask polling a task is a
 * sibling of the SendMessage that started it, not its child), from the call until its answer, or for a stream until
 * it ends; its trace context goes to the agent in each request's headers through the registered propagator, so the
 * agent's SERVER span joins the caller's trace. Given the API module, as the server's side is (`_otel.ts`).
 */

export interface OtelClientSettings {
  /** The client's message and what the agent answers recorded on the span and its events. */
  captureContent: boolean
  /**
   * The trace context a call continues when the caller's context has none (W3C `traceparent`, `tracestate`): how the
   * `a2a` commands put their calls in the trace of the script that runs them.
   */
  defaultParent?: Readonly<Record<string, string>>
}

/** `SpanStatusCode.ERROR`, a number in every 1.x. */
const STATUS_ERROR = 2

const recordGetter: TextMapGetter<Readonly<Record<string, string>>> = {
  get: (carrier, key) => carrier[key],
  keys: (carrier) => Object.keys(carrier),
}

export function otelClientInstrumentation(api: Api, settings: OtelClientSettings): ClientInstrumentation {
  return new OtelClientInstrumentation(api, settings)
}

class OtelClientInstrumentation implements ClientInstrumentation {
  readonly #tracer: RegisteredTracer

  constructor(
    readonly api: Api,
    readonly settings: OtelClientSettings,
  ) {
    this.#tracer = new RegisteredTracer(api)
  }

  #parent(): Context {
    const { api } = this
    const active = api.context.active()
    const fallback = this.settings.defaultParent
    if (!fallback || api.trace.getSpan(active)) return active
    return api.propagation.extract(active, fallback, recordGetter)
  }

  call(start: ClientCallStart): ClientCall {
    const { api } = this
    const parent = this.#parent()
    const tracer = this.#tracer.now()
    // No SDK: no span, but the caller's trace context (if a propagator is registered) still travels.
    if (!tracer) return new OtelClientCall(api, undefined, parent, false)
    const span = tracer.startSpan(
      start.method,
      { kind: api.SpanKind.CLIENT, attributes: this.#startAttributes(start) },
      parent,
    )
    return new OtelClientCall(api, span, api.trace.setSpan(parent, span), this.settings.captureContent)
  }

  #startAttributes(start: ClientCallStart): Attributes {
    const { method, agent, request } = start
    const fields = requestFields(method, 'a2a-1.0', request)
    const attributes: Attributes = {
      'a2a.method.name': method,
      'a2a.protocol.version': start.a2aVersion,
      'gen_ai.agent.name': agent.name,
    }
    if (agent.description) attributes['gen_ai.agent.description'] = agent.description
    if (agent.version) attributes['gen_ai.agent.version'] = agent.version
    Object.assign(attributes, serverOf(start.url))
    if (fields.taskId !== undefined) attributes['a2a.task.id'] = fields.taskId
    if (fields.messageId !== undefined) attributes['a2a.message.id'] = fields.messageId
    if (fields.contextId !== undefined) attributes['gen_ai.conversation.id'] = fields.contextId
    if (fields.tenant !== undefined) attributes['a2a.tenant'] = fields.tenant
    if (fields.referenceTaskIds) attributes['a2a.message.reference_task_ids'] = fields.referenceTaskIds
    if (this.settings.captureContent) {
      const message = (request as { message?: unknown }).message
      if (isObject(message))
        attributes['gen_ai.input.messages'] = wireMessagesJson([{ role: 'user', parts: message.parts }])
    }
    return attributes
  }
}

/** The host and port of the interface's URL (`server.address`, `server.port`); none for a URL that is not one. */
function serverOf(url: string): Attributes {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return {}
  }
  const port = parsed.port ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80
  return { 'server.address': parsed.hostname.replace(/^\[(.*)\]$/, '$1'), 'server.port': port }
}

class OtelClientCall implements ClientCall {
  readonly headers: Record<string, string> = {}
  #ended = false

  constructor(
    readonly api: Api,
    /** Undefined when nothing is recorded. */
    readonly span: Span | undefined,
    readonly context: Context,
    readonly captureContent: boolean,
  ) {
    api.propagation.inject(context, this.headers)
  }

  run<T>(request: () => T): T {
    return this.span ? this.api.context.with(this.context, request) : request()
  }

  streamEvent(response: object): void {
    const { span } = this
    if (!span || this.#ended) return
    const event = response as Record<string, unknown>
    const content = this.captureContent
    if (isObject(event.statusUpdate)) {
      const { taskId, contextId, status } = event.statusUpdate
      this.#ids(taskId, contextId)
      const attributes: Attributes = {}
      if (isObject(status) && typeof status.state === 'string') {
        const state = taskStateName(status.state)
        span.setAttribute('a2a.task.state', state)
        attributes['a2a.task.state'] = state
        if (content && isObject(status.message)) attributes['gen_ai.output.messages'] = outputOf([status.message])
      }
      span.addEvent('a2a.task.status_update', attributes)
    } else if (isObject(event.artifactUpdate)) {
      const { taskId, contextId, artifact, append, lastChunk } = event.artifactUpdate
      this.#ids(taskId, contextId)
      const attributes: Attributes = {
        'a2a.artifact.append': append === true,
        'a2a.artifact.last_chunk': lastChunk === true,
      }
      if (isObject(artifact)) {
        if (typeof artifact.artifactId === 'string') attributes['a2a.artifact.id'] = artifact.artifactId
        if (content)
          attributes['gen_ai.output.messages'] = wireMessagesJson([{ role: 'assistant', parts: artifact.parts }])
      }
      span.addEvent('a2a.task.artifact_update', attributes)
    } else {
      // A Task (the stream's first event) or the agent's Message: what it says of the task.
      const fields = resultFields(event)
      this.#ids(fields.taskId, fields.contextId)
      if (fields.state !== undefined) span.setAttribute('a2a.task.state', fields.state)
      const attributes: Attributes = {}
      if (fields.state !== undefined) attributes['a2a.task.state'] = fields.state
      if (isObject(event.message)) {
        if (typeof event.message.messageId === 'string') attributes['a2a.message.id'] = event.message.messageId
        if (content) attributes['gen_ai.output.messages'] = outputOf([event.message])
      }
      span.addEvent(isObject(event.message) ? 'a2a.message' : 'a2a.task', attributes)
    }
  }

  /** The task and context a stream's events name, once known. */
  #ids(taskId: unknown, contextId: unknown): void {
    const span = this.span!
    if (typeof taskId === 'string' && taskId) span.setAttribute('a2a.task.id', taskId)
    if (typeof contextId === 'string' && contextId) span.setAttribute('gen_ai.conversation.id', contextId)
  }

  returned(result: unknown): void {
    const { span } = this
    if (!span || this.#ended) return
    if (result !== undefined) {
      const fields = resultFields(result)
      if (fields.taskId !== undefined) span.setAttribute('a2a.task.id', fields.taskId)
      if (fields.contextId !== undefined) span.setAttribute('gen_ai.conversation.id', fields.contextId)
      if (fields.state !== undefined) span.setAttribute('a2a.task.state', fields.state)
      if (this.captureContent) {
        const output = answerOf(result)
        if (output.length > 0) span.setAttribute('gen_ai.output.messages', outputOf(output))
      }
    }
    this.#end()
  }

  failed(error: unknown, errorType: string): void {
    const { span } = this
    if (!span || this.#ended) return
    span.setAttribute('error.type', errorType)
    span.setStatus({ code: STATUS_ERROR, ...(error instanceof Error && { message: error.message }) })
    this.#end()
  }

  #end(): void {
    this.#ended = true
    this.span!.end()
  }
}

/** The agent's messages in an answer: a Message, or a Task's status message and its artifacts. */
function answerOf(result: unknown): Array<Record<string, unknown>> {
  if (!isObject(result)) return []
  if (isObject(result.message)) return [result.message]
  const task = isObject(result.task) ? result.task : result
  const answer: Array<Record<string, unknown>> = []
  if (isObject(task.status) && isObject(task.status.message)) answer.push(task.status.message)
  if (Array.isArray(task.artifacts))
    for (const artifact of task.artifacts) if (isObject(artifact)) answer.push({ role: 'ROLE_AGENT', ...artifact })
  return answer
}

const outputOf = (messages: ReadonlyArray<Record<string, unknown>>) =>
  wireMessagesJson(messages.map((message) => ({ role: wireRoleOf(message.role), parts: message.parts })))
