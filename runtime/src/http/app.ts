import type { H3Event } from 'h3'
import type { Agent } from '../agent.js'
import { addressesAt, type CardDialect } from '../bindings/_cards.js'
import { renderPush } from '../bindings/_push.js'
import { TaskEngine } from '../core/_engine.js'
import { ConfigurationError } from '../errors.js'
import { correlateLogs, createConsoleLogger } from '../logger.js'
import { PushService } from '../push/_service.js'
import { envValue, processEnv } from '../settings.js'
import { lazyStoreFromSetting } from '../stores/_lazy-store.js'
import { StoreProbe } from '../stores/_ready.js'
import { createMemoryStore } from '../stores/memory.js'
import type { TaskStore } from '../stores/task-store.js'
import { instrumentApp } from '../telemetry/_app-measures.js'
import { readTelemetry } from '../telemetry/_app-telemetry.js'
import { keepInternals } from './_app-internals.js'
import { readAppSettings } from './_app-settings.js'
import { readCardSigning } from './_card-signing.js'
import { DialectRouter } from './_dialect-router.js'
import { serveHealth } from './_health.js'
import { Outgoing } from './_outgoing.js'
import { restHandler } from './_rest-handler.js'
import { createRoutes, GUARDED_PATHS } from './_routes.js'
import { type RpcHandlerParts, rpcHandler } from './_rpc-handler.js'
import { ServedAgent } from './_served-agent.js'
import { StreamLimit } from './_stream-limit.js'
import { readWebOrigin, WebOriginGuard } from './_web-origin.js'
import type { A2AApp, A2AAppOptions } from './app-options.js'

export type { A2AApp, A2AAppOptions } from './app-options.js'

/** How long a shutdown lets the final notifications of tasks that just ended go out. */
const PUSH_FLUSH_MS = 5000

/**
 * Builds the h3 app that serves an agent: the card at `/.well-known/agent.json` and JSON-RPC 2.0 at `POST /`
 * (and `POST /jsonrpc`), A2A v1.0's HTTP+JSON binding beside it (`POST /message:send`, `GET /tasks/{id}`…).
 *
 * @example
 * const app = createA2AApp(agent)
 * const response = await app.fetch(new Request('http://localhost/.well-known/agent.json'))
 */
