import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Command } from 'commander'
import { toNodeHandler } from 'h3/node'
import type { Agent } from '../agent.js'
import { cardAt, normalizeCard } from '../core/_card.js'
import { describeLoadFailure } from '../dev/_load-failure.js'
import { watchProject } from '../dev/_watch.js'
import { ConfigurationError, ErrorCode } from '../errors.js'
import { readWebOrigin, WebOriginGuard } from '../http/_web-origin.js'
import { type A2AApp, createA2AApp, RPC_PATHS, SERVED_PATHS } from '../http/app.js'
import { createConsoleLogger, type LogLevel, logLevel } from '../logger.js'
import { applyConnectionPolicy, readConnectionPolicy } from '../node/_connection-policy.js'
import { envValue } from '../settings.js'
import { createMemoryStore } from '../stores/memory.js'
import { checkCard } from './_card-check.js'
import { publishDevAddress } from './_dev-address.js'
import { createEnvReloader } from './_env.js'
import { ProjectError } from './_errors.js'
import { assertEntryExists, DEFAULT_ENTRY, loadAgent } from './_load-agent.js'

interface DevFlags {
  port?: string
  host?: string
  logLevel?: LogLevel
}

/** Saves arriving this close together are one change (editors write a file in several steps). */
const SETTLE_MS = 15
/** How long Ctrl-C waits for running tasks and open streams before failing them. */
const SHUTDOWN_GRACE_MS = 10_000
/** How long a shutdown waits for ended streams to flush before closing their connections. */
const FLUSH_MS = 1000
/** Past this, a quiet shutdown says what it waits for. */
const SAY_WAITING_AFTER_MS = 500

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref())

export function registerDev(program: Command): void {
  program
    .command('dev')
    .description('Serve the agent with hot reload: the port stays open, tasks survive reloads')
    .argument('[entry]', 'the agent module', DEFAULT_ENTRY)
    .option('-p, --port <port>', 'port to listen on, or the next free one (default: PORT, else 3000)')
    .option('-H, --host <host>', 'interface to listen on (default: HOST, else localhost)')
    .option('--log-level <level>', 'debug, info, warn, error or silent (default: A2A_LOG_LEVEL, else info)')
    .action((entry: string, flags: DevFlags) => startDevServer(entry, flags))
}

