import type { IncomingMessage, ServerResponse } from 'node:http'
import { dirname, normalize } from 'node:path'
import { toNodeHandler } from 'h3/node'
import type { Agent } from '../agent.js'
import { checkCard } from '../cli/_card-check.js'
import { agentModules, importAgent } from '../cli/_load-agent.js'
import { cardAt, normalizeCard } from '../core/_card.js'
import { ErrorCode } from '../errors.js'
import type { WebOriginGuard } from '../http/_web-origin.js'
import type { A2AAppOptions } from '../http/app-options.js'
import type { Logger } from '../logger.js'
import { readAgentEntries } from '../multi/_agent-names.js'
import {
  agentAuthCheck,
  agentsInstrumentation,
  drainEveryAgent,
  removeAgent,
  replaceAgent,
  servedAgent,
  servedAgentNames,
  wasRemoved,
} from '../multi/_agent-set.js'
import { agentStore } from '../multi/_agent-store.js'
import { agentUrl } from '../multi/_hosted-agent.js'
import { createAgentsApp } from '../multi/agents-app.js'
import type { A2AAgentsApp } from '../multi/agents-options.js'
import type { TaskStore } from '../stores/task-store.js'
import { loadFailureText } from './_failure-text.js'
import { moduleFiles } from './_module-graph.js'
import { SHUTDOWN_GRACE_MS } from './_shutdown.js'
import { InspectorFeed } from './inspector/_agents-feed.js'
import { Inspector, isInspectorPath, splitFailure } from './inspector/inspector.js'

/** One module of the folder: the agent it is (once it loads), the files it is made of, its inspector. */
interface AgentModule {
  name: string
  file: string
  /** Its own file and the project files it imports: a save of one reloads this agent. */
  files: Set<string>
  /** Why its last load failed; the version loaded before (if any) is still served. */
  failure: string | undefined
  inspector: Inspector
}

/**
 * `a2a dev` of a folder of agents (`src/agents/`): every module that exports an agent is served at `/<its name>/`
 * by one app of several agents (`createAgentsApp`), and reloaded on its own. A save reloads the agents made of the
 * saved file (the agent's module, or a module it imports: one shared by two reloads both); the others, their modules
 * and their running tasks are not touched. A module that fails to load is said in one line and its agent keeps
 * serving the version loaded before (one that never loaded answers 503 with the reason). A new module adds an agent;
 * a deleted one removes it: its path answers 404, its running tasks finish, its stored tasks stay in the store (an
 * agent of that name added again serves them). Each agent has its inspector at `/<name>/__a2a/`.
 */
export class DevAgents {
  #app: A2AAgentsApp | undefined
  #serve: ReturnType<typeof toNodeHandler> | undefined
  #url: string | undefined
  readonly #modules = new Map<string, AgentModule>()
  readonly #feed = new InspectorFeed()
  readonly #store: TaskStore
  readonly #folder: string
  /** Requests being answered, for what a shutdown says it waits for. */
  inFlight = 0

  constructor(
    readonly cwd: string,
    folder: string,
    readonly logger: Logger,
    readonly webOrigin: WebOriginGuard,
    readonly appOptions: A2AAppOptions & { store: TaskStore },
    readonly traceUrl: () => string | undefined,
  ) {
    this.#folder = normalize(folder).replace(/[\\/]+$/, '')
    this.#store = this.#feed.observe(appOptions.store)
  }

