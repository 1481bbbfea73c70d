import type { Agent } from '../agent.js'
import { ConfigurationError } from '../errors.js'
import { HEALTH_PATHS } from '../http/_health.js'
import type { AuthOptions } from '../http/auth-options.js'
import type { AgentEntry } from './agents-options.js'

/** One agent of several, as the app serves it: its path segment, the agent, its own credentials (if any given). */
export interface NamedAgent {
  name: string
  agent: Agent
  auth: AuthOptions | undefined
}

/** A path segment that needs no encoding and never reads as one of the root's own paths. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/
/** The root's health checks (`/healthz`, `/readyz`, `/ping`): an agent named so would hide them. */
const RESERVED = new Set(HEALTH_PATHS.map((path) => path.slice(1)))

/** The agents of `createAgentsApp`, checked: each name a path segment, each value an agent (or one with options). */
export function readAgentEntries(agents: Readonly<Record<string, AgentEntry>>): NamedAgent[] {
  if (!agents || typeof agents !== 'object')
    throw new ConfigurationError('agents must be an object of agents by name: { planner: agent, writer: agent }')
  // An array's keys are its indexes: its agents would be served at /0 and /1.
  if (Array.isArray(agents))
    throw new ConfigurationError(
      'agents must be an object of agents by name, not an array (its agents would be served at /0, /1): { planner: agent, writer: agent }',
    )
  const named = Object.entries(agents).map(([name, entry]) => {
    if (!NAME.test(name) || RESERVED.has(name.toLowerCase()))
      throw new ConfigurationError(
        `agents: ${JSON.stringify(name)} cannot be an agent's name: it is its path (/${name}), so 1-63 letters, digits, - and _, starting with a letter or digit, and none of ${[...RESERVED].join(', ')}`,
      )
    if (isAgent(entry)) return { name, agent: entry, auth: undefined }
    if (entry && typeof entry === 'object' && isAgent(entry.agent))
      return { name, agent: entry.agent, auth: entry.auth }
    throw new ConfigurationError(`agents.${name} must be an agent (defineAgent) or { agent, auth }`)
  })
  if (named.length === 0) throw new ConfigurationError('agents must name at least one agent')
  return named
}

const isAgent = (value: unknown): value is Agent =>
  typeof value === 'object' && value !== null && (value as Partial<Agent>).__a2aAgent === true
