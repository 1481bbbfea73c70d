import type { IncomingMessage, ServerResponse } from 'node:http'
import { toNodeHandler } from 'h3/node'
import type { Agent } from '../agent.js'
import { checkCard, type Finding } from '../cli/_card-check.js'
import { loadAgent } from '../cli/_load-agent.js'
import { cardAt, normalizeCard } from '../core/_card.js'
import { ErrorCode } from '../errors.js'
import { appInternals, authCheckOf } from '../http/_app-internals.js'
import type { WebOriginGuard } from '../http/_web-origin.js'
import { type A2AApp, type A2AAppOptions, createA2AApp } from '../http/app.js'
import type { Logger } from '../logger.js'
import { loadFailureText } from './_failure-text.js'
import { type Inspector, isInspectorPath, splitFailure } from './inspector/inspector.js'

/**
 * The agent `a2a dev` serves, loaded again on every save: the first load makes the app, later ones swap the agent
 * in (tasks, their streams and the port stay). While the code does not load, every request gets a JSON-RPC
 * error naming the problem (503; 403 for a foreign Host or Origin): never HTML, never a closed port.
 */
export class DevAgent {
  #app: A2AApp | undefined
  #serve: ReturnType<typeof toNodeHandler> | undefined
  #failure: string | undefined
  #url: string | undefined
  /** Requests being answered, for what a shutdown says it waits for. */
  inFlight = 0
  /** Told of the app when the first load that succeeds makes it (gRPC serves it from then on). */
  onApp: ((app: A2AApp) => void) | undefined

  constructor(
    readonly cwd: string,
    readonly entry: string,
    readonly logger: Logger,
    readonly webOrigin: WebOriginGuard,
    readonly appOptions: A2AAppOptions,
    readonly inspector: Inspector,
  ) {
    // The inspector's task feed answers a page's credential as the agent served now answers it.
    inspector.checkWith(() => this.#app && authCheckOf(this.#app))
  }

  get app(): A2AApp | undefined {
    return this.#app
  }

  /** Loads the agent (again, after a save of `files`); the inspector's pages hear how it went. */
  async load(files: string[] = []): Promise<void> {
    const { cwd, entry, logger } = this
    const started = performance.now()
    try {
      const { agent } = await loadAgent(cwd, entry)
      if (this.#app) this.#app.replaceAgent(agent)
      else {
        const app = createA2AApp(agent, this.appOptions)
        this.#app = app
        // With telemetry (A2A_TELEMETRY), the inspector shows the trace each task event was made in.
        this.inspector.traceWith(appInternals(app)?.engine.instrumentation)
        this.#serve = toNodeHandler(app.h3)
        if (this.#url) app.setUrl(this.#url)
        this.onApp?.(app)
      }
      if (this.#failure) logger.info('The agent loads again')
      this.#failure = undefined
      const findings = this.#url ? this.warnAboutCard(agent) : []
      const ms = Math.round(performance.now() - started)
      logger.info(`Loaded ${entry} in ${ms} ms`)
      this.inspector.loaded({ at: new Date().toISOString(), ms, files, findings })
    } catch (error) {
      // The failing line goes to the console only: the inspector and the JSON-RPC error keep the one line.
      const { text, frame } = loadFailureText(error, entry, cwd)
      this.#failure = text
      logger.error(`The agent failed to load: ${this.#failure}. Fix it and save; the server keeps running.${frame}`)
      const ms = Math.round(performance.now() - started)
      this.inspector.loaded({
        at: new Date().toISOString(),
        ms,
        files,
        failure: splitFailure(this.#failure),
        findings: [],
      })
    }
  }

  /**
   * Stops the app: its running tasks drained, then its store closed. When no load ever made the app the store is
   * closed alone (a file store's directory lock, a database's connections go with it).
   */
  async close(): Promise<void> {
    if (this.#app) return this.#app.close()
    const { store } = this.appOptions
    if (typeof store === 'object') await store.close?.()
  }

  /** The address it is served at, once listening: the card's and the allowed Host's. */
  setUrl(url: string): void {
    this.#url = url
    this.#app?.setUrl(url)
    this.webOrigin.addUrl(url)
    this.inspector.setUrl(url)
  }

  /** Once listening, the card's check with its real URL (the first load came before it was known). */
  checkCard(): void {
    if (this.#app && !this.#failure) this.inspector.cardChecked(this.warnAboutCard(this.#app.agent))
  }

  /** The card's problems, as warnings (errors for what breaks clients); returned for the inspector. */
  warnAboutCard(agent: Agent): Finding[] {
    const findings = checkCard(cardAt(normalizeCard(agent.card), this.#url ?? 'http://localhost:3000/'))
    for (const finding of findings) {
      this.logger[finding.level === 'error' ? 'error' : 'warn'](
        `card ${finding.path}: ${finding.message} (${finding.hint})`,
      )
    }
    return findings
  }

  readonly handler = (req: IncomingMessage, res: ServerResponse) => {
    // The inspector answers even while the agent does not load (its banner says why); its live channel is not
    // a request a shutdown waits for.
    if (isInspectorPath(req.url)) return this.inspector.handle(req, res)
    this.inFlight++
    res.once('close', () => this.inFlight--)
    if (this.#serve && !this.#failure) return this.#serve(req, res)
    const refused = this.webOrigin.refusal(req.headers.host ?? null, req.headers.origin ?? null)
    const message = refused
      ? `Invalid Request: ${refused}`
      : `The agent failed to load: ${this.#failure ?? 'still loading'}`
    res.writeHead(
      refused ? 403 : 503,
      refused ? { 'content-type': 'application/json', connection: 'close' } : { 'content-type': 'application/json' },
    )
    res.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: null,
        error: { code: refused ? ErrorCode.InvalidRequest : ErrorCode.Internal, message },
      }),
    )
  }
}
