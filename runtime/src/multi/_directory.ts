import type { H3 } from 'h3'
import { FastResponse } from 'srvx'
import { statusJson } from '../bindings/_rest-status.js'
import { GUARDED_PATHS, type GuardedRoute, withoutBody } from '../http/_routes.js'
import type { GuardedPaths } from '../http/_web-origin.js'
import { agentUrl, type HostedAgent } from './_hosted-agent.js'

/**
 * The root of a server of several agents: the agents' list at `GET /.well-known/agents.json` (each agent's name,
 * its card's name and description, its address and its card's), for discovery. The root's card paths
 * (`/.well-known/agent-card.json`, `/.well-known/agent.json`) have no card to give: they answer 404 saying where the
 * list is (also in a `Link` header), so a client reading them as a card fails plainly. Any other path is not found.
 */

export const DIRECTORY_PATH = '/.well-known/agents.json'
export const ROOT_CARD_PATHS = ['/.well-known/agent-card.json', '/.well-known/agent.json']
const JSON_HEADERS = { 'content-type': 'application/json' }

export function addDirectoryRoutes(
  h3: H3,
  checked: GuardedRoute,
  agents: readonly HostedAgent[],
  knownUrl: () => string | undefined,
): void {
  const directory = checked((event) => {
    const server = knownUrl() ?? `${event.url.origin}/`
    const list = agents.map(({ name, served }) => {
      const url = agentUrl(server, name)
      const { template } = served
      return {
        name,
        cardName: template.name,
        description: template.description,
        url,
        card: `${url}.well-known/agent-card.json`,
      }
    })
    return new FastResponse(JSON.stringify({ agents: list }), {
      headers: { ...JSON_HEADERS, 'cache-control': 'no-cache' },
    })
  })
  h3.get(DIRECTORY_PATH, directory)
  h3.head(DIRECTORY_PATH, async (event) => withoutBody(await directory(event)))
  const noRootCard = checked(
    () =>
      new FastResponse(
        statusJson(404, `This server serves several agents, each with its own card: see ${DIRECTORY_PATH}`),
        { status: 404, headers: { ...JSON_HEADERS, link: `<${DIRECTORY_PATH}>; rel="index"` } },
      ),
  )
  for (const path of ROOT_CARD_PATHS) {
    h3.get(path, noRootCard)
    h3.head(path, async (event) => withoutBody(await noRootCard(event)))
  }
  const notFound = statusJson(404, `Not found: no agent has this path (the agents are listed at ${DIRECTORY_PATH})`)
  h3.all(
    '/**',
    checked(() => new FastResponse(notFound, { status: 404, headers: JSON_HEADERS })),
  )
}

/**
 * What the web-origin guard knows of the paths: an agent's are its own app's below its base path (a refused
 * `POST /planner` is answered as JSON-RPC, one on `/planner/tasks` as a `google.rpc.Status`), the root's are GETs.
 */
export function agentsGuardedPaths(names: readonly string[]): GuardedPaths {
  const agents = new Set(names)
  const below = (path: string): string | undefined => {
    const slash = path.indexOf('/', 1)
    const first = slash < 0 ? path.slice(1) : path.slice(1, slash)
    return agents.has(first) ? (slash < 0 ? '/' : path.slice(slash)) : undefined
  }
  const rpc = new Set<string>()
  for (const path of GUARDED_PATHS.rpc) for (const name of names) rpc.add(`/${name}${path === '/' ? '' : path}`)
  for (const name of names) rpc.add(`/${name}/`)
  const rootPaths = new Set([DIRECTORY_PATH, ...ROOT_CARD_PATHS])
  return {
    rpc,
    allowOf: (path) => {
      const inner = below(path)
      if (inner !== undefined) return GUARDED_PATHS.allowOf(inner)
      return rootPaths.has(path) ? 'GET, HEAD, OPTIONS' : undefined
    },
    rest: (path) => {
      const inner = below(path)
      return inner !== undefined && GUARDED_PATHS.rest(inner)
    },
  }
}
