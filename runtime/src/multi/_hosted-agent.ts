import type { H3Event } from 'h3'
import type { Agent } from '../agent.js'
import { addressesAt, type CardDialect } from '../bindings/_cards.js'
import { renderPush } from '../bindings/_push.js'
import { TaskEngine } from '../core/_engine.js'
import type { TaskByteLimits } from '../core/_task-bytes.js'
import type { AppSettings } from '../http/_app-settings.js'
import type { CardSigner } from '../http/_card-signing.js'
import type { Outgoing } from '../http/_outgoing.js'
import { restHandler } from '../http/_rest-handler.js'
import type { AgentHandlers } from '../http/_routes.js'
import { type RpcHandlerParts, rpcHandler } from '../http/_rpc-handler.js'
import { ServedAgent } from '../http/_served-agent.js'
import type { StreamLimit } from '../http/_stream-limit.js'
import type { A2AAppOptions } from '../http/app-options.js'
import type { Logger } from '../logger.js'
import { PushService } from '../push/_service.js'
import type { Env } from '../settings.js'
import type { ClusterLink, TaskStore } from '../stores/task-store.js'
import type { Instrumentation } from '../telemetry/_hooks.js'
import type { NamedAgent } from './_agent-names.js'
import { agentStore } from './_agent-store.js'
import { TenantRouter } from './_tenant-router.js'

/** What the agents of one server share: the settings, the store and its link, the budgets of the process. */
export interface SharedParts {
  options: A2AAppOptions
  settings: AppSettings
  env: Env
  logger: Logger
  store: TaskStore
  cluster: ClusterLink | undefined
  telemetry: Instrumentation | undefined
  streams: StreamLimit
  outgoing: Outgoing
  cardSigner: CardSigner | undefined
  /** Each agent's share of the running tasks and their bytes (see `createAgentsApp`). */
  maxRunningTasks: number
  taskBytes: TaskByteLimits
  /** The server's address as configured or listened on, once known (`publicUrl`, else `setUrl`). */
  knownUrl(): string | undefined
  /** Where the gRPC binding listens for every agent (`host:port`), while it does: the v1.0 cards list it. */
  grpcAddress(): string | undefined
  /** Said once for the server: the cards go unsigned while no address of its own is known. */
  unsignedCards(): void
}

/** One agent of several at its path: its card, engine, push notifications and handlers. */
export interface HostedAgent {
  name: string
  /** `/planner`. */
  base: string
  /** The agent served now (`replace` changes it). */
  readonly served: ServedAgent
  engine: TaskEngine
  push: PushService | undefined
  handlers: AgentHandlers
  /** Serves another version of the agent at the same path: its tasks, running ones too, stay (`a2a dev`'s reload). */
  replace(agent: Agent): void
}

/** An agent's address under the server's (`http://host/` and `planner`: `http://host/planner/`). */
export const agentUrl = (serverUrl: string, name: string): string =>
  `${serverUrl.endsWith('/') ? serverUrl : `${serverUrl}/`}${name}/`

export function hostAgent({ name, agent, auth }: NamedAgent, shared: SharedParts): HostedAgent {
  const { settings, logger, env, telemetry } = shared
  let push: PushService | undefined
  const pushFor = (declared: boolean): PushService | undefined => {
    if (!declared) return undefined
    // Webhooks are kept by task id, read only once the caller's owner of the task was checked.
    push = new PushService(shared.store, renderPush, shared.options.push ?? {}, logger, env)
    push.delivery.instrumentation = telemetry
    return push
  }
  // v0.3 clients are sent to POST /<name>/v0.3, unless slash-named methods speak v0.3 on POST /<name> as well.
  const v03OnRoot = settings.dialect === 'a2a-0.3'
  const addresses = (url: string) => addressesAt(url, v03OnRoot, shared.grpcAddress(), name)
  const servedAgent = (next: Agent) =>
    new ServedAgent(next, { options: auth ?? shared.options.auth, logger, env }, pushFor, addresses)
  // A holder: a replaced agent is served from the next request on, by the same routes and engine.
  const holder = { current: servedAgent(agent) }
  // The agent served now, not the first version: a reload may add or drop its credentials.
  const checksCredentials = () => holder.current.authCheck !== undefined
  const store = agentStore(shared.store, name, checksCredentials, shared.cluster)
  const engine = new TaskEngine(agent, store, logger, shared.maxRunningTasks, shared.taskBytes)
  engine.instrumentation = telemetry
  // A reload that drops push (a2a dev) stops deliveries with it; one that declares it makes the service then.
  engine.onEvent = (task, event) => holder.current.push && push?.delivery.event(task, event)
  const urlOf = (origin: string) => agentUrl(shared.knownUrl() ?? `${origin}/`, name)
  const cardFor = (dialect: CardDialect, event: H3Event) => {
    const known = shared.knownUrl()
    // Signed only at the server's own address, as a single agent's cards are (see createA2AApp).
    if (shared.cardSigner && !known) shared.unsignedCards()
    const card = holder.current.card(dialect, urlOf(event.url.origin), known ? shared.cardSigner : undefined)
    if (card instanceof Promise) card.catch((error: unknown) => logger.error('Could not sign the card', error))
    return card
  }
  const parts: Omit<RpcHandlerParts, 'router'> = {
    served: holder,
    engine,
    maxBodySize: settings.maxBodySize,
    bodyBudget: settings.bodyBudget,
    eventIds: settings.eventIds,
    openStream: shared.streams.open,
    cardUrl: (request) => urlOf(new URL(request.url).origin),
    outgoing: shared.outgoing,
    logger,
  }
  const handlers: AgentHandlers = {
    cardFor,
    // v1.0 requests naming another agent's tenant are refused, on either path (v1.0 names are served on /v0.3 too).
    rpc: rpcHandler({ ...parts, router: new TenantRouter(settings.dialect, name) }),
    rpcV03: rpcHandler({ ...parts, router: new TenantRouter('a2a-0.3', name) }),
    rest: restHandler(parts, name),
  }
  return {
    name,
    base: `/${name}`,
    get served() {
      return holder.current
    },
    engine,
    get push() {
      return push
    },
    handlers,
    replace(next) {
      holder.current = servedAgent(next)
      engine.agent = next
    },
  }
}
