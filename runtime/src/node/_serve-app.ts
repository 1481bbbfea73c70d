import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeHandler } from 'h3/node'
import { checkedPublicAddress } from '../grpc/_public-address.js'
import type { GrpcListenOptions } from '../grpc/_server.js'
import type { GrpcServer } from '../grpc/grpc-server.js'
import { defaultAllowedHosts } from '../http/_allowed-hosts.js'
import { readShutdownTimeoutMs } from '../http/_app-settings.js'
import type { A2AApp, A2AAppOptions } from '../http/app.js'
import { createConsoleLogger, type Logger, type LogLevel, requestLogWriter } from '../logger.js'
import type { A2AAgentsApp } from '../multi/agents-options.js'
import { type Env, envValue, optionalWholeNumberSetting, processEnv } from '../settings.js'
import type { ConnectionCapOptions } from './_connection-caps.js'
import { applyConnectionPolicy, type ConnectionPolicy, readConnectionPolicy } from './_connection-policy.js'
import { lingerAfterEarlyAnswers } from './_lingering-close.js'
import { displayHost, listen, readPort } from './_listen.js'
import { listenNative, type NativeRuntime, nativeRuntime } from './_native-serve.js'
import { createPhrasedServer } from './_reason-phrases.js'
import { type LogRoute, withRequestLog } from './_request-log.js'
import { exitOnSignals, gracefulClose, nativeClose } from './_shutdown.js'
import type { SlowClientTimeoutOptions } from './_slow-client-timeouts.js'

/**
 * What `serveAgent` and `serveAgents` share: their options read and checked before the app exists (so a bad value
 * opens no store), then the app's listeners started (Node's HTTP server, or Bun's or Deno's; gRPC when asked), closed
 * together, and the signals handled.
 */

/** What of `ServeOptions` (node/serve.ts, which imports this module) the server reads. */
type ServeInput = A2AAppOptions &
  SlowClientTimeoutOptions &
  ConnectionCapOptions & {
    port?: number
    hostname?: string
    grpcPort?: number
    grpcPublicAddress?: string
    requestLogLevel?: Exclude<LogLevel, 'silent'>
    handleSignals?: boolean
  }

/** The server's settings, read from the options and the environment. */
export interface ServeSettings<Options extends ServeInput> {
  env: Env
  logger: Logger
  connectionPolicy: ConnectionPolicy
  port: number
  hostname: string
  grpcPort: number | undefined
  grpcPublicAddress: string | undefined
  /** The options the app is made with: the given ones, with the environment, logger and addresses settled. */
  appOptions: Options
}

export function readServeSettings<Options extends ServeInput>(options: Options): ServeSettings<Options> {
  const env = options.env ?? processEnv()
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
  const appOptions = { ...options, env, logger, ...(publicUrl && { publicUrl }), ...(allowedHosts && { allowedHosts }) }
  return { env, logger, connectionPolicy, port, hostname, grpcPort, grpcPublicAddress, appOptions }
}

/** How an app is served: its request log's routes, and how gRPC starts for it (when `grpcPort` asks). */
export interface ServeParts {
  route?: LogRoute
  startGrpc(options: GrpcListenOptions): Promise<GrpcServer>
  /** Said once everything listens (the server's own line). */
  announce(url: string): void
}

/** The app's listeners, started. */
export interface AppListeners {
  url: string
  port: number
  runtime: 'node' | NativeRuntime
  server: Server | undefined
  grpcAddress: string | undefined
  close(): Promise<void>
}

export async function serveApp(
  app: A2AApp | A2AAgentsApp,
  settings: ServeSettings<ServeInput>,
  parts: ServeParts,
): Promise<AppListeners> {
  const { appOptions: options, logger, connectionPolicy, port, hostname, grpcPort } = settings
  const log = options.requestLogLevel ? requestLogWriter(logger, options.requestLogLevel) : undefined
  const { route } = parts
  const runtime = nativeRuntime()
  // Set once signals are handled; declared before the listener, whose close may run first (gRPC failed to start).
  let detachSignals: (() => void) | undefined
  let listener: { port: number; server: Server | undefined; close: () => Promise<void> }
  if (runtime) {
    const native = await listenNative(runtime, app, {
      port,
      hostname,
      // Bun's idle timeout is the request timeout: it bounds a trickled request as Node's does.
      idleTimeoutMs: connectionPolicy.timeouts.request,
      ...(log && { log }),
      ...(route && { route }),
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
  let close = listener.close
  let grpcAddress: string | undefined
  if (grpcPort !== undefined) {
    try {
      const grpc = await parts.startGrpc({
        port: grpcPort,
        host: hostname,
        publicAddress: settings.grpcPublicAddress,
        requestTimeoutMs: connectionPolicy.timeouts.request,
        idleTimeoutMs: connectionPolicy.timeouts.keepAlive,
      })
      grpcAddress = grpc.address
      // gRPC stops taking calls as HTTP does; its streams end as the app drains the tasks they follow.
      close = closedTogether(listener.close, grpc.close)
    } catch (error) {
      await listener.close()
      throw error
    }
  }
  parts.announce(url)
  if (options.handleSignals ?? true)
    detachSignals = exitOnSignals(close, logger, readShutdownTimeoutMs(options.shutdownTimeoutMs, settings.env))
  return { url, port: listener.port, runtime: runtime ?? 'node', server: listener.server, grpcAddress, close }
}

/** Closes the HTTP server and the gRPC one together, once. */
function closedTogether(closeHttp: () => Promise<void>, closeGrpc: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined
  return () => {
    closing ??= Promise.all([closeHttp(), closeGrpc()]).then(() => undefined)
    return closing
  }
}