async function startDevServer(entry: string, flags: DevFlags): Promise<void> {
  const cwd = process.cwd()
  // Outside a project there is nothing to serve or watch: say so as `a2a start` does. (A module deleted
  // while the server runs is a broken save instead, answered with 503 until it is back.)
  assertEntryExists(cwd, entry)
  const env = createEnvReloader(cwd)
  env.reload()
  const logger = createConsoleLogger(logLevel(flags.logLevel, '--log-level') ?? logLevel(envValue(process.env, 'A2A_LOG_LEVEL'), 'A2A_LOG_LEVEL') ?? 'info')
  // The same slow-client timeouts and connection caps as `a2a start`, from the same variables (the .env's too);
  // a bad one stops the start as it does there.
  const connectionPolicy = readConnectionPolicy({}, process.env)
  // The app answers only this machine's names and the listed ones (A2A_ALLOWED_HOSTS), whatever interface it
  // listens on: a dev server is what a web page on another site would go for. This guard covers the answers
  // given while the agent does not load.
  const webOrigin = new WebOriginGuard(readWebOrigin({}, process.env), { rpc: new Set(RPC_PATHS), served: SERVED_PATHS }, logger)
  // Tasks live here, outside the reloaded module: a reload keeps them all.
  const store = createMemoryStore()
  // In development a webhook on this machine (a test receiver) is fine unless the .env says otherwise; the
  // guard stays on for every other private address. `a2a start` allows nothing by default.
  const DEV_PUSH = {
    allow: envValue(process.env, 'A2A_PUSH_ALLOW') === undefined ? ['127.0.0.0/8', '::1'] : undefined,
    allowHttp: envValue(process.env, 'A2A_PUSH_ALLOW_HTTP') === undefined ? true : undefined,
  }
  let app: A2AApp | undefined
  let serve: ReturnType<typeof toNodeHandler> | undefined
  let failure: string | undefined
  let url: string | undefined

  const warnAboutCard = (agent: Agent) => {
    for (const finding of checkCard(cardAt(normalizeCard(agent.card), url ?? 'http://localhost:3000/'))) {
      logger[finding.level === 'error' ? 'error' : 'warn'](`card ${finding.path}: ${finding.message} (${finding.hint})`)
    }
  }

  const load = async (): Promise<void> => {
    const started = performance.now()
    try {
      const { agent } = await loadAgent(cwd, entry)
      if (app) app.replaceAgent(agent)
      else {
        app = createA2AApp(agent, { store, logger, push: DEV_PUSH, shutdownTimeoutMs: SHUTDOWN_GRACE_MS })
        serve = toNodeHandler(app.h3)
        if (url) app.setUrl(url)
      }
      if (failure) logger.info('The agent loads again')
      failure = undefined
      if (url) warnAboutCard(agent)
      logger.info(`Loaded ${entry} in ${Math.round(performance.now() - started)} ms`)
    } catch (error) {
      failure =
        error instanceof ProjectError ? error.message : error instanceof ConfigurationError ? `${entry}: ${error.message}` : describeLoadFailure(error, cwd)
      logger.error(`The agent failed to load: ${failure}. Fix it and save; the server keeps running.`)
    }
  }

  // While the code is broken every request gets a JSON-RPC error naming the problem: never HTML, never a
  // closed port.
  let inFlight = 0
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    inFlight++
    res.once('close', () => inFlight--)
    if (serve && !failure) return serve(req, res)
    const refused = webOrigin.refusal(req.headers.host ?? null, req.headers.origin ?? null)
    const message = refused ? `Invalid Request: ${refused}` : `The agent failed to load: ${failure ?? 'still loading'}`
    res.writeHead(refused ? 403 : 503, refused ? { 'content-type': 'application/json', connection: 'close' } : { 'content-type': 'application/json' })
    res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: refused ? ErrorCode.InvalidRequest : ErrorCode.Internal, message } }))
  }

  await load()
  const { listen } = await import('listhen')
  const listener = await listen(handler, {
    port: flags.port ?? envValue(process.env, 'PORT') ?? 3000,
    hostname: flags.host ?? envValue(process.env, 'HOST') ?? 'localhost',
    showURL: false,
    open: false,
    qr: false,
    clipboard: false,
    isProd: false,
    autoClose: false,
  })
  // listhen makes and starts its own server: bounded here, before the first client learns the address.
  applyConnectionPolicy(listener.server, connectionPolicy)
  url = new URL(listener.url).href
  app?.setUrl(url)
  webOrigin.addUrl(url)
  // listhen may have moved to the next free port: `a2a send` in this project finds the real one here.
  const address = publishDevAddress(cwd, url)
  process.once('exit', () => address.remove())

  // One reload at a time; saves during a reload trigger one more afterwards.
  let timer: ReturnType<typeof setTimeout> | undefined
  let changed = new Set<string>()
  let reloading: Promise<void> | undefined
  const reload = async () => {
    const files = [...changed]
    changed = new Set()
    try {
      if (files.some((file) => file === '.env')) {
        const names = env.reload()
        if (names.length) logger.info(`.env: ${names.join(', ')} changed`)
      }
    } catch (error) {
      logger.error(`.env could not be read: ${(error as Error).message}`)
    }
    logger.info(`${files.join(', ')} changed: reloading`)
    await load()
  }
  const watcher = watchProject(cwd, (file) => {
    changed.add(file)
    clearTimeout(timer)
    timer = setTimeout(() => {
      reloading = (reloading ?? Promise.resolve()).then(reload).catch((error) => logger.error('The reload failed', error))
    }, SETTLE_MS)
  })

  // Agent code under edit may leave a promise rejected or throw from a timer: say where, keep serving.
  const survive = (error: unknown) => logger.error(`Unhandled error in the agent's code: ${describeLoadFailure(error, cwd)}`, error)
  process.on('unhandledRejection', survive)
  process.on('uncaughtException', survive)

  let stopping = false
  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn(`${signal} again: stopping now`)
      process.exit(130)
    }
    stopping = true
    logger.info(`${signal}: stopping the dev server`)
    watcher.close()
    clearTimeout(timer)
    address.remove()
    // A stream open or a task running holds the exit for up to the grace period: never silently.
    const sayWaiting = () =>
      logger.info(
        `Waiting up to ${SHUTDOWN_GRACE_MS / 1000} s for running tasks${inFlight ? ` and ${inFlight} open request(s)` : ''} to finish; press Ctrl-C again to stop now`,
      )
    if (inFlight > 0) sayWaiting()
    const later = inFlight > 0 ? undefined : setTimeout(sayWaiting, SAY_WAITING_AFTER_MS)
    // Both at once: the streams end as the drain settles their tasks, and only then can the listener close.
    const closed = listener.close()
    // The drain is bounded by the grace itself; the timer only keeps that promise should anything else hang.
    await Promise.race([app?.close(), delay(SHUTDOWN_GRACE_MS + FLUSH_MS)])
    // Ended streams get a moment to flush. A connection still open after that (a client that stopped reading,
    // a request whose body never ends) would hold the exit for good: cut it, as serveAgent does.
    await Promise.race([closed, delay(FLUSH_MS)])
    listener.server.closeAllConnections()
    clearTimeout(later)
    process.exit(0)
  }
  process.on('SIGINT', shutdown)
  process.on('SIGTERM', shutdown)

  // Said once the watcher runs and Ctrl-C is handled, so a save or a signal right after this line is seen.
  logger.info(`Dev server at ${url} (card at ${url}.well-known/agent.json); watching for changes`)
  if (app) warnAboutCard(app.agent)
}
