/**
 * What an instrumentation of the A2A client (`connect`, `a2a-runtime/client`) is told: each call as it starts, what it
 * answers, and how it ends. The client asks for a call only when it was given `telemetry`, so a client without it
 * runs as before. Nothing here names OpenTelemetry: the client core stays free of it (`_client-otel.ts` implements
 * this with OpenTelemetry).
 */
export interface ClientInstrumentation {
  /** A call of the client begins, in the caller's async context (which is its parent). */
  call(start: ClientCallStart): ClientCall
}

/** What a call is when it starts. */
export interface ClientCallStart {
  /** The A2A v1.0 operation (`SendMessage`, `GetTask`…). */
  method: string
  /** Its request as sent, in ProtoJSON (the interface's tenant set): ids are read from it. */
  request: object
  /** The address of the interface spoken to. */
  url: string
  /** The A2A version every request carries. */
  a2aVersion: string
  /** The agent, as its card names it. */
  agent: { readonly name: string; readonly description?: string; readonly version?: string }
}

/** One call underway. */
export interface ClientCall {
  /** Headers that carry the call's trace context to the agent (`traceparent`…); empty when there is none. */
  readonly headers: Readonly<Record<string, string>>
  /** Runs the call's requests in its context (what an HTTP instrumentation's span nests under). */
  run<T>(request: () => T): T
  /** One event of the call's stream, as the agent sent it. */
  streamEvent(response: object): void
  /** The call answered `result` (a unary call), or its stream ended or its caller stopped reading (undefined). */
  returned(result: unknown): void
  /** The call failed; `errorType` is what it failed with (an A2A error's code, a failure's kind, an error's name). */
  failed(error: unknown, errorType: string): void
}
