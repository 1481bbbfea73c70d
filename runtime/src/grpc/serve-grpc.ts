import { packageFile } from '../_package-root.js'
import { ConfigurationError } from '../errors.js'
import type { A2AApp } from '../http/app-options.js'
import { readSlowClientTimeouts } from '../node/_slow-client-timeouts.js'
import { processEnv } from '../settings.js'
import type { GrpcHost } from './_grpc-host.js'
import { checkedPublicAddress } from './_public-address.js'
import type { GrpcListenOptions } from './_server.js'
import type { GrpcServeOptions, GrpcServer } from './grpc-server.js'

const PEERS = ['@grpc/grpc-js', '@bufbuild/protobuf']

/**
 * Named through a constant, not a literal: a bundler follows `import('./_server.js')` and then fails on the optional
 * packages it imports (a Worker's bundle takes the root export, serveAgent and this module with it, and has no gRPC).
 * Built, the package keeps that module at dist/grpc/_server.js while this one moves into a chunk of the bundle: it is
 * found from the package's root then, beside this module when the sources run (tests).
 */
const serverModule = (): string =>
  (!import.meta.url.endsWith('.ts') && packageFile('dist/grpc/_server.js')?.href) || './_server.js'

async function loadServer(): Promise<typeof import('./_server.js')> {
  try {
    return (await import(/* @vite-ignore */ serverModule())) as typeof import('./_server.js')
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string }
    if (
      (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
      PEERS.some((peer) => message?.includes(peer))
    )
      throw new ConfigurationError(
        `gRPC needs the packages ${PEERS.join(' and ')}, which are not installed: run \`npm install ${PEERS.join(' ')}\` in the project`,
      )
    throw error
  }
}

/** Starts the gRPC binding for `serveAgent` and `a2a dev`, which read its settings. */
export async function startGrpc(app: A2AApp, options: GrpcListenOptions): Promise<GrpcServer> {
  const { startGrpcServer } = await loadServer()
  return startGrpcServer(app, options)
}

/** Starts the gRPC binding for `serveAgents`: its agents on one port, each request routed by its tenant. */
export async function startGrpcHost(host: GrpcHost, options: GrpcListenOptions): Promise<GrpcServer> {
  const { startGrpcHostServer } = await loadServer()
  return startGrpcHostServer(host, options)
}

/**
 * Serves the app's agent over gRPC too (A2A v1.0 §10, `lf.a2a.v1.A2AService`), on a port of its own beside the HTTP
 * server: the same agent, tasks, credentials and budgets, and the A2A cards list the interface while it listens.
 * A request message must arrive within `A2A_REQUEST_TIMEOUT_MS` and an idle connection closes after
 * `A2A_KEEP_ALIVE_TIMEOUT_MS`, as over HTTP.
 * Node only; it needs the packages `@grpc/grpc-js` and `@bufbuild/protobuf`. `serveAgent` starts it for you with
 * `A2A_GRPC_PORT` (or `grpcPort`).
 *
 * @example
 * const server = await serveAgent(agent)
 * const grpc = await serveGrpc(server.app, { port: 50051 })
 */
export async function serveGrpc(app: A2AApp, options: GrpcServeOptions = {}): Promise<GrpcServer> {
  const port = options.port ?? 50051
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigurationError(`The gRPC port must be an integer from 0 to 65535 (got ${options.port})`)
  const publicAddress = checkedPublicAddress(options.publicAddress, 'publicAddress')
  // HTTP's request and idle timeouts: A2A_REQUEST_TIMEOUT_MS and A2A_KEEP_ALIVE_TIMEOUT_MS, else their defaults.
  const timeouts = readSlowClientTimeouts({}, processEnv())
  return startGrpc(app, {
    port,
    host: options.host ?? '127.0.0.1',
    publicAddress,
    requestTimeoutMs: timeouts.request,
    idleTimeoutMs: timeouts.keepAlive,
  })
}
