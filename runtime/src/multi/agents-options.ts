import type { H3 } from 'h3'
import type { Agent } from '../agent.js'
import type { AuthOptions } from '../http/auth-options.js'
import type { TaskStore } from '../stores/task-store.js'

/**
 * One agent of several in a server: the agent, or the agent with credentials of its own for the schemes its card
 * declares (without them, the app's `auth` option and its variables).
 */
export type AgentEntry = Agent | { agent: Agent; auth?: AuthOptions }

/** The app `createAgentsApp` returns: a Fetch API handler and an h3 app serving every agent at its path. */
export interface A2AAgentsApp {
  /** The h3 application: mount it, or serve it with any h3 adapter. */
  readonly h3: H3
  /** Answers one request (the Fetch API handler). */
  fetch(request: Request): Promise<Response>
  /** The agents served, by name (each at `/<name>/`). */
  readonly agents: Readonly<Record<string, Agent>>
  /** Where every agent's tasks live, each agent's apart: the `store` option, or the one the app made. */
  readonly store: TaskStore
  /**
   * Sets the server's address when no `publicUrl` is configured (each agent's is this and its name); its host is
   * answered (`allowedHosts`) and its origin is the agents' own.
   */
  setUrl(url: string): void
  /** Lets every agent's running tasks finish (up to `shutdownTimeoutMs`), fails the rest, then closes the store. */
  close(): Promise<void>
}
