import { type Server, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeHandler } from 'h3/node'
import type { Agent } from '../agent.js'
import { type A2AApp, type A2AAppOptions, createA2AApp } from '../http/app.js'
import { ConfigurationError } from '../errors.js'
import { type LogLevel, createConsoleLogger } from '../_logger.js'

/** How long a shutdown waits for ended streams to flush before closing their connections. */
const FLUSH_MS = 1000

export interface ServeOptions extends A2AAppOptions {
  /** Default: `PORT`, else 3000. `0` picks a free port. */
  port?: number
  /** Default: `HOST`, else `127.0.0.1`. Use `0.0.0.0` to listen on every interface (in a container). */
  hostname?: string
  /** Log one line per request (method, path, status, time) at this level. Default: no request log. */
  requestLogLevel?: Exclude<LogLevel, 'silent'>
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
  const logger = options.logger ?? createConsoleLogger()
  const app = createA2AApp(agent, { ...options, logger })
  const port = options.port ?? (process.env.PORT ? Number(process.env.PORT) : 3000)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigurationError(`The port must be an integer from 0 to 65535 (got ${options.port ?? process.env.PORT})`)
  const hostname = options.hostname ?? process.env.HOST ?? '127.0.0.1'

  const handler = toNodeHandler(app.h3)
  const log = options.requestLogLevel && logger[options.requestLogLevel].bind(logger)
  const server = createServer(
    log
      ? (req, res) => {
          const started = performance.now()
          res.once('close', () => log(`${req.method} ${req.url} ${res.statusCode} ${(performance.now() - started).toFixed(1)} ms`))
          return handler(req, res)
        }
      : handler,
  )
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') reject(new ConfigurationError(`Port ${port} on ${hostname} is already in use: stop the other server or choose another port (PORT)`))
      else if (error.code === 'EACCES') reject(new ConfigurationError(`No permission to listen on port ${port} on ${hostname}: choose a port above 1023 (PORT)`))
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

function displayHost(hostname: string): string {
  if (hostname === '0.0.0.0' || hostname === '::') return 'localhost'
  return hostname.includes(':') ? `[${hostname}]` : hostname
}
