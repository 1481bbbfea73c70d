import type { AddressInfo } from 'node:net'
import type { Command } from 'commander'
import { announceListening, createEnvReloader } from '../cli/_env.js'
import { assertEntryExists, chooseEntry } from '../cli/_load-agent.js'
import { portSetting } from '../cli/_port.js'
import { GUARDED_PATHS } from '../http/_routes.js'
import { readWebOrigin, WebOriginGuard } from '../http/_web-origin.js'
import type { A2AAppOptions } from '../http/app-options.js'
import { createConsoleLogger, type Logger, type LogLevel, logLevel } from '../logger.js'
import { applyConnectionPolicy, readConnectionPolicy } from '../node/_connection-policy.js'
import type { PushOptions } from '../push/push-options.js'
import { type Env, envGiven, envValue } from '../settings.js'
import { refuseUnservableStore } from '../stores/_ready.js'
import type { TaskStore } from '../stores/task-store.js'
import { publishDevAddress } from './_address.js'
import { DevAgent } from './_agent.js'
import { DevAgents } from './_agents.js'
import { DevGrpc } from './_grpc.js'
import { describeLoadFailure } from './_load-failure.js'
import { reloadOnSave } from './_reload.js'
import { SHUTDOWN_GRACE_MS, stopOnSignals } from './_shutdown.js'
import { openDevStore, storeBanner } from './_store.js'
import { readTraceUrl } from './inspector/_trace-url.js'
import { Inspector } from './inspector/inspector.js'

/** How many ports after a busy one `a2a dev` tries before it takes any free one. */
const NEXT_PORTS = 100

interface DevFlags {
  port?: string
  host?: string
  logLevel?: LogLevel
  open?: boolean
}

export function registerDev(program: Command): void {
  program
    .command('dev')
    .description('Serve the agent with hot reload: the port stays open, tasks survive reloads')
    .argument('[entry]', 'the agent module, or a folder of agents (default: src/agent.ts, else src/agents/)')
    .option('-p, --port <port>', 'port to listen on, or the next free one (default: PORT, else 3000)')
    .option('-H, --host <host>', 'interface to listen on (default: HOST, else localhost)')
    .option('--log-level <level>', 'debug, info, warn, error or silent (default: A2A_LOG_LEVEL, else info)')
    .option('-o, --open', 'open the inspector in the browser')
    .action((entry: string | undefined, flags: DevFlags) => startDevServer(entry, flags))
}

