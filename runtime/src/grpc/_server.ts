import { Server, ServerCredentials } from '@grpc/grpc-js'
import { ConfigurationError } from '../errors.js'
import { appInternals } from '../http/_app-internals.js'
import type { A2AApp } from '../http/app-options.js'
import { a2aService } from './_service.js'
import type { GrpcServer } from './grpc-server.js'

/** What `serveGrpc` and `serveAgent` start the gRPC binding with. */
export interface GrpcListenOptions {
  port: number
  host: string
  /** The agent's HTTP address (the extended card's interfaces are given from it), when the caller knows it. */
  httpUrl?: string
}

/** How `host` reads in an address: an IPv6 address in brackets, a wildcard as `localhost`. */
function addressHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost'
  return host.includes(':') ? `[${host}]` : host
}

/**
 * Listens with grpc-js on `host:port` and serves lf.a2a.v1.A2AService for the app: its agent, engine, settings and
 * open streams. The cards list the interface from then on, and no longer once it is closed.
 */
export async function startGrpcServer(app: A2AApp, options: GrpcListenOptions): Promise<GrpcServer> {
  const internals = appInternals(app)
  if (!internals) throw new ConfigurationError('serveGrpc needs an app made by createA2AApp (or serveAgent)')
  const { settings, logger } = internals
  const server = new Server({
    // A message is a request body: the same limit.
    'grpc.max_receive_message_length': settings.maxBodySize,
    // The SSE heartbeat's purpose over HTTP/2: pings keep proxies from dropping a quiet stream's connection.
    ...(settings.heartbeatMs > 0 && { 'grpc.keepalive_time_ms': settings.heartbeatMs }),
  })
  const cardUrl = () => settings.publicUrl ?? options.httpUrl ?? `http://${addressHost(options.host)}/`
  const { definition, implementation } = a2aService(internals, cardUrl)
  server.addService(definition, implementation)
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(
      `${addressHost(options.host)}:${options.port}`,
      ServerCredentials.createInsecure(),
      (error, bound) => (error ? reject(bindError(error, options)) : resolve(bound)),
    )
  })
  // Behind a public address the cards name its host, as they do for HTTP.
  const cardHost = settings.publicUrl ? new URL(settings.publicUrl).hostname : addressHost(options.host)
  const address = `${cardHost}:${port}`
  internals.announceGrpc(address)
  logger.info(`A2A v1.0 over gRPC listening on ${addressHost(options.host)}:${port}`)

  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      internals.announceGrpc(undefined)
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