  /** The inspector's address: the first agent's page (`/__a2a/` leads there too). */
  get pageUrl(): string {
    const first = this.#modules.values().next().value
    return first ? first.inspector.pageUrl : new URL('__a2a/', this.#url ?? 'http://localhost/').href
  }

  /** The names served now. */
  get served(): string[] {
    return this.#app ? servedAgentNames(this.#app) : []
  }

  /** Loads every agent (the first time), or those a save of `files` touched. */
  async load(files: string[] = []): Promise<void> {
    let modules: Map<string, string>
    try {
      modules = agentModules(this.cwd, this.#folder)
    } catch (error) {
      this.logger.error(`${this.#folder} cannot be read: ${(error as Error).message}; the agents served stay`)
      return
    }
    const names = files.length === 0 ? [...modules.keys()] : this.#touched(files, modules)
    const loaded = new Map<string, Agent>()
    for (const name of names) {
      const file = modules.get(name)
      if (file === undefined) this.#remove(name)
      else {
        const agent = await this.#loadOne(name, file, files)
        if (agent) loaded.set(name, agent)
      }
    }
    if (loaded.size === 0) return
    if (!this.#app) this.#makeApp(loaded)
    else for (const [name, agent] of loaded) this.#serveAgent(name, agent)
  }

  /** The agents a save touched: their modules, the modules they import, or every agent for a file none is seen to. */
  #touched(files: string[], modules: Map<string, string>): string[] {
    const names = new Set<string>()
    for (const file of files.map((each) => normalize(each))) {
      const own = [...modules].find(([, path]) => normalize(path) === file)?.[0]
      const gone = [...this.#modules.values()].find((module) => normalize(module.file) === file)?.name
      const users = [...this.#modules.values()].filter((module) => module.files.has(file)).map(({ name }) => name)
      for (const name of [own, gone, ...users]) if (name !== undefined) names.add(name)
      if (own === undefined && gone === undefined && users.length === 0 && dirname(file) !== this.#folder)
        for (const name of [...this.#modules.keys(), ...modules.keys()]) names.add(name)
    }
    return [...names]
  }

  async #loadOne(name: string, file: string, saved: string[]): Promise<Agent | undefined> {
    const { cwd, logger } = this
    const module = this.#module(name, file)
    module.files = moduleFiles(cwd, file)
    const started = performance.now()
    const at = () => new Date().toISOString()
    try {
      const { agent } = await importAgent(cwd, file)
      if (!agent) {
        // A helper beside the agents: no agent, nothing served (an agent that stops exporting one goes away).
        if (this.#app && servedAgentNames(this.#app).includes(name)) this.#remove(name)
        else this.#forget(name)
        return undefined
      }
      readAgentEntries({ [name]: agent })
      if (module.failure) logger.info(`${file} loads again`)
      module.failure = undefined
      const ms = Math.round(performance.now() - started)
      logger.info(`Loaded ${file} in ${ms} ms`)
      module.inspector.loaded({ at: at(), ms, files: saved, findings: this.#url ? this.#checkCard(name, agent) : [] })
      return agent
    } catch (error) {
      const { text, frame } = loadFailureText(error, file, cwd)
      module.failure = text
      const served = this.#app !== undefined && servedAgentNames(this.#app).includes(name)
      const keeps = served ? `/${name}/ keeps serving the version loaded before` : `/${name}/ is not served`
      logger.error(`The agent ${name} failed to load: ${text}. ${keeps}; fix it and save.${frame}`)
      const ms = Math.round(performance.now() - started)
      module.inspector.loaded({ at: at(), ms, files: saved, failure: splitFailure(text), findings: [] })
      return undefined
    }
  }

  /** The module of an agent, made with its inspector the first time its name is seen. */
  #module(name: string, file: string): AgentModule {
    const known = this.#modules.get(name)
    if (known) {
      known.file = file
      return known
    }
    const inspector = new Inspector(this.webOrigin, this.traceUrl, this.#feed)
    // Its pages list this agent's tasks only: the shared store as this agent reads it.
    inspector.showAgent(
      name,
      agentStore(this.#store, name, () => false, undefined),
      () => [...this.#modules.keys()],
    )
    inspector.checkWith(() => (this.#app ? agentAuthCheck(this.#app, name) : undefined))
    if (this.#app) inspector.traceWith(agentsInstrumentation(this.#app))
    if (this.#url) inspector.setUrl(agentUrl(this.#url, name))
    this.#feed.add(inspector)
    const module: AgentModule = { name, file, files: new Set(), failure: undefined, inspector }
    this.#modules.set(name, module)
    for (const other of this.#modules.values()) other.inspector.agentsChanged()
    return module
  }

  #makeApp(agents: Map<string, Agent>): void {
    const app = createAgentsApp(Object.fromEntries(agents), { ...this.appOptions, store: this.#store })
    this.#app = app
    this.#serve = toNodeHandler(app.h3)
    if (this.#url) app.setUrl(this.#url)
    for (const module of this.#modules.values()) module.inspector.traceWith(agentsInstrumentation(app))
  }

  #serveAgent(name: string, agent: Agent): void {
    if (replaceAgent(this.#app!, name, agent) === 'added')
      this.logger.info(`Agent ${name} added at ${this.#url ? agentUrl(this.#url, name) : `/${name}/`}`)
  }

  /** A deleted module: its agent is served no more (see the class). */
  #remove(name: string): void {
    if (this.#app && removeAgent(this.#app, name))
      this.logger.info(`Agent ${name} removed: its module is gone (its running tasks finish, its tasks stay stored)`)
    this.#forget(name)
  }

  #forget(name: string): void {
    const module = this.#modules.get(name)
    if (!module) return
    module.inspector.close()
    this.#modules.delete(name)
    for (const other of this.#modules.values()) other.inspector.agentsChanged()
  }

  /** Stops the app: every agent's running tasks drained (removed agents' too), then the store closed. */
  async close(): Promise<void> {
    for (const module of this.#modules.values()) module.inspector.close()
    const app = this.#app
    if (!app) return void (await this.appOptions.store.close?.())
    // Drained first, then closed: the app's close drains the agents it serves, not removed ones, and then closes the
    // store, which a removed agent's running task still writes to as it ends.
    await drainEveryAgent(app, SHUTDOWN_GRACE_MS)
    await app.close()
  }

  /** The server's address, once listening: each agent's is it and its name. */
  setUrl(url: string): void {
    this.#url = url
    this.#app?.setUrl(url)
    this.webOrigin.addUrl(url)
    for (const module of this.#modules.values()) module.inspector.setUrl(agentUrl(url, module.name))
  }

  /** Once listening, the cards' check with their real URLs (the first load came before they were known). */
  checkCards(): void {
    const app = this.#app
    if (!app) return
    for (const name of servedAgentNames(app)) {
      const module = this.#modules.get(name)
      const agent = servedAgent(app, name)
      if (module && !module.failure && agent) module.inspector.cardChecked(this.#checkCard(name, agent))
    }
  }

  #checkCard(name: string, agent: Agent) {
    const findings = checkCard(cardAt(normalizeCard(agent.card), agentUrl(this.#url ?? 'http://localhost:3000/', name)))
    for (const finding of findings)
      this.logger[finding.level === 'error' ? 'error' : 'warn'](
        `${name}: card ${finding.path}: ${finding.message} (${finding.hint})`,
      )
    return findings
  }

  readonly handler = (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/'
    const first = this.#modules.values().next().value
    if (isInspectorPath(url)) {
      // The server's own inspector path leads to the first agent's page; the page's files are served from here.
      const path = url.split('?')[0]!
      if (first && (path === '/__a2a' || path === '/__a2a/')) {
        res.writeHead(307, { location: `/${first.name}/__a2a/` })
        return res.end()
      }
      return (first?.inspector ?? new Inspector(this.webOrigin)).handle(req, res)
    }
    const slash = url.indexOf('/', 1)
    const name = decodeSegment(slash < 0 ? url.slice(1).split('?')[0]! : url.slice(1, slash))
    const module = name === undefined ? undefined : this.#modules.get(name)
    const below = slash < 0 ? '/' : url.slice(slash)
    if (module && isInspectorPath(below)) {
      req.url = below
      return module.inspector.handle(req, res)
    }
    this.inFlight++
    res.once('close', () => this.inFlight--)
    const app = this.#app
    const served = app !== undefined && name !== undefined && servedAgentNames(app).includes(name)
    if (served || (app && !module && !(name !== undefined && wasRemoved(app, name)))) return this.#serve!(req, res)
    const refused = this.webOrigin.refusal(req.headers.host ?? null, req.headers.origin ?? null)
    if (refused) return answer(res, 403, ErrorCode.InvalidRequest, `Invalid Request: ${refused}`)
    if (module) {
      const why = module.failure ?? 'still loading'
      return answer(res, 503, ErrorCode.Internal, `The agent ${module.name} failed to load: ${why}`)
    }
    if (app && name !== undefined)
      return answer(res, 404, ErrorCode.MethodNotFound, `No agent at /${name}/: its module was removed`)
    const failures = [...this.#modules.values()].map((each) => `${each.name}: ${each.failure ?? 'still loading'}`)
    const said = failures.length ? failures.join('; ') : `${this.#folder} holds no agent module`
    return answer(res, 503, ErrorCode.Internal, `No agent loads: ${said}`)
  }
}

/** A path segment as a name, undefined when it is not one (bad percent-encoding names no agent). */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

function answer(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json', ...(status === 403 && { connection: 'close' }) })
  res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }))
}
