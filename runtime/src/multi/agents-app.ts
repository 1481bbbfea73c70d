import { H3 } from 'h3'
import type { Agent } from '../agent.js'
import { readTaskByteLimits } from '../core/_task-bytes.js'
import { readAppSettings } from '../http/_app-settings.js'
import { readCardSigning } from '../http/_card-signing.js'
import { serveHealth } from '../http/_health.js'
import { Outgoing } from '../http/_outgoing.js'
import { addAgentRoutes, guardedBy } from '../http/_routes.js'
import { StreamLimit } from '../http/_stream-limit.js'
import { readWebOrigin, WebOriginGuard } from '../http/_web-origin.js'
import type { A2AAppOptions } from '../http/app-options.js'
import { correlateLogs, createConsoleLogger } from '../logger.js'
import { envValue, processEnv } from '../settings.js'
import { lazyStoreFromSetting } from '../stores/_lazy-store.js'
import { StoreProbe } from '../stores/_ready.js'
import { createMemoryStore } from '../stores/memory.js'
import type { TaskStore } from '../stores/task-store.js'
import { instrumentAgents } from '../telemetry/_app-measures.js'
import { readTelemetry } from '../telemetry/_app-telemetry.js'
import { readAgentEntries } from './_agent-names.js'
import { keepAgentSet } from './_agent-set.js'
import { refuseOwnerlessStore, sharedClusterLink } from './_agent-store.js'
import { agentsGrpcHost, keepGrpcHost } from './_agents-grpc.js'
import { addDirectoryRoutes, agentsGuardedPaths } from './_directory.js'
import { hostAgent, type SharedParts } from './_hosted-agent.js'
import { keepRunningCount } from './_running-tasks.js'
import type { A2AAgentsApp, AgentEntry } from './agents-options.js'

export type { A2AAgentsApp, AgentEntry } from './agents-options.js'

/** How long a shutdown lets the final notifications of tasks that just ended go out (as `createA2AApp`). */
const PUSH_FLUSH_MS = 5000

/**
 * Builds the h3 app that serves several agents, each at its own path: `{ planner, writer }` serves `planner` at
 * `/planner/` (its cards at `/planner/.well-known/agent-card.json` and `/planner/.well-known/agent.json`, JSON-RPC at
 * `POST /planner`, `/planner/jsonrpc` and `/planner/v0.3`, HTTP+JSON at `/planner/message:send`…) and `writer` at
 * `/writer/`. Each card gives its agent's address, and its v1.0 interfaces name the agent as their `tenant`: a client
 * that sends it reaches the same agent (`/planner/planner/message:send`). The agents' list is at
 * `GET /.well-known/agents.json`; the root's card paths answer 404 pointing there.
 *
 * Each agent has its own tasks in the one store (another agent's task id answers as one that does not exist, in
 * every binding), its own card and its own credentials (`{ agent, auth }`, else the `auth` option). The options are
 * `createA2AApp`'s, for the server as a whole: `publicUrl` is the server's address (each agent's is it and its
 * name); the body bytes in flight, pending response bytes, open streams and the store's connection are shared by
 * every agent; `maxRunningTasks` and `maxRunningBytes` are the server's totals, each agent getting an equal share
 * (at least one task and `maxTaskBytes`), so one agent's flood never takes another's room.
 *
 * @example
 * const app = createAgentsApp({ planner, writer: { agent: writer, auth: { bearerTokens: ['…'] } } })
 * const response = await app.fetch(new Request('http://localhost/planner/.well-known/agent-card.json'))
 */
