import type { H3 } from 'h3'
import type { Agent } from '../agent.js'
import type { AuthCheck } from '../http/_auth.js'
import { addAgentRoutes, type GuardedRoute } from '../http/_routes.js'
import type { Instrumentation } from '../telemetry/_hooks.js'
import { readAgentEntries } from './_agent-names.js'
import { type HostedAgent, hostAgent, type SharedParts } from './_hosted-agent.js'

/**
 * The agents of a server `createAgentsApp` made, changed one at a time while it serves (`a2a dev` reloads each agent
 * on its own): kept beside the app, whose public type stays as it is.
 *
 * - `replaceAgent` serves another version of an agent at its path: the same engine, so its tasks (running ones too,
 *   which finish with the version they started with) and their streams stay; the others are not touched.
 * - A name the app does not serve yet is added: its routes join the app's and the list at `/.well-known/agents.json`
 *   names it. Its share of the running tasks is the one each agent got when the app was made.
 * - `removeAgent` takes an agent out of the list; its requests are then for `a2a dev` to answer (the routes of an h3
 *   app stay). Its running tasks finish in its engine (`drainEveryAgent` waits for them at the end), and its stored
 *   tasks stay in the store under its owner: an agent of the same name added again serves them again.
 */

interface AgentSet {
  /** The app's own list (its directory, health and close read it): changed in place. */
  hosted: HostedAgent[]
  shared: SharedParts
  h3: H3
  checked: GuardedRoute
  removed: Map<string, HostedAgent>
}

const setOf = new WeakMap<object, AgentSet>()

export function keepAgentSet(app: object, parts: Omit<AgentSet, 'removed'>): void {
  setOf.set(app, { ...parts, removed: new Map() })
}

function agentSet(app: object): AgentSet {
  const set = setOf.get(app)
  if (!set) throw new TypeError('not an app of createAgentsApp')
  return set
}

/** Serves `agent` at `/<name>`: the agent served there replaced, or a new one added. Bad names are refused. */
export function replaceAgent(app: object, name: string, agent: Agent): 'replaced' | 'added' {
  const set = agentSet(app)
  const [checked] = readAgentEntries({ [name]: agent })
  const served = set.hosted.find((hosted) => hosted.name === name)
  if (served) {
    served.replace(agent)
    return 'replaced'
  }
  const back = set.removed.get(name)
  if (back) {
    set.removed.delete(name)
    back.replace(agent)
    set.hosted.push(back)
    return 'added'
  }
  const hosted = hostAgent(checked!, set.shared)
  addAgentRoutes(set.h3, hosted.base, set.checked, hosted.handlers)
  set.hosted.push(hosted)
  return 'added'
}

/** Stops serving the agent at `/<name>` (see above); false when none is served there. */
export function removeAgent(app: object, name: string): boolean {
  const set = agentSet(app)
  const at = set.hosted.findIndex((hosted) => hosted.name === name)
  if (at < 0) return false
  const [removed] = set.hosted.splice(at, 1)
  set.removed.set(name, removed!)
  return true
}

/** The names served now, in the order they were added. */
export const servedAgentNames = (app: object): string[] => agentSet(app).hosted.map(({ name }) => name)

/** Whether `/<name>` is an agent that was removed (and not added again). */
export const wasRemoved = (app: object, name: string): boolean => agentSet(app).removed.has(name)

/** The agent served at `/<name>` now. */
export const servedAgent = (app: object, name: string): Agent | undefined =>
  agentSet(app).hosted.find((hosted) => hosted.name === name)?.served.agent

/** The credential check of the agent served at `/<name>` now; undefined when its card declares none. */
export const agentAuthCheck = (app: object, name: string): AuthCheck | undefined =>
  agentSet(app).hosted.find((hosted) => hosted.name === name)?.served.authCheck

/** The app's instrumentation (every agent's engine has the same), for the traces `a2a dev` shows. */
export const agentsInstrumentation = (app: object): Instrumentation | undefined => agentSet(app).shared.telemetry

/**
 * Lets the running tasks of every agent, removed ones too, finish (up to `timeoutMs`, for all at once). The app's own
 * close drains only the agents it serves and then closes the store: called first, so a removed agent's last events
 * are saved before the store closes.
 */
export async function drainEveryAgent(app: object, timeoutMs: number): Promise<void> {
  const { hosted, removed } = agentSet(app)
  await Promise.all([...hosted, ...removed.values()].map(({ engine }) => engine.drain(timeoutMs)))
}
