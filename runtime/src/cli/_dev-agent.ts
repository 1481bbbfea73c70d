import type { IncomingMessage, ServerResponse } from 'node:http'
import { toNodeHandler } from 'h3/node'
import type { Agent } from '../agent.js'
import { cardAt, normalizeCard } from '../core/_card.js'
import { describeLoadFailure } from '../dev/_load-failure.js'
import { ConfigurationError, ErrorCode } from '../errors.js'
import type { WebOriginGuard } from '../http/_web-origin.js'
import { type A2AApp, type A2AAppOptions, createA2AApp } from '../http/app.js'
import type { Logger } from '../logger.js'
import { checkCard } from './_card-check.js'
import { ProjectError } from './_errors.js'
import { loadAgent } from './_load-agent.js'

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

  constructor(
    readonly cwd: string,
    readonly entry: string,
    readonly logger: Logger,
    readonly webOrigin: WebOriginGuard,
    readonly appOptions: A2AAppOptions,
  ) {}

  get app(): A2AApp | undefined {
    return this.#app
  }

  async load(): Promise<void> {
    const { cwd, entry, logger } = this
    const started = performance.now()
    try {
      const { agent } = await loadAgent(cwd, entry)
      if (this.#app) this.#app.replaceAgent(agent)
      else {
        const app = createA2AApp(agent, this.appOptions)
        this.#app = app
        this.#serve = toNodeHandler(app.h3)
        if (this.#url) app.setUrl(this.#url)
      }
      if (this.#failure) logger.info('The agent loads again')
      this.#failure = undefined
      if (this.#url) this.warnAboutCard(agent)
      logger.info(`Loaded ${entry} in ${Math.round(performance.now() - started)} ms`)
    } catch (error) {
      this.#failure =
        error instanceof ProjectError ? error.message : error instanceof ConfigurationError ? `${entry}: ${error.message}` : describeLoadFailure(error, cwd)
      logger.error(`The agent failed to load: ${this.#failure}. Fix it and save; the server keeps running.`)
    }
  }

  /** The address it is served at, once listening: the card's and the allowed Host's. */
  setUrl(url: string): void {
    this.#url = url
    this.#app?.setUrl(url)
    this.webOrigin.addUrl(url)
  }

  /** The card's problems, as warnings (errors for what breaks clients). */
  warnAboutCard(agent: Agent): void {
    for (const finding of checkCard(cardAt(normalizeCard(agent.card), this.#url ?? 'http://localhost:3000/'))) {
      this.logger[finding.level === 'error' ? 'error' : 'warn'](`card ${finding.path}: ${finding.message} (${finding.hint})`)
    }
  }

  readonly handler = (req: IncomingMessage, res: ServerResponse) => {
    this.inFlight++
    res.once('close', () => this.inFlight--)
    if (this.#serve && !this.#failure) return this.#serve(req, res)
    const refused = this.webOrigin.refusal(req.headers.host ?? null, req.headers.origin ?? null)
    const message = refused ? `Invalid Request: ${refused}` : `The agent failed to load: ${this.#failure ?? 'still loading'}`
    res.writeHead(refused ? 403 : 503, refused ? { 'content-type': 'application/json', connection: 'close' } : { 'content-type': 'application/json' })
    res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: refused ? ErrorCode.InvalidRequest : ErrorCode.Internal, message } }))
  }
}
