import type { Server } from 'node:http'
import type { Agent } from '../agent.js'
import { startGrpc } from '../grpc/serve-grpc.js'
import { appInternals } from '../http/_app-internals.js'
import { type A2AApp, type A2AAppOptions, createA2AApp } from '../http/app.js'
import type { LogLevel } from '../logger.js'
import { refuseUnservableStore } from '../stores/_ready.js'
import type { NativeRuntime } from './_native-serve.js'
import { readServeSettings, serveApp } from './_serve-app.js'

/** How `serveAgent` serves an agent: the app's options, and the server's own (address, slow clients, connections). */
export interface ServeOptions extends A2AAppOptions {
  /**
   * The port to listen on; `0` picks a free port.
   * @default PORT, else 3000
   */
  port?: number
  /**
   * The address to listen on. Use `0.0.0.0` to listen on every interface (in a container).
   * @default HOST, else '127.0.0.1'
   */
  hostname?: string
  /**
   * Also serve the agent over gRPC (A2A v1.0, `lf.a2a.v1.A2AService`) on this port, on the address HTTP listens on
   * (`hostname`: `0.0.0.0` or `::` is every interface); `0` picks a free port. The cards list the interface; it
   * closes with the server. A request message must arrive within `requestTimeoutMs`, and a connection with no call
   * closes after `keepAliveTimeoutMs`, as over HTTP. Node only, and it needs the packages `@grpc/grpc-js` and
   * `@bufbuild/protobuf` (see `a2a-runtime/grpc`).
   * @default A2A_GRPC_PORT, else none (no gRPC)
   */
  grpcPort?: number
  /**
   * `host:port` the A2A cards list for the gRPC interface, where clients reach it through a proxy or a port mapping
   * (`grpc.example.com:443`).
   * @default A2A_GRPC_PUBLIC_ADDRESS, else the host of publicUrl (or the listening one) and the gRPC port
   */
  grpcPublicAddress?: string
  /**
   * Log one line per request (method, route, status, time) at this level. The path is logged without its query
   * string, which may carry a token.
   * @default undefined (no request log)
   */
  requestLogLevel?: Exclude<LogLevel, 'silent'>
  /**
   * Most time a client may take to send the headers of a request, in ms, counted from the first byte of the
   * request (from the connection, for its first request). A client that trickles them (slowloris), or connects
   * and sends nothing, gets `408 Request Timeout` and is disconnected. At most `requestTimeoutMs`.
   * @default A2A_HEADERS_TIMEOUT_MS, else 15_000, or requestTimeoutMs if that is lower
   */
  headersTimeoutMs?: number
  /**
   * Most time a client may take to send a whole request, headers and body, in ms; past it the client gets
   * `408 Request Timeout` and is disconnected. It covers receiving the request only: a task that takes long
   * to answer, or an SSE stream that stays open, is never cut by it.
   * @default A2A_REQUEST_TIMEOUT_MS, else 30_000
   */
  requestTimeoutMs?: number
  /**
   * How long a keep-alive connection may sit idle between requests before the server closes it, in ms (Node
   * closes it up to a second later than it advertises).
   *
   * **Tip:** behind a load balancer or proxy that reuses connections, make it longer than the balancer's idle
   * timeout (e.g. 65000 behind one that keeps idle connections 60 s), so the balancer never sends a request on
   * a connection the server is closing (a 502).
   * @default A2A_KEEP_ALIVE_TIMEOUT_MS, else 5_000
   */
  keepAliveTimeoutMs?: number
  /**
   * Most connections open at once; Node closes a new connection past it as soon as it accepts it. Each holds a
   * file descriptor and a few KiB: 4,096 fits the open-file limit a Node process gets (Node raises it to the
   * system's hard limit when it starts: 4,096 on older systems, 524,288 or more on current ones), with room for
   * the store and webhooks on the common ones.
   * @default A2A_MAX_CONNECTIONS, else 4_096
   */
  maxConnections?: number
  /**
   * Most connections open at once from one client address; a new one past it gets a short
   * `503 Service Unavailable` (with `Connection: close`) and is closed before any of its requests is read, while
   * other addresses keep being served. 0 turns it off. The default keeps one address from taking every connection.
   *
   * **Tip:** behind a reverse proxy or load balancer every client arrives from the proxy's address, so this caps
   * the proxy as a whole: raise it above the proxy's own connection limit, or set 0 and cap per client at the
   * proxy.
   * @default A2A_MAX_CONNECTIONS_PER_ADDRESS, else half of maxConnections (2_048)
   */
  maxConnectionsPerAddress?: number
  /**
   * Shut down gracefully on SIGTERM and SIGINT, then exit.
   *
   * **Tip:** a second signal exits at once.
   * @default true
   */
  handleSignals?: boolean
}

/** A running server, as `serveAgent` resolves it: where it listens, the app it serves, and how to stop it. */
export interface A2AServer {
  /** The listening address, e.g. `http://127.0.0.1:3000/`. */
  readonly url: string
  /** The port it listens on: the one picked when the option was `0`. */
  readonly port: number
  /** The app it serves (its store, `replaceAgent`). */
  readonly app: A2AApp
  /** Where the gRPC binding listens (`host:port`, as the cards list it), when `grpcPort` is set. */
  readonly grpcAddress: string | undefined
  /** The server that serves it: Node's `node:http` server, or Bun's or Deno's own. */
  readonly runtime: 'node' | NativeRuntime
  /** Node's HTTP server; `undefined` on Bun and Deno, whose native servers serve the app. */
  readonly server: Server | undefined
  /** Stops accepting connections, lets running tasks finish (up to `shutdownTimeoutMs`), closes streams. */
  close(): Promise<void>
}

/**
 * Serves an agent: on Node with its HTTP server, on Bun and Deno with their native servers (`Bun.serve`,
 * `Deno.serve`). Slow-client timeouts and connection caps are Node's: Bun applies the request timeout as its idle
 * timeout (so a blocking answer must come within it there), and Deno neither (put a proxy in front that bounds them).
 *
 * @example
 * import agent from './agent.js'
 * const server = await serveAgent(agent, { port: 8080 })
 * console.log(`Agent card: ${server.url}.well-known/agent.json`)
 */
export async function serveAgent(agent: Agent, options: ServeOptions = {}): Promise<A2AServer> {
  const settings = readServeSettings(options)
  const app = createA2AApp(agent, settings.appOptions)
  await refuseUnservableStore(appInternals(app)?.engine.store, () => app.close())
  const served = await serveApp(app, settings, {
    startGrpc: (grpcOptions) => startGrpc(app, grpcOptions),
    announce: (url) =>
      settings.logger.info(`Agent "${agent.card.name}" listening on ${url} (card at ${url}.well-known/agent.json)`),
  })
  return { ...served, app }
}
