import type { Server } from 'node:http'
import { startGrpcHost } from '../grpc/serve-grpc.js'
import { readServeSettings, serveApp } from '../node/_serve-app.js'
import type { ServeOptions } from '../node/serve.js'
import { refuseUnservableStore } from '../stores/_ready.js'
import { grpcHostOf } from './_agents-grpc.js'
import { DIRECTORY_PATH } from './_directory.js'
import { agentUrl } from './_hosted-agent.js'
import { agentsLogRoute } from './_log-route.js'
import { createAgentsApp } from './agents-app.js'
import type { A2AAgentsApp, AgentEntry } from './agents-options.js'

/** A running server of several agents, as `serveAgents` resolves it. */
export interface A2AAgentsServer {
  /** The listening address, e.g. `http://127.0.0.1:3000/`. */
  readonly url: string
  /** Each agent's address by name: `{ planner: 'http://127.0.0.1:3000/planner/' }`. */
  readonly urls: Readonly<Record<string, string>>
  /** The port it listens on: the one picked when the option was `0`. */
  readonly port: number
  /** The app it serves (its store, its agents). */
  readonly app: A2AAgentsApp
  /** Node's HTTP server; `undefined` on Bun and Deno, whose native servers serve the app. */
  readonly server: Server | undefined
  /** Where the gRPC binding listens for every agent (`host:port`, as the cards list it), when `grpcPort` is set. */
  readonly grpcAddress: string | undefined
  /**
   * Stops taking tasks (`/readyz` answers 503), lets every agent's running tasks finish (up to `shutdownTimeoutMs`),
   * then stops listening and closes streams and the store.
   */
  close(): Promise<void>
}

/**
 * Serves several agents from one process, each at its own path (see `createAgentsApp`): on Node with its HTTP
 * server, on Bun and Deno with their native servers, with `serveAgent`'s options. With `grpcPort` (`A2A_GRPC_PORT`)
 * every agent answers gRPC on that one port, each request going to the agent its `tenant` field names (each agent's
 * card lists the interface with its name as the tenant, which the official clients send); a request naming no agent
 * of the server ends NOT_FOUND. SIGTERM and SIGINT drain every agent, then exit.
 *
 * @example
 * const server = await serveAgents({ planner, writer }, { port: 8080 })
 * console.log(`Agents: ${server.url}.well-known/agents.json`)
 */
export async function serveAgents(
  agents: Readonly<Record<string, AgentEntry>>,
  options: ServeOptions = {},
): Promise<A2AAgentsServer> {
  const settings = readServeSettings(options)
  const app = createAgentsApp(agents, settings.appOptions)
  await refuseUnservableStore(app.store, () => app.close())
  const names = Object.keys(app.agents)
  const grpcHost = grpcHostOf(app)!
  const served = await serveApp(app, settings, {
    route: agentsLogRoute(names),
    startGrpc: (grpcOptions) => startGrpcHost(grpcHost, grpcOptions),
    announce: (url) =>
      settings.logger.info(
        `Agents ${names.join(', ')} listening on ${url} (their list at ${url}${DIRECTORY_PATH.slice(1)})`,
      ),
  })
  const base = settings.appOptions.publicUrl ?? served.url
  const urls = Object.fromEntries(names.map((name) => [name, agentUrl(base, name)]))
  const { url, port, server, grpcAddress, close } = served
  return { url, urls, port, app, server, grpcAddress, close }
}
