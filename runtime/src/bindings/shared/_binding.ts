import type { AgentCoreRequest } from '../../agent.js'
import type { TaskEngine } from '../../core/_engine.js'
import type { A2AError } from '../../errors.js'
import type { JsonRpcId } from '../../http/_jsonrpc.js'
import type { PushService } from '../../push/_service.js'
import type { PushDialect } from '../../push/push-config.js'
import type { Principal } from '../../types.js'
import type { InputModes } from './_input-modes.js'

export interface CallContext {
  /** The request id, which some dialects repeat on every stream event. */
  id: JsonRpcId
  engine: TaskEngine
  /** The card's `capabilities.streaming`. */
  streaming: boolean
  /** The card's `defaultOutputModes`. */
  outputModes: string[]
  /** The media types the card takes in a message (its `defaultInputModes` and its skills' `inputModes`). */
  inputModes: InputModes
  /** The request's headers (`Last-Event-ID` is read by the methods that stream). */
  headers: Headers
  /** Streams carry `id:` lines on the platform dialect too (the A2A dialects always send them). */
  eventIds: boolean
  /** Opens a stream of events (an SSE response with the app's heartbeat, or a gRPC server stream), counted against
   *  the app's limit of open streams. */
  openStream(): EventStream
  /**
   * One A2A v1.0 stream result (a StreamResponse) as this binding frames it: a JSON-RPC response carrying the request
   * id, or the result alone (HTTP+JSON text; over gRPC the object itself, which the stream encodes once to its binary
   * message). Module-level functions, so a request makes no closure for it.
   */
  frameV1(result: object, id: JsonRpcId): StreamFrame
  /** Push notifications, when the card declares them. */
  push: PushService | undefined
  /** The dialect answering: webhooks configured in it receive its shapes. */
  dialect: PushDialect
  /** Who is calling; undefined when the agent checks no credentials (then every caller is the same). */
  principal: Principal | undefined
  /** The AgentCore Runtime headers of the request (`ctx.agentCore`). */
  agentCore: AgentCoreRequest | undefined
  /** The authenticated extended card in a dialect's shape; undefined when the agent declares none. */
  extendedCard: ((dialect: 'a2a-1.0' | 'a2a-0.3') => object) | undefined
}

/**
 * One event as a binding's stream takes it: the text of an SSE event, or (gRPC) the result a gRPC stream encodes.
 * A binding gives its calls its stream and its `frameV1` together, so a stream only meets its own binding's frames.
 */
export type StreamFrame = string | object

/** Where a streaming method sends its events: what a binding's stream offers the methods (`SseStream` over HTTP). */
export interface EventStream {
  /** Sends one event, numbered `seq` when the client may resume after it. */
  send(frame: StreamFrame, seq?: number): void
  /** Ends the stream after what was sent. */
  close(): void
  /** Called once if the client goes away before `close()`; at once if it already has. */
  onCancel(callback: () => void): void
  /** The HTTP answer carrying the stream (a gRPC stream has none: its handler ignores what the method returns). */
  readonly response: Response
}

/** Returns the JSON-RPC `result`, or a `Response` when the method streams. */
export type MethodHandler = (params: unknown, call: CallContext) => Promise<unknown>

/** One wire dialect: its methods and how core errors read in it. */
export interface Binding {
  readonly name: PushDialect
  readonly methods: ReadonlyMap<string, MethodHandler>
  wireError(error: A2AError): A2AError
}
