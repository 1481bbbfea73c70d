import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeHandler } from 'h3/node'
import type { Agent } from '../agent.js'
import { ConfigurationError } from '../errors.js'
import { defaultAllowedHosts } from '../http/_allowed-hosts.js'
import { type A2AApp, type A2AAppOptions, createA2AApp, SERVED_PATHS } from '../http/app.js'
import { createConsoleLogger, type LogLevel } from '../logger.js'
import { envValue, processEnv } from '../settings.js'
import { applyConnectionPolicy, readConnectionPolicy } from './_connection-policy.js'

/** How long a shutdown waits for ended streams to flush before closing their connections. */
const FLUSH_MS = 1000

export interface ServeOptions extends A2AAppOptions {
  /** Default: `PORT`, else 3000. `0` picks a free port. */
  port?: number
  /** Default: `HOST`, else `127.0.0.1`. Use `0.0.0.0` to listen on every interface (in a container). */
  hostname?: string
  /**
   * Log one line per request (method, route, status, time) at this level. The path is logged without its query
   * string, which may carry a token. Default: no request log.
   */
  requestLogLevel?: Exclude<LogLevel, 'silent'>
  /**
   * Most time a client may take to send the headers of a request, in ms, counted from the first byte of the
   * request (from the connection, for its first request). A client that trickles them (slowloris), or connects
   * and sends nothing, gets `408 Request Timeout` and is disconnected. At most `requestTimeoutMs`.
   * Default: `A2A_HEADERS_TIMEOUT_MS`, else 15,000 (or `requestTimeoutMs` if that is lower).
   */
  headersTimeoutMs?: number
  /**
   * Most time a client may take to send a whole request, headers and body, in ms; past it the client gets
   * `408 Request Timeout` and is disconnected. It covers receiving the request only: a task that takes long
   * to answer, or an SSE stream that stays open, is never cut by it. Default: `A2A_REQUEST_TIMEOUT_MS`, else 30,000.
   */
  requestTimeoutMs?: number
  /**
   * How long a keep-alive connection may sit idle between requests before the server closes it, in ms (Node
   * closes it up to a second later than it advertises). Default: `A2A_KEEP_ALIVE_TIMEOUT_MS`, else 5,000.
   *
   * **Tip:** behind a load balancer or proxy that reuses connections, make it longer than the balancer's idle
   * timeout (e.g. 65000 behind one that keeps idle connections 60 s), so the balancer never sends a request on
   * a connection the server is closing (a 502).
   */
  keepAliveTimeoutMs?: number
  /**
   * Most connections open at once; Node closes a new connection past it as soon as it accepts it. Each holds a
   * file descriptor and a few KiB: 4,096 fits the open-file limit a Node process gets (Node raises it to the
   * system's hard limit when it starts: 4,096 on older systems, 524,288 or more on current ones), with room for
   * the store and webhooks on the common ones. Default: `A2A_MAX_CONNECTIONS`, else 4,096.
   */
  maxConnections?: number
  /**
   * Most connections open at once from one client address; a new one past it gets a short
   * `503 Service Unavailable` (with `Connection: close`) and is closed before any of its requests is read, while
   * other addresses keep being served. 0 turns it off. Default: `A2A_MAX_CONNECTIONS_PER_ADDRESS`, else half of
   * `maxConnections` (2,048), so one address never takes every connection.
   *
   * **Tip:** behind a reverse proxy or load balancer every client arrives from the proxy's address, so this caps
   * the proxy as a whole: raise it above the proxy's own connection limit, or set 0 and cap per client at the
   * proxy.
   */
  maxConnectionsPerAddress?: number
  /**
   * Shut down gracefully on SIGTERM and SIGINT, then exit. Default `true`.
   *
   * **Tip:** a second signal exits at once.
   */
  handleSignals?: boolean
}

export interface A2AServer {
  /** The listening address, e.g. `http://127.0.0.1:3000/`. */
  readonly url: string
  readonly port: number
  readonly app: A2AApp
  readonly server: Server
  /** Stops accepting connections, lets running tasks finish (up to `shutdownTimeoutMs`), closes streams. */
  close(): Promise<void>
}