async function startDevServer(given: string | undefined, flags: DevFlags): Promise<void> {
  const cwd = process.cwd()
  const { entry, folder } = chooseEntry(cwd, given)
  // Outside a project there is nothing to serve or watch: say so as `a2a start` does. (A module deleted
  // while the server runs is a broken save instead, answered with 503 until it is back.)
  assertEntryExists(cwd, entry)
  const env = createEnvReloader(cwd)
  env.reload()
  // A PORT that is not a port stops the start, as it does for `a2a start` (not a silent 3000).
  const port = portSetting(flags.port, process.env)
  const logger = createConsoleLogger(
    logLevel(flags.logLevel, '--log-level') ??
      logLevel(envValue(process.env, 'A2A_LOG_LEVEL'), 'A2A_LOG_LEVEL') ??
      'info',
  )
  // The same slow-client timeouts and connection caps as `a2a start`, from the same variables (the .env's too);
  // a bad one stops the start as it does there.
  const connectionPolicy = readConnectionPolicy({}, process.env)
  // The app answers only this machine's names and the listed ones (A2A_ALLOWED_HOSTS), whatever interface it
  // listens on: a dev server is what a web page on another site would go for. This guard covers the answers
  // given while the agent does not load.
  const webOrigin = new WebOriginGuard(readWebOrigin({}, process.env), GUARDED_PATHS, logger)
  // The page at /__a2a/: it sees every reload and the tasks (the store reports their states): every task, or when the
  // card declares authentication, those of the credential the page sends.
  // A bad A2A_TRACE_URL stops the start; after a save of .env it is said, and the page shows trace ids unlinked.
  readTraceUrl(process.env)
  const traceUrl = () => {
    try {
      return readTraceUrl(process.env)
    } catch (error) {
      logger.error((error as Error).message)
      return undefined
    }
  }
  // Where tasks live, as `a2a start` reads it (A2A_STORE, the .env's too): memory when unset; a bad value stops the
  // start in one line. Opened once, outside the reloaded module: a reload keeps every task.
  const tasks = openDevStore(process.env, cwd, logger)
  await refuseUnservableStore(tasks.store, async () => tasks.store.close?.())
  const appOptions = { logger, push: devPushOptions(process.env), shutdownTimeoutMs: SHUTDOWN_GRACE_MS }
  // A folder of agents: each at /<name>/, reloaded on its own, each with its inspector page.
  const dev = folder
    ? new DevAgents(cwd, entry, logger, webOrigin, { ...appOptions, store: tasks.store }, traceUrl)
    : singleAgent(cwd, entry, webOrigin, traceUrl, { ...appOptions, store: tasks.store })
  await dev.load()

  const host = flags.host ?? envValue(process.env, 'HOST') ?? 'localhost'
  // gRPC as `a2a start` serves it (A2A_GRPC_PORT), once the agent loads; checked before anything listens.
  const grpc = DevGrpc.fromEnv(process.env, host, logger)
  if (grpc && dev instanceof DevAgents) logger.warn('A2A_GRPC_PORT: a2a dev serves a folder of agents over HTTP only')

  const nextPorts: [number, number] = [port + 1, Math.min(port + NEXT_PORTS, 65535)]
  const { listen } = await import('listhen')
  const listener = await listen(dev.handler, {
    // The next free port when this one is busy (README), found quietly: get-port-please's own notice
    // ("[get-port] … Using alternative port 3000") names a range we do not use; the line below says it once.
    // (listhen sets its own 3000–3100 as the alternative range: ours replaces it.) Port 0 is any free one.
    port: { port, verbose: false, ...(port > 0 && { portRange: nextPorts, alternativePortRange: nextPorts }) },
    hostname: host,
    showURL: false,
    open: false,
    qr: false,
    clipboard: false,
    isProd: false,
    autoClose: false,
  })
  // listhen makes and starts its own server: bounded here, before the first client learns the address.
  applyConnectionPolicy(listener.server, connectionPolicy)
  const url = new URL(listener.url).href
  const actual = Number(new URL(url).port)
  if (port !== 0 && actual !== port) logger.info(`Port ${port} is busy; using ${actual}`)
  dev.setUrl(url)
  // The project's own code finds this server where it really listens (a planner calling its writer at PORT and
  // HOST), after a move to the next free port too; a save of .env does not set them back.
  const listening = { PORT: String(actual), HOST: (listener.server.address() as AddressInfo).address }
  announceListening(listening)
  // listhen may have moved to the next free port: `a2a send` in this project finds the real one here.
  const address = publishDevAddress(cwd, url)
  if (address.heldBy) {
    logger.warn(
      `Another a2a dev of this project runs at ${address.heldBy}: a2a send and card validate here go to that one`,
    )
  }
  process.once('exit', () => address.remove())
  if (grpc && dev instanceof DevAgent) {
    if (dev.app) await grpc.serve(dev.app)
    else dev.onApp = (app) => void grpc.serve(app)
  }
  // The store stays the one opened at start: a save of .env that names another says so rather than moving the tasks.
  const envChanged = (names: string[]) => {
    if (names.includes('A2A_STORE'))
      logger.warn(`.env: A2A_STORE takes effect at the next start of a2a dev; tasks stay in ${tasks.where} until then`)
  }
  // .env read again (a save) leaves PORT and HOST where the server listens: it cannot move while it runs.
  const envKeepingAddress = {
    reload() {
      const changed = env.reload()
      announceListening(listening)
      return changed.filter((name) => !(name in listening))
    },
  }
  const stopWatching = reloadOnSave(cwd, envKeepingAddress, (files) => dev.load(files), logger, envChanged)

  // Agent code under edit may leave a promise rejected or throw from a timer: say where, keep serving.
  const survive = (error: unknown) =>
    logger.error(`Unhandled error in the agent's code: ${describeLoadFailure(error, cwd)}`, error)
  process.on('unhandledRejection', survive)
  process.on('uncaughtException', survive)
  const stop = () => {
    stopWatching()
    if (dev instanceof DevAgent) dev.inspector.close()
    void grpc?.close()
  }
  stopOnSignals(dev, listener, stop, () => address.remove(), logger)

  // Said once the watcher runs and Ctrl-C is handled, so a save or a signal right after this line is seen.
  if (dev instanceof DevAgent)
    logger.info(`Dev server at ${url} (card at ${url}.well-known/agent.json); watching for changes`)
  else
    logger.info(
      `Dev server at ${url}: agents ${dev.served.join(', ') || '(none loads yet)'} from ${entry}/, each at ${url}<name>/ ` +
        `(their list at ${url}.well-known/agents.json); watching for changes`,
    )
  const pageUrl = dev instanceof DevAgent ? dev.inspector.pageUrl : dev.pageUrl
  logger.info(`Inspector at ${pageUrl}`)
  logger.info(storeBanner(tasks))
  if (dev instanceof DevAgent) dev.checkCard()
  else dev.checkCards()
  if (flags.open) (await import('../cli/_open-browser.js')).openInBrowser(pageUrl, logger)
}

/** The one agent of `entry`, its inspector at /__a2a/ seeing every task of the store. */
function singleAgent(
  cwd: string,
  entry: string,
  webOrigin: WebOriginGuard,
  traceUrl: () => string | undefined,
  options: A2AAppOptions & { store: TaskStore; logger: Logger },
): DevAgent {
  const inspector = new Inspector(webOrigin, traceUrl)
  const observed = { ...options, store: inspector.observe(options.store) }
  return new DevAgent(cwd, entry, options.logger, webOrigin, observed, inspector)
}

/**
 * In development a webhook on this machine (a test receiver) is fine unless the .env says otherwise (a blank
 * `A2A_PUSH_ALLOW=` too); the guard stays on for every other private address. `a2a start` allows nothing by default.
 */
function devPushOptions(env: Env): PushOptions {
  return {
    ...(!envGiven(env, 'A2A_PUSH_ALLOW') && { allow: ['127.0.0.0/8', '::1'] }),
    ...(!envGiven(env, 'A2A_PUSH_ALLOW_HTTP') && { allowHttp: true }),
  }
}
