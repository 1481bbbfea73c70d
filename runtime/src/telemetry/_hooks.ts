import type { Message, Principal, Task, TaskEvent } from '../types.js'

/**
 * What an instrumentation of the runtime is told: each A2A operation as it starts and ends, and the life of the tasks
 * this instance runs. The runtime calls these only when an app has one (`telemetry`), so an app without one pays a
 * branch per request and per event. Nothing here names OpenTelemetry: its implementation (`_otel.ts`) is one of
 * possibly several, and the core and the bindings stay free of it.
 */
export interface Instrumentation {
  /**
   * An A2A operation reaches its method; what it returns runs the method and hears how it ends. Undefined when this
   * one is not recorded (no OpenTelemetry SDK is registered): the method then runs as without telemetry.
   */
  operation(start: OperationStart): Operation | undefined
  /**
   * A message starts a turn of a task (a new task, or a follow-up resuming one), in the async context of the
   * operation that sent it: the turn, the agent's `execute` included, runs in that context.
   */
  turnStarted(task: Task, message: Message): void
  /** An event of a task this instance runs, after its store has it and before its subscribers do. */
  taskEvent(task: Task, event: TaskEvent): void
  /**
   * The trace of the active context (an operation's span while its method and the agent run), which the runtime's log
   * lines carry; undefined outside any recorded trace. Asked only by a logger the app's instrumentation is given.
   */
  currentTrace(): TraceIds | undefined
  /**
   * The trace a task's event is produced in (the operation running its turn), kept with the push notification of
   * that event so its delivery joins the trace later. Undefined when nothing is traced.
   */
  eventTrace(): unknown
  /**
   * A push notification is about to be posted to a webhook: the instrumentation may add to `headers` (`traceparent`).
   * What it returns is called with the attempt's outcome (and answers it); undefined when nothing is recorded.
   */
  pushAttempt(attempt: PushAttemptStart): (<O extends PushOutcome>(outcome: O) => O) | undefined
  /** A push notification was delivered, or given up (its last attempt's outcome). */
  pushDelivered(outcome: PushOutcome): void
  /** A store call that touches disk or network, run by `io` (called at once); answers what `io` answers. */
  storeCall<T>(call: StoreCallStart, io: () => Promise<T>): Promise<T>
  /** An app's gauges and counters, read at each collection from now on; the function returned stops that. */
  observe(sources: ObservedSources): () => void
}

/** One attempt at posting a push notification. */
export interface PushAttemptStart {
  url: URL
  /** The request's headers, which the instrumentation may add to. */
  headers: Record<string, string>
  taskId: string
  /** Attempts of this notification before this one (0 for the first). */
  resendCount: number
  /** `eventTrace()` as it was when the notification's event happened. */
  trace: unknown
}

/** How a push attempt ended: the webhook's HTTP status, when it answered; why not, when not delivered. */
export interface PushOutcome {
  delivered: boolean
  status?: number | undefined
  /** A short code of what went wrong without an answer (`timeout`, `ECONNREFUSED`, `refused`…). */
  error?: string | undefined
}

/** The stores that do I/O, and what the runtime asks of them. */
export interface StoreCallStart {
  store: 'file' | 'redis' | 'postgres'
  /** The `TaskStore` method (`create`, `append`, `get`…), or `pushConfigs.<method>`. */
  operation: string
  taskId?: string | undefined
}

/**
 * What an app holds, read when metrics are collected (never on the request path): counts and bytes of its budgets,
 * and how often each refused. Budgets are named by the option that sets them.
 */
export interface ObservedSources {
  /** Tasks whose agent runs on this instance now. */
  runningTasks(): number
  /** Streams open now (SSE and gRPC). */
  openStreams(): number
  /** Byte budgets: bytes held against each now, and its limit. */
  budgets: ReadonlyArray<{ readonly name: string; used(): number; readonly limit: number }>
  /** Every budget: how many times it refused something so far. */
  refusals: ReadonlyArray<{ readonly name: string; count(): number }>
}

/** A trace as log lines name it (W3C trace context): ids in lowercase hex, the trace flags (1: sampled). */
export interface TraceIds {
  readonly traceId: string
  readonly spanId: string
  readonly flags: number
}

/** The transport an operation arrived on. */
export type Transport = 'jsonrpc' | 'http+json' | 'grpc'

/** The wire dialect answering (as `PushDialect`): the platform's, A2A v0.3 or A2A v1.0. */
export type Dialect = 'platform' | 'a2a-0.3' | 'a2a-1.0'

/** What an operation is when it starts. */
export interface OperationStart {
  /** The method as the request named it (`message/send`, `SendMessage`); A2A v1.0 names it `v1Method` of it. */
  method: string
  dialect: Dialect
  transport: Transport
  /** The request's headers: the trace context (`traceparent`, `tracestate`, `baggage`) is read from them. */
  headers: Headers
  /** Who calls; undefined when the agent checks no credentials. */
  principal: Principal | undefined
  /** The params as they arrived (not yet validated: read them with care). */
  params: unknown
  /** The card of the agent served now. */
  card: { readonly name: string; readonly description?: string | undefined; readonly version?: string | undefined }
  /** The code a failure is answered with in this transport: a JSON-RPC error code, an HTTP or a gRPC status. */
  errorCode: (error: unknown) => number
}

/** One operation underway. */
export interface Operation {
  /** Runs the method in the operation's context (what the agent's own spans nest under). */
  run<T>(method: () => T): T
  /** The method opened a stream: the operation ends when the stream closes or its client leaves, not on return. */
  streamOpened(stream: HookedStream): HookedStream
  /** The method returned `result` (a streaming one, its stream's response). */
  returned(result: unknown): void
  /** The method threw. */
  failed(error: unknown): void
}

/** A stream as an operation sees it (structurally the bindings' `EventStream`). */
export interface HookedStream {
  send(frame: string | object, seq?: number): void
  close(): void
  onCancel(callback: () => void): void
  readonly response: Response
}