/**
 * Serves an agent on Node's HTTP server.
 *
 * @example
 * import agent from './agent.js'
 * const server = await serveAgent(agent, { port: 8080 })
 * console.log(`Agent card: ${server.url}.well-known/agent.json`)
 */
export async function serveAgent(agent: Agent, options: ServeOptions = {}): Promise<A2AServer> {
  // Checked before the app exists, so a bad value opens no store.
  const env = options.env ?? processEnv()
  const connectionPolicy = readConnectionPolicy(options, env)
  const logger = options.logger ?? createConsoleLogger(undefined, env)
  const hostname = options.hostname ?? envValue(env, 'HOST') ?? '127.0.0.1'
  const allowedHosts = options.allowedHosts ?? defaultAllowedHosts(hostname, options.publicUrl, env)
  const app = createA2AApp(agent, { ...options, env, logger, ...(allowedHosts && { allowedHosts }) })
  const portText = envValue(env, 'PORT')
  const port = options.port ?? (portText === undefined ? 3000 : Number(portText))
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigurationError(`The port must be an integer from 0 to 65535 (got ${options.port ?? portText})`)

  const handler = toNodeHandler(app.h3)
  const log = options.requestLogLevel && logger[options.requestLogLevel].bind(logger)
  const server = createServer(
    log
      ? (req, res) => {
          const started = performance.now()
          res.once('close', () => log(`${req.method} ${logPath(req.url)} ${res.statusCode} ${(performance.now() - started).toFixed(1)} ms`))
          return handler(req, res)
        }
      : handler,
  )
  applyConnectionPolicy(server, connectionPolicy)
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE')
        reject(new ConfigurationError(`Port ${port} on ${hostname} is already in use: stop the other server or choose another port (PORT)`))
      else if (error.code === 'EACCES')
        reject(new ConfigurationError(`No permission to listen on port ${port} on ${hostname}: choose a port above 1023 (PORT)`))
      else reject(error)
    })
    server.listen(port, hostname, () => {
      server.removeAllListeners('error')
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const url = `http://${displayHost(hostname)}:${address.port}/`
  app.setUrl(url)
  logger.info(`Agent "${agent.card.name}" listening on ${url} (card at ${url}.well-known/agent.json)`)

  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      let done = false
      void closed.then(() => (done = true))
      // While tasks drain and their streams flush, keep closing connections as they fall idle, so no
      // keep-alive client slips a new request in (the app refuses new tasks during shutdown anyway).
      const reaper = setInterval(() => server.closeIdleConnections(), 10)
      try {
        await app.close()
        const flushUntil = Date.now() + FLUSH_MS
        while (!done && Date.now() < flushUntil) await new Promise((resolve) => setTimeout(resolve, 10))
      } finally {
        clearInterval(reaper)
      }
      server.closeAllConnections()
      await closed
      detachSignals()
    })()
    return closing
  }

  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) {
      logger.warn(`${signal} again: exiting now`)
      process.exit(1)
    }
    logger.info(`${signal}: shutting down (running tasks get up to ${options.shutdownTimeoutMs ?? 10_000} ms)`)
    close().then(
      () => process.exit(0),
      (error) => {
        logger.error('Shutdown failed', error)
        process.exit(1)
      },
    )
  }
  const handleSignals = options.handleSignals ?? true
  const detachSignals = (): void => {
    process.off('SIGTERM', onSignal)
    process.off('SIGINT', onSignal)
  }
  if (handleSignals) {
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
  }

  return { url, port: address.port, app, server, close }
}

/**
 * The request target as the request log shows it: one of the app's routes, without the query string or
 * fragment (clients put tokens there, `/?token=…`); any other target (a path segment holding a secret,
 * `/;token=…`, an absolute-form URL with user info) is shown as `(other path)`, never as sent.
 */
function logPath(url = ''): string {
  let path = url.split(/[?#]/, 1)[0]!
  if (!path.startsWith('/')) {
    try {
      path = new URL(path).pathname
    } catch {
      return '(other path)'
    }
  }
  return SERVED_PATHS.has(path) ? path : '(other path)'
}

function displayHost(hostname: string): string {
  if (hostname === '0.0.0.0' || hostname === '::') return 'localhost'
  return hostname.includes(':') ? `[${hostname}]` : hostname
}
