import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeHandler } from 'h3/node'
import { checkedPublicAddress } from '../grpc/_public-address.js'
import { startGrpcHost } from '../grpc/serve-grpc.js'
import { defaultAllowedHosts } from '../http/_allowed-hosts.js'
import { readShutdownTimeoutMs } from '../http/_app-settings.js'
import { createConsoleLogger, requestLogWriter } from '../logger.js'
import { applyConnectionPolicy, readConnectionPolicy } from '../node/_connection-policy.js'
import { lingerAfterEarlyAnswers } from '../node/_lingering-close.js'
import { displayHost, listen, readPort } from '../node/_listen.js'
import { listenNative, nativeRuntime } from '../node/_native-serve.js'
import { createPhrasedServer } from '../node/_reason-phrases.js'
import { withRequestLog } from '../node/_request-log.js'
import { exitOnSignals, gracefulClose, nativeClose } from '../node/_shutdown.js'
import type { ServeOptions } from '../node/serve.js'
import { envValue, optionalWholeNumberSetting, processEnv } from '../settings.js'
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
  const env = options.env ?? processEnv()
  // Checked before the app exists, so a bad value opens no store.
  const connectionPolicy = readConnectionPolicy(options, env)
  const port = readPort(options.port, env)
  const grpcPort = optionalWholeNumberSetting({
    option: 'grpcPort',
    variable: 'A2A_GRPC_PORT',
    given: options.grpcPort,
    env,
    min: 0,
    max: 65535,
  })
  const grpcPublicAddress = checkedPublicAddress(
    options.grpcPublicAddress ?? envValue(env, 'A2A_GRPC_PUBLIC_ADDRESS'),
    'grpcPublicAddress (A2A_GRPC_PUBLIC_ADDRESS)',
  )
  const logger = options.logger ?? createConsoleLogger(undefined, env)
  const hostname = options.hostname ?? envValue(env, 'HOST') ?? '127.0.0.1'
  const publicUrl = options.publicUrl ?? envValue(env, 'A2A_PUBLIC_URL')
  const allowedHosts = options.allowedHosts ?? defaultAllowedHosts(hostname, publicUrl, env)
  const app = createAgentsApp(agents, {
    ...options,
    env,
    logger,
    ...(publicUrl && { publicUrl }),
    ...(allowedHosts && { allowedHosts }),
  })
  await refuseUnservableStore(app.store, () => app.close())

  const log = options.requestLogLevel ? requestLogWriter(logger, options.requestLogLevel) : undefined
  const route = agentsLogRoute(Object.keys(app.agents))
  const runtime = nativeRuntime()
  let detachSignals: (() => void) | undefined
  let listener: { port: number; server: Server | undefined; close: () => Promise<void> }
  if (runtime) {
    const native = await listenNative(runtime, app, {
      port,
      hostname,
      idleTimeoutMs: connectionPolicy.timeouts.request,
      ...(log && { log, route }),
    })
    listener = { port: native.port, server: undefined, close: nativeClose(native, app, () => detachSignals?.()) }
  } else {
    const handler = toNodeHandler(app.h3)
    const server = createPhrasedServer(log ? withRequestLog(handler, log, route) : handler)
    lingerAfterEarlyAnswers(server)
    applyConnectionPolicy(server, connectionPolicy)
    await listen(server, port, hostname)
    listener = {
      port: (server.address() as AddressInfo).port,
      server,
      close: gracefulClose(server, app, () => detachSignals?.()),
    }
  }
  const url = `http://${displayHost(hostname)}:${listener.port}/`
  app.setUrl(url)
  const base = publicUrl ?? url
  const urls = Object.fromEntries(Object.keys(app.agents).map((name) => [name, agentUrl(base, name)]))
  logger.info(
    `Agents ${Object.keys(urls).join(', ')} listening on ${url} (their list at ${url}${DIRECTORY_PATH.slice(1)})`,
  )
  let close = listener.close
  let grpcAddress: string | undefined
  const grpcHost = grpcHostOf(app)
  if (grpcPort !== undefined && grpcHost) {
    try {
      const grpc = await startGrpcHost(grpcHost, {
        port: grpcPort,
        host: hostname,
        publicAddress: grpcPublicAddress,
        requestTimeoutMs: connectionPolicy.timeouts.request,
        idleTimeoutMs: connectionPolicy.timeouts.keepAlive,
      })
      grpcAddress = grpc.address
      close = closedTogether(listener.close, grpc.close)
    } catch (error) {
      await listener.close()
      throw error
    }
  }
  if (options.handleSignals ?? true)
    detachSignals = exitOnSignals(close, logger, readShutdownTimeoutMs(options.shutdownTimeoutMs, env))
  return { url, urls, port: listener.port, app, server: listener.server, grpcAddress, close }
}

/** Closes the HTTP server and the gRPC one together, once: gRPC stops taking calls as HTTP does. */
function closedTogether(closeHttp: () => Promise<void>, closeGrpc: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined
  return () => {
    closing ??= Promise.all([closeHttp(), closeGrpc()]).then(() => undefined)
    return closing
  }
}
