import { type GrpcAgent, type GrpcHost, UnknownTenantError } from '../grpc/_grpc-host.js'
import { DIRECTORY_PATH } from './_directory.js'
import { agentUrl, type HostedAgent, type SharedParts } from './_hosted-agent.js'
import { SHOWN_TENANT } from './_tenant-check.js'

/**
 * The agents of one server over one gRPC port: a gRPC request has no path, so the agent is the one its message's
 * `tenant` names (A2A v1.0 gives every request message one; each agent's v1.0 card lists the gRPC interface with its
 * name as the tenant, which the official clients send). A request naming none reaches the agent only when the
 * server has just one; one naming no agent of the server ends NOT_FOUND, naming the tenant.
 */

const hostOf = new WeakMap<object, GrpcHost>()

/** Kept beside the app (its public type stays as it is): `serveAgents` starts gRPC with it. */
export function keepGrpcHost(app: object, host: GrpcHost): void {
  hostOf.set(app, host)
}

/** The gRPC host of an app `createAgentsApp` made; undefined for any other. */
export const grpcHostOf = (app: object): GrpcHost | undefined => hostOf.get(app)

export function agentsGrpcHost(
  hosted: readonly HostedAgent[],
  shared: SharedParts,
  announce: (address: string | undefined) => void,
): GrpcHost {
  const agents = new Map<string, GrpcAgent>()
  for (const agent of hosted) {
    agents.set(agent.name, {
      // Read at each call: the agent served now.
      served: {
        get current() {
          return agent.served
        },
      },
      engine: agent.engine,
      url: () => {
        const known = shared.knownUrl()
        return known === undefined ? undefined : agentUrl(known, agent.name)
      },
    })
  }
  const names = [...agents.keys()].join(', ')
  const only = agents.size === 1 ? [...agents.values()][0] : undefined
  return {
    settings: shared.settings,
    streams: shared.streams,
    outgoing: shared.outgoing,
    logger: shared.logger,
    single: undefined,
    agentFor(tenant) {
      const agent = tenant === '' ? only : agents.get(tenant)
      if (agent) return agent
      throw new UnknownTenantError(
        tenant === ''
          ? `The request names no tenant: this server serves several agents, each its own tenant (${names}; see ${DIRECTORY_PATH})`
          : `tenant ${JSON.stringify(tenant.slice(0, SHOWN_TENANT))} names no agent of this server (its agents: ${names})`,
      )
    },
    announce,
  }
}
