import { HEALTH_PATHS } from '../http/_health.js'
import { appRoute, type LogRoute, OTHER_PATH, targetPath } from '../node/_request-log.js'
import { DIRECTORY_PATH, ROOT_CARD_PATHS } from './_directory.js'

/**
 * The request log's routes for a server of several agents: an agent's paths under its name (`/planner`,
 * `/planner/.well-known/agent-card.json`, `/planner/tasks/{id}`, and under its own tenant `/planner/planner/tasks/{id}`;
 * another tenant is `{tenant}`), the root's as they are (health checks, the agents' list, the root card paths).
 * The names are the server's own, so the routes stay a bounded set: never an id, a tenant or a path as a client sent
 * it.
 */
export function agentsLogRoute(names: readonly string[]): LogRoute {
  const agents = new Set(names)
  const root = new Set(['/', DIRECTORY_PATH, ...ROOT_CARD_PATHS, ...HEALTH_PATHS])
  return (url) => {
    const path = targetPath(url)
    if (path === undefined) return OTHER_PATH
    const slash = path.indexOf('/', 1)
    const name = slash < 0 ? path.slice(1) : path.slice(1, slash)
    if (!agents.has(name)) return root.has(path) ? path : OTHER_PATH
    if (slash < 0) return path
    const inner = path.slice(slash)
    const route = appRoute(inner)
    if (route === OTHER_PATH) return route
    // The agent's own tenant is its name, one of the server's: shown, as the path the cards give.
    const ownTenant = route.startsWith('/{tenant}/') && inner.startsWith(`/${name}/`)
    return `/${name}${ownTenant ? `/${name}${route.slice('/{tenant}'.length)}` : route}`
  }
}
