import type { CallContext, EventStream } from '../bindings/shared/_binding.js'
import type { TaskEngine } from '../core/_engine.js'
import type { PushDialect } from '../push/push-config.js'
import type { Principal } from '../types.js'
import { agentCoreRequest } from './_agentcore-request.js'
import type { JsonRpcId } from './_jsonrpc.js'
import type { ServedAgent } from './_served-agent.js'

/** What every call of one binding shares: the app's engine and open streams, numbering, how v1.0 results are framed. */
export interface BindingParts {
  engine: TaskEngine
  eventIds: boolean
  openStream(): EventStream
  frameV1: CallContext['frameV1']
}

/**
 * The context a binding's method runs in, the same for JSON-RPC, HTTP+JSON and gRPC: what the agent served now
 * declares, the caller, and where the extended card says the agent is (`cardUrl`, given only when it has one).
 * Positional, so a request allocates the context and nothing around it.
 */
export function callContext(
  parts: BindingParts,
  current: ServedAgent,
  id: JsonRpcId,
  headers: Headers,
  dialect: PushDialect,
  principal: Principal | undefined,
  cardUrl: (() => string) | undefined,
): CallContext {
  return {
    id,
    engine: parts.engine,
    streaming: current.streaming,
    outputModes: current.template.defaultOutputModes,
    inputModes: current.inputModes,
    headers,
    eventIds: parts.eventIds,
    openStream: parts.openStream,
    frameV1: parts.frameV1,
    push: current.push,
    dialect,
    principal,
    agentCore: agentCoreRequest(headers),
    extendedCard: cardUrl && ((shape) => current.extendedCard(shape, cardUrl())),
  }
}
