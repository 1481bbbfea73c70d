import { DEV_ADDRESS_FILE, runningDevAddress } from '../dev/_address.js'
import { envValue } from '../settings.js'
import { agentBase } from './_client.js'
import { loadDotEnv } from './_env.js'
import { UsageError } from './output/_failures.js'

export interface AgentAddress {
  base: URL
  /** Why this address, when the user did not give it: shown beside it so the agent addressed is never a guess. */
  via?: string
}

/**
 * The agent a command talks to, and loads the project's `.env` (credentials for an agent on this machine):
 * 1. `--url`;
 * 2. `PORT` set in the command's own environment (the user asked for that port): http://localhost:PORT/;
 * 3. this project's running `a2a dev` (`.a2a/dev.json`, written by it), when its process is alive and answers
 *    (only an http address on this machine, in the user's own plain file, is believed: a repository could ship one);
 * 4. `PORT` from the project's `.env`, else 3000.
 * The dev server's file beats `.env`'s PORT because that PORT is only where `a2a dev` tries first.
 *
 * A server of several agents (a folder of agents under `a2a dev` or `a2a start`) serves each at `/<name>/`: `agent`
 * (`--agent`) names one; without it the server's only agent is taken, and with several the command stops, listing
 * them. A URL names its agent by its path (`http://localhost:3000/planner`): `--agent` is for the project's server.
 */
export async function chooseAgent(cwd: string, url: string | undefined, agent?: string): Promise<AgentAddress> {
  const shellPort = envValue(process.env, 'PORT')
  loadDotEnv(cwd)
  if (url !== undefined) {
    if (agent !== undefined)
      throw new UsageError(
        `--agent ${agent}: it names an agent of this project's server; a URL names its agent by its path`,
        `give the agent's URL with its path (…/${agent}/) and no --agent`,
      )
    return { base: agentBase(url) }
  }
  return pickAgent(await chooseServer(cwd, shellPort), agent)
}

/** The project's server: the steps above without a URL. */
async function chooseServer(cwd: string, shellPort: string | undefined): Promise<AgentAddress> {
  const found = runningDevAddress(cwd)
  // Said apart from the address line, so it shows also with --json: a file that was not believed may be planted.
  if (found && 'ignored' in found) process.stderr.write(`${DEV_ADDRESS_FILE} ignored: ${found.ignored}\n`)
  const dev = found && 'url' in found ? found.url : undefined
  if (shellPort) {
    const base = agentBase(`http://localhost:${shellPort}/`)
    const elsewhere = dev && new URL(dev).port !== base.port ? `; this project's a2a dev is at ${dev}` : ''
    return { base, via: `PORT=${shellPort}${elsewhere}` }
  }
  if (dev && (await answers(dev))) return { base: agentBase(dev), via: "this project's a2a dev" }
  const envPort = envValue(process.env, 'PORT')
  const port = envPort ?? '3000'
  const stale = dev ? `; ${DEV_ADDRESS_FILE} names ${dev}, which does not answer` : ''
  return { base: agentBase(`http://localhost:${port}/`), via: `${envPort ? 'PORT from .env' : 'default port'}${stale}` }
}

/** How long the agents' list of a server on this machine may take: it answers at once or is no such server. */
const LIST_TIMEOUT_MS = 3000

/** The agent `agent` names on the server, or the server's only agent; the server itself when it serves one. */
async function pickAgent(server: AgentAddress, agent: string | undefined): Promise<AgentAddress> {
  const at = (name: string, why: string) => ({
    base: new URL(`${encodeURIComponent(name)}/`, server.base),
    via: server.via ? `${server.via}; ${why}` : why,
  })
  if (agent !== undefined) {
    if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/.test(agent))
      throw new UsageError(`--agent ${JSON.stringify(agent)}: an agent's name is its path: letters, digits, - and _`)
  }
  const names = await listedAgents(server.base)
  if (agent !== undefined) {
    // Said here, not as the card that /<name>/ does not have: the user misspelled a name the server can list.
    if (names !== undefined && !names.includes(agent))
      throw new UsageError(
        `--agent ${agent}: ${server.base.href} serves no agent of that name; its agents: ${names.join(', ')}`,
        `e.g. --agent ${names[0] ?? '<name>'}`,
      )
    return at(agent, `--agent ${agent}`)
  }
  if (names === undefined) return server
  if (names.length === 1) return at(names[0]!, 'its only agent')
  throw new UsageError(
    `${server.base.href} serves several agents (${names.join(', ')}): name one with --agent`,
    `e.g. --agent ${names[0] ?? '<name>'}`,
  )
}

/** The names a server of several agents lists at /.well-known/agents.json; undefined from any other server. */
async function listedAgents(base: URL): Promise<string[] | undefined> {
  try {
    const response = await fetch(new URL('.well-known/agents.json', base), {
      signal: AbortSignal.timeout(LIST_TIMEOUT_MS),
    })
    if (!response.ok) {
      await response.arrayBuffer()
      return undefined
    }
    const list = (await response.json()) as { agents?: Array<{ name?: unknown }> }
    if (!Array.isArray(list.agents)) return undefined
    return list.agents.map(({ name }) => name).filter((name): name is string => typeof name === 'string')
  } catch {
    return undefined
  }
}

/** Anything answering at the address counts: a dev server whose code is broken still answers (503). */
async function answers(url: string): Promise<boolean> {
  try {
    await (await fetch(new URL('.well-known/agent.json', url), { signal: AbortSignal.timeout(3000) })).arrayBuffer()
    return true
  } catch {
    return false
  }
}
