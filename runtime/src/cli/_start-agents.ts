import type { Agent } from '../agent.js'
import { ConfigurationError } from '../errors.js'
import { readAgentEntries } from '../multi/_agent-names.js'
import { serveAgents } from '../multi/serve-agents.js'
import type { ServeOptions } from '../node/serve.js'
import { ProjectError } from './_errors.js'
import { AgentLoadError, agentModules, importAgent } from './_load-agent.js'

/**
 * `a2a start` of a folder of agents: every module of it that exports an agent (its default export, or `agent`) is
 * served at `/<file name without extension>/` by one server (`serveAgents`). Production serves what was asked or
 * nothing: a module that does not load, or whose name cannot be a path, stops the start in one line naming it.
 */
export async function startAgents(cwd: string, folder: string, options: ServeOptions): Promise<void> {
  const agents: Record<string, Agent> = {}
  for (const [name, file] of agentModules(cwd, folder)) {
    let agent: Agent | undefined
    try {
      agent = (await importAgent(cwd, file)).agent
    } catch (error) {
      const why = error instanceof AgentLoadError ? error.summary : (error as Error).message
      throw new ProjectError(`${why} (a2a start serves ${folder}/ only when each of its agents loads)`)
    }
    if (!agent) continue // a helper beside the agents
    try {
      readAgentEntries({ [name]: agent })
    } catch (error) {
      if (error instanceof ConfigurationError) throw new ProjectError(`${file}: ${error.message}`)
      throw error
    }
    agents[name] = agent
  }
  if (Object.keys(agents).length === 0)
    throw new ProjectError(
      `${folder}/ holds no module that exports an agent (each agent's module: export default defineAgent({ ... }))`,
    )
  await serveAgents(agents, options)
}
