import { Server, ServerCredentials } from '@grpc/grpc-js'
import { ConfigurationError } from '../errors.js'
import { appInternals } from '../http/_app-internals.js'
import type { AppSettings } from '../http/_app-settings.js'
import type { A2AApp } from '../http/app-options.js'
import { callGate } from './_call-gate.js'
import { appHost, type GrpcHost } from './_grpc-host.js'
import { a2aService } from './_service.js'
import type { GrpcServer } from './grpc-server.js'

/** What `serveGrpc`, `serveAgent` and `a2a dev` start the gRPC binding with. */
export interface GrpcListenOptions {
  port: number
  /** The address to listen on, as given (`0.0.0.0` and `::` are every interface). */
  host: string
  /** `host:port` the cards list, when set (behind a proxy or a port mapping). */
  publicAddress?: string | undefined
  /** How long a call's request message may take to arrive whole, as an HTTP request's (`requestTimeoutMs`). */
  requestTimeoutMs: number
  /** How long a connection with no call may stay open, as an idle HTTP keep-alive one (`keepAliveTimeoutMs`). */
  idleTimeoutMs: number
}

/** Calls open at once on one HTTP/2 connection (no app setting says it: HTTP/1.1 has one; gRPC asks at least 100). */
const MAX_CONCURRENT_STREAMS = 100
/**
 * Memory one HTTP/2 connection's session may hold in Node (headers being compressed, frames not yet sent, pings and
 * settings not yet acknowledged), in MiB: Node's own default, which grpc-js lifts (past it the connection's new
 * calls are refused, its others go on).
 */
const MAX_SESSION_MEMORY_MIB = 10

/**
 * grpc-js's bounds, from the app's settings where one says the same: a message is a request body (`maxBodySize`),
 * an idle connection closes as an idle HTTP one does, and the SSE heartbeat's purpose over HTTP/2 is keepalive pings
 * (a client that does not answer one within grpc-js's 20 s is dropped). grpc-js enforces no minimum interval on a
 * client's pings; Node's HTTP/2 session counts unanswered ones against its memory above. No connection age is set:
 * a stream following a long task would be cut by it.
 */
function serverOptions(settings: AppSettings, options: GrpcListenOptions): Record<string, number> {
  return {
    'grpc.max_receive_message_length': settings.maxBodySize,
    'grpc.max_concurrent_streams': MAX_CONCURRENT_STREAMS,
    'grpc-node.max_session_memory': MAX_SESSION_MEMORY_MIB,
    'grpc.max_connection_idle_ms': options.idleTimeoutMs,
    ...(settings.heartbeatMs > 0 && { 'grpc.keepalive_time_ms': settings.heartbeatMs }),
  }
}

/** `host` in an address: an IPv6 address in brackets. */
const bracketed = (host: string): string => (host.includes(':') ? `[${host}]` : host)

/** `host` as the cards give it: a wildcard (every interface) as `localhost`, where a local client finds it. */
const cardHost = (host: string): string => (host === '0.0.0.0' || host === '::' ? 'localhost' : bracketed(host))

/**
 * Listens with grpc-js on `host:port` and serves lf.a2a.v1.A2AService for the app: its agent, engine, settings and
 * open streams. The cards list the interface from then on, and no longer once it is closed.
 */
export async function startGrpcServer(app: A2AApp, options: GrpcListenOptions): Promise<GrpcServer> {
  const internals = appInternals(app)
  if (!internals) throw new ConfigurationError('serveGrpc needs an app made by createA2AApp (or serveAgent)')
  return startGrpcHostServer(appHost(internals), options)
}

/** The same for what a host serves: one app's agent, or several agents chosen by each request's tenant. */
export async function startGrpcHostServer(host: GrpcHost, options: GrpcListenOptions): Promise<GrpcServer> {
  const { settings, logger } = host
  const server = new Server({
    ...serverOptions(settings, options),
    interceptors: [callGate(host, options.requestTimeoutMs)],
  })
  const { definition, implementation } = a2aService(host)
  server.addService(definition, implementation)
  const listening = `${bracketed(options.host)}:${options.port}`
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(listening, ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(bindError(error, options)) : resolve(bound),
    )
  })
  // Behind a public address the cards name its host, as they do for HTTP, unless the gRPC one is given.
  const shownHost = settings.publicUrl ? new URL(settings.publicUrl).hostname : cardHost(options.host)
  const address = options.publicAddress ?? `${shownHost}:${port}`
  host.announce(address)
  logger.info(`A2A v1.0 over gRPC listening on ${bracketed(options.host)}:${port}`)

  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      host.announce(undefined)
      // New calls are refused at once; calls still running get the app's shutdown time, as its tasks do.
      const force = setTimeout(() => server.forceShutdown(), settings.shutdownTimeoutMs)
      force.unref()
      server.tryShutdown(() => {
        clearTimeout(force)
        resolve()
      })
    })
    return closing
  }
  return { address, port, close }
}

function bindError(error: Error, { host, port }: GrpcListenOptions): Error {
  if (/EADDRINUSE/.test(error.message))
    return new ConfigurationError(
      `Port ${port} on ${host} is already in use: stop the other server or choose another gRPC port (A2A_GRPC_PORT)`,
    )
  if (/EACCES/.test(error.message))
    return new ConfigurationError(`No permission to listen on port ${port} on ${host}: choose a port above 1023`)
  return error
}