export function createAgentsApp(
  agents: Readonly<Record<string, AgentEntry>>,
  options: A2AAppOptions = {},
): A2AAgentsApp {
  const named = readAgentEntries(agents)
  const env = options.env ?? processEnv()
  const logger = options.logger ?? createConsoleLogger(undefined, env)
  // Every setting is read and checked first: a bad one opens no store.
  const settings = readAppSettings(options, env)
  const cardSigner = readCardSigning(options.cardSigning, env)
  const telemetry = readTelemetry(options.telemetry, env, logger)
  if (telemetry) correlateLogs(logger, telemetry)
  const names = named.map(({ name }) => name)
  const webOrigin = new WebOriginGuard(readWebOrigin(options, env), agentsGuardedPaths(names), logger)
  if (settings.publicUrl) webOrigin.addUrl(settings.publicUrl)
  const storeSetting = options.store ?? envValue(env, 'A2A_STORE')
  const store: TaskStore =
    typeof storeSetting === 'string'
      ? lazyStoreFromSetting(storeSetting, { logger, env })
      : (storeSetting ?? createMemoryStore({ env }))
  refuseOwnerlessStore(store)
  const outgoing = new Outgoing(settings.outgoing, logger)
  let listeningUrl: string | undefined
  let grpcAddress: string | undefined
  let unsignedSaid = false
  const { maxTaskBytes, maxRunningBytes } = readTaskByteLimits(options, env)
  const shared: SharedParts = {
    options,
    settings,
    env,
    logger,
    store,
    cluster: sharedClusterLink(store.cluster),
    telemetry,
    streams: new StreamLimit(settings.maxStreams, settings.heartbeatMs, outgoing),
    outgoing,
    cardSigner,
    maxRunningTasks: Math.max(1, Math.floor(settings.maxRunningTasks / named.length)),
    taskBytes: { maxTaskBytes, maxRunningBytes: Math.max(maxTaskBytes, Math.floor(maxRunningBytes / named.length)) },
    knownUrl: () => settings.publicUrl ?? listeningUrl,
    grpcAddress: () => grpcAddress,
    unsignedCards() {
      if (unsignedSaid) return
      unsignedSaid = true
      logger.warn('The cards are served unsigned: the server knows no address of its own to sign; set A2A_PUBLIC_URL')
    },
  }
  const hosted = named.map((entry) => hostAgent(entry, shared))
  // Observed once for the server: its running tasks and budgets are every agent's together.
  const unobserve =
    telemetry &&
    instrumentAgents(telemetry, store, {
      engines: () => hosted.map(({ engine }) => engine),
      bodyBudget: settings.bodyBudget,
      outgoing,
      streams: shared.streams,
    })

  const h3 = new H3({ silent: true })
  const checked = guardedBy(webOrigin)
  for (const agent of hosted) addAgentRoutes(h3, agent.base, checked, agent.handlers)
  addDirectoryRoutes(h3, checked, hosted, shared.knownUrl)
  const running = () => hosted.reduce((sum, { engine }) => sum + engine.runningCount, 0)
  const storeProbe = new StoreProbe(store, logger)
  // The server's health, at the root: it drains as a whole, and its agents share the store.
  serveHealth(h3, {
    draining: () => hosted.some(({ engine }) => engine.closing),
    running,
    storeProblem: () => storeProbe.problem(),
  })

  let closing: Promise<void> | undefined
  const app: A2AAgentsApp = {
    h3,
    fetch: async (request) => h3.fetch(request),
    agents: Object.freeze(Object.fromEntries(hosted.map(({ name, served }) => [name, served.agent]))) as Readonly<
      Record<string, Agent>
    >,
    store,
    setUrl(url) {
      listeningUrl = url
      webOrigin.addUrl(url)
    },
    close() {
      closing ??= (async () => {
        // Every agent drains at once: the grace is the server's, not each agent's in turn.
        await Promise.all(hosted.map(({ engine }) => engine.drain(settings.shutdownTimeoutMs)))
        await Promise.all(hosted.map(({ push }) => push?.close(PUSH_FLUSH_MS)))
        await store.close?.()
        unobserve?.()
      })()
      return closing
    },
  }
  keepRunningCount(app, running)
  keepAgentSet(app, { hosted, shared, h3, checked })
  keepGrpcHost(
    app,
    agentsGrpcHost(hosted, shared, (address) => {
      grpcAddress = address
      for (const { served } of hosted) served.forgetCards()
    }),
  )
  return app
}
