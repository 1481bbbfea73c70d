import type { Agent } from '../agent.js'
import { ConfigurationError } from '../errors.js'
import { DEFAULT_MAX_BODY_SIZE, declaredTooLarge } from '../http/_body.js'
import { aliveAnswer, notReady } from '../http/_health.js'
import { errorResponse } from '../http/_jsonrpc.js'
import { createA2AApp } from '../http/app.js'
import type { A2AApp, A2AAppOptions } from '../http/app-options.js'
import { createConsoleLogger } from '../logger.js'
import { type Env, envValue } from '../settings.js'
import { createDurableObjectStore, type DurableObjectStorageLike } from '../stores/durable-object.js'

/**
 * Cloudflare Workers. A Worker isolate lives for a request or a few, many run at once, and none can reach the
 * memory of another: a task sent through one request and streamed, fetched or canceled through the next would
 * not be found. So every request goes to one Durable Object per agent, which runs the agent and holds its
 * tasks: a single object, on one thread, sees every request in order, so streams, resubscription
 * (`Last-Event-ID`), cancel and `input-required` follow-ups work as on one Node process, and its storage keeps
 * the tasks when the object is moved or restarted (`DurableObjectTaskStore`). Its limit is one object's
 * throughput (it serves requests one at a time between awaits, ample for agents that wait on models).
 *
 * Only the parts of the Workers API used here are declared, so the package needs no Workers types.
 */

/** The part of a Durable Object's state (`ctx`, Cloudflare Workers) the agent's object uses. */
export interface DurableObjectStateLike {
  readonly storage: DurableObjectStorageLike
  blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>
}

interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown
  get(id: unknown): { fetch(request: Request): Promise<Response> }
}

/**
 * How `agentWorker` serves the agent: the app's options but `store` (tasks live in the Durable Object) and `env`
 * (the Worker's variables), and the binding that names the object.
 */
export interface AgentWorkerOptions extends Omit<A2AAppOptions, 'store' | 'env'> {
  /**
   * The name of the Durable Object binding in the Worker's configuration (`wrangler.jsonc`).
   * @default 'AGENT'
   */
  binding?: string
}

/** What `agentWorker` returns: the Worker's handler and the Durable Object class, both to export. */
export interface AgentWorker {
  /** The Worker's handler: `export default worker`. */
  worker: { fetch(request: Request, env: Record<string, unknown>): Promise<Response> }
  /** The Durable Object class: export it from the Worker's main module under the `class_name` the binding names. */
  AgentObject: new (
    state: DurableObjectStateLike,
    env: Record<string, unknown>,
  ) => { fetch(request: Request): Promise<Response> }
}

/** Running tasks hold their messages and artifacts in the object's memory (128 MB on Workers): a quarter of it. */
const DEFAULT_WORKER_RUNNING_BYTES = 32 * 1024 * 1024
/** The one object of each agent. */
const OBJECT_NAME = 'agent'

/**
 * Serves an agent from Cloudflare Workers: the Worker hands every request to the agent's Durable Object.
 *
 * @example
 * // src/worker.ts
 * import { agentWorker } from 'a2a-runtime'
 * import agent from './agent.js'
 * const { worker, AgentObject } = agentWorker(agent)
 * export { AgentObject }
 * export default worker
 */
export function agentWorker(agent: Agent, options: AgentWorkerOptions = {}): AgentWorker {
  const binding = options.binding ?? 'AGENT'
  const maxBodySize = options.maxBodySize ?? DEFAULT_MAX_BODY_SIZE

  class AgentObject {
    readonly #app: A2AApp

    constructor(state: DurableObjectStateLike, bindings: Record<string, unknown>) {
      const env = settingsOf(bindings)
      // The file and Redis stores need a file system and TCP sockets: say so rather than ignore the setting.
      if (envValue(env, 'A2A_STORE') !== undefined) {
        throw new ConfigurationError(
          "A2A_STORE does not apply on Cloudflare Workers: tasks are kept in the agent's Durable Object; remove the variable",
        )
      }
      const logger = options.logger ?? createConsoleLogger(undefined, env)
      const store = createDurableObjectStore(state.storage, { env, logger })
      // No request is let in before the tasks are back in memory.
      void state.blockConcurrencyWhile(() => store.restore())
      const maxRunningBytes =
        options.maxRunningBytes ??
        (envValue(env, 'A2A_MAX_RUNNING_BYTES') === undefined ? DEFAULT_WORKER_RUNNING_BYTES : undefined)
      this.#app = createA2AApp(agent, {
        ...options,
        env,
        logger,
        store,
        ...(maxRunningBytes !== undefined && { maxRunningBytes }),
      })
    }

    fetch(request: Request): Promise<Response> {
      return this.#app.fetch(request)
    }
  }

  const worker = {
    fetch(request: Request, bindings: Record<string, unknown>): Promise<Response> {
      // Refused here, from its declared length, before any of it is read: the one object that serves every request
      // does not spend its time reading a body it would refuse (it reads one to its end first, see _body.ts). Cut
      // off between the Worker and the object, such a body cost the client its answer (a reset connection, or HTTP
      // 500 "Network connection lost").
      const tooLarge = request.method === 'POST' ? declaredTooLarge(request, maxBodySize) : undefined
      if (tooLarge) return Promise.resolve(errorResponse(null, tooLarge, { connection: 'close' }))
      const { pathname } = new URL(request.url)
      const alive = aliveAnswer(request, pathname)
      if (alive) return Promise.resolve(alive)
      const namespace = bindings[binding] as DurableObjectNamespaceLike | undefined
      if (typeof namespace?.idFromName !== 'function') return Promise.resolve(missingBinding(binding))
      // The object may be resetting (a deploy) or overloaded: the client gets a JSON-RPC error to retry on, not
      // Cloudflare's error page.
      return namespace
        .get(namespace.idFromName(OBJECT_NAME))
        .fetch(request)
        .catch((error: unknown) => {
          console.error("The agent's Durable Object did not answer", error)
          // A probe of readiness reads the health check's shape: the object is what must answer.
          return pathname === '/readyz' ? notReady("the agent's Durable Object did not answer") : unavailable()
        })
    },
  }
  return { worker, AgentObject }
}

/**
 * The Worker's variables as settings: `vars` in wrangler.jsonc may be numbers or booleans (`"A2A_MAX_TASK_BYTES":
 * 1048576`), read as their text; its bindings (objects) are not settings.
 */
function settingsOf(bindings: Record<string, unknown>): Env {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(bindings)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') env[name] = String(value)
  }
  return env
}

/** The object did not answer: HTTP 503 with the JSON-RPC error of a server that cannot answer now. */
function unavailable(): Response {
  return new Response(
    JSON.stringify({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32603, message: 'The agent is unavailable; retry shortly' },
    }),
    {
      status: 503,
      headers: { 'content-type': 'application/json', 'retry-after': '1' },
    },
  )
}

/** The Worker is deployed without the binding: the operator, not the client, has to act. */
function missingBinding(binding: string): Response {
  const message = `Server misconfigured: the Durable Object binding ${binding} is missing (add it to wrangler.jsonc, with a migration for its class)`
  console.error(message)
  return new Response(
    JSON.stringify({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32603, message: 'Internal error: the agent is not configured' },
    }),
    {
      status: 500,
      headers: { 'content-type': 'application/json' },
    },
  )
}
