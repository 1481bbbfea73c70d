import type { TaskEngine } from '../core/_engine.js'
import type { AppInternals } from '../http/_app-internals.js'
import type { AppSettings } from '../http/_app-settings.js'
import type { Outgoing } from '../http/_outgoing.js'
import type { ServedAgent } from '../http/_served-agent.js'
import type { StreamLimit } from '../http/_stream-limit.js'
import type { Logger } from '../logger.js'

/**
 * What one gRPC server answers for: one app's agent (`serveAgent`, `serveGrpc`), or the several agents of
 * `serveAgents`, each request going to the agent its `tenant` field names (A2A v1.0: every request message has one;
 * the agents' v1.0 cards list the gRPC interface with their tenant, which the official clients send).
 */
export interface GrpcHost {
  settings: AppSettings
  /** The streams open at once, over every binding and agent (`maxStreams`). */
  streams: StreamLimit
  outgoing: Outgoing
  logger: Logger
  /**
   * The agent when there is only ever one: its credentials are checked before a call's message is read. With
   * several, the message names the agent, so the agent's credentials are checked once it is read (`agentFor`).
   */
  single: GrpcAgent | undefined
  /** The agent a request's tenant (`''` when it names none) reaches; an `UnknownTenantError` when none does. */
  agentFor(tenant: string): GrpcAgent
  /** The gRPC binding listens at `host:port` (undefined: no longer): the A2A cards list it from then on. */
  announce(address: string | undefined): void
}

/** One agent the gRPC binding answers for: the agent served now, its engine, its HTTP address once known. */
export interface GrpcAgent {
  served: { current: ServedAgent }
  engine: TaskEngine
  url(): string | undefined
}

/** A request's tenant names no agent of the server: the call ends NOT_FOUND, naming the tenant. */
export class UnknownTenantError extends Error {}

/** The host of one app's agent: every tenant reaches it (a single agent has no tenant of its own). */
export function appHost(internals: AppInternals): GrpcHost {
  const { settings, streams, outgoing, logger, served, engine } = internals
  const agent: GrpcAgent = { served, engine, url: internals.url }
  return {
    settings,
    streams,
    outgoing,
    logger,
    single: agent,
    agentFor: () => agent,
    announce: (address) => internals.announceGrpc(address),
  }
}