export function createA2AApp(agent: Agent, options: A2AAppOptions = {}): A2AApp {
  const env = options.env ?? processEnv()
  const logger = options.logger ?? createConsoleLogger(undefined, env)
  // Every setting is read and checked first: a bad one opens no store.
  const settings = readAppSettings(options, env)
  const cardSigner = readCardSigning(options.cardSigning, env)
  const telemetry = readTelemetry(options.telemetry, env, logger)
  // The runtime's own logger names the trace a line is written in (a logger of the app's own is left alone).
  if (telemetry) correlateLogs(logger, telemetry)
  const webOrigin = new WebOriginGuard(readWebOrigin(options, env), GUARDED_PATHS, logger)
  if (settings.publicUrl) webOrigin.addUrl(settings.publicUrl)
  const storeSetting = options.store ?? envValue(env, 'A2A_STORE')
  const store =
    typeof storeSetting === 'string'
      ? lazyStoreFromSetting(storeSetting, { logger, env })
      : (storeSetting ?? createMemoryStore({ env }))
  const engine = new TaskEngine(agent, store, logger, settings.maxRunningTasks, settings.taskBytes)
  engine.instrumentation = telemetry

  // Made when a card first declares push notifications (a2a dev may turn them on in a reload).
  let pushService: PushService | undefined
  const pushFor = (declared: boolean): PushService | undefined => {
    if (!declared) return undefined
    if (!pushService) {
      const service = new PushService(store, renderPush, options.push ?? {}, logger, env)
      service.delivery.instrumentation = telemetry
      // A reload that drops push (a2a dev) stops deliveries with it.
      engine.onEvent = (task, event) => served.current.push && service.delivery.event(task, event)
      pushService = service
    }
    return pushService
  }
  const auth = { options: options.auth, logger, env }
  // v0.3 clients are sent to POST /v0.3, unless slash-named methods speak v0.3 on POST / as well.
  const v03OnRoot = settings.dialect === 'a2a-0.3'
  let grpcAddress: string | undefined
  const addresses = (url: string) => addressesAt(url, v03OnRoot, grpcAddress)
  const servedAgent = (served: Agent) => ownersKept(new ServedAgent(served, auth, pushFor, addresses), store)
  const served = { current: servedAgent(agent) }

  let listeningUrl: string | undefined
  let unsignedSaid = false
  const cardFor = (dialect: CardDialect, event: H3Event) => {
    const known = settings.publicUrl ?? listeningUrl
    // Signed only at the agent's own address: a signature over an address a request's Host chose would vouch for it,
    // and a signature per Host would let any client make the agent sign again and again.
    if (cardSigner && !known && !unsignedSaid) {
      unsignedSaid = true
      logger.warn('The cards are served unsigned: the agent knows no address of its own to sign; set A2A_PUBLIC_URL')
    }
    const card = served.current.card(dialect, known ?? `${event.url.origin}/`, known ? cardSigner : undefined)
    // A signature that fails after the key was accepted is the runtime's fault: the client sees a 500, the log why.
    if (card instanceof Promise) card.catch((error: unknown) => logger.error('Could not sign the card', error))
    return card
  }
  const outgoing = new Outgoing(settings.outgoing, logger)
  const streams = new StreamLimit(settings.maxStreams, settings.heartbeatMs, outgoing)
  const unobserve =
    telemetry && instrumentApp(telemetry, store, { engine, bodyBudget: settings.bodyBudget, outgoing, streams })
  const rpcParts: Omit<RpcHandlerParts, 'router'> = {
    served,
    engine,
    maxBodySize: settings.maxBodySize,
    bodyBudget: settings.bodyBudget,
    eventIds: settings.eventIds,
    openStream: streams.open,
    cardUrl: (request) => settings.publicUrl ?? listeningUrl ?? `${new URL(request.url).origin}/`,
    outgoing,
    logger,
  }
  const rpc = rpcHandler({ ...rpcParts, router: new DialectRouter(settings.dialect) })
  const rpcV03 = rpcHandler({ ...rpcParts, router: new DialectRouter('a2a-0.3') })
  const h3 = createRoutes(webOrigin, cardFor, rpc, rpcV03, restHandler(rpcParts))
  const storeProbe = new StoreProbe(store, logger)
  serveHealth(h3, {
    draining: () => engine.closing,
    running: () => engine.runningCount,
    storeProblem: () => storeProbe.problem(),
  })

  const app: A2AApp = {
    h3,
    fetch: async (request) => h3.fetch(request),
    get agent() {
      return served.current.agent
    },
    store,
    setUrl(url) {
      listeningUrl = url
      webOrigin.addUrl(url)
    },
    replaceAgent(next) {
      served.current = servedAgent(next)
      engine.agent = next
    },
    async close() {
      await engine.drain(settings.shutdownTimeoutMs)
      // The final notifications of tasks that just ended get a moment to go out.
      await pushService?.close(PUSH_FLUSH_MS)
      await store.close?.()
      unobserve?.()
    },
  }
  keepInternals(app, {
    served,
    engine,
    settings,
    streams,
    outgoing,
    logger,
    url: () => settings.publicUrl ?? listeningUrl,
    announceGrpc(address) {
      grpcAddress = address
      served.current.forgetCards()
    },
  })
  return app
}

/**
 * An agent that checks credentials keeps each caller's tasks apart through its store: a store that does not say it
 * keeps owners (one written for an earlier runtime, say) would show every caller every task, so it stops start-up.
 */
function ownersKept(served: ServedAgent, store: TaskStore): ServedAgent {
  if (served.authCheck && store.keepsOwners !== true)
    throw new ConfigurationError(
      'The agent card declares authentication, but its task store does not keep owners (keepsOwners): each caller must see only its own tasks; use a store that does (memory, file, Redis, Durable Object) or add owners to yours (taskStoreContract checks them)',
    )
  return served
}
