import type { IncomingMessage, ServerResponse } from 'node:http'
import type { RequestLine } from '../_log-json.js'
import { restPattern } from '../bindings/_rest-routes.js'
import { HEALTH_PATHS } from '../http/_health.js'
import { SERVED_PATHS } from '../http/_routes.js'

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown

/** A request's target as the log shows it (`logPath`, or a server's own that knows more of its paths). */
export type LogRoute = (url: string | undefined) => string

/** The handler with one log line per request once its response is done: method, route, status, time. */
export function withRequestLog(
  handler: NodeHandler,
  log: (line: RequestLine) => void,
  route: LogRoute = logPath,
): NodeHandler {
  return (req, res) => {
    const started = performance.now()
    res.once('close', () =>
      log({
        method: req.method ?? '',
        route: route(req.url),
        status: res.statusCode,
        durationMs: performance.now() - started,
      }),
    )
    return handler(req, res)
  }
}

/** What the log shows for a target that is none of the server's paths. */
export const OTHER_PATH = '(other path)'

/** The health checks every server answers at its root. */
const HEALTH: ReadonlySet<string> = new Set(HEALTH_PATHS)

/**
 * The request target as the request log shows it: one of the app's routes, without the query string or
 * fragment (clients put tokens there, `/?token=…`), an HTTP+JSON path by its shape (`/{tenant}/tasks/{id}`: ids and
 * tenants are the clients'); any other target (a path segment holding a secret, `/;token=…`, an absolute-form URL
 * with user info) is shown as `(other path)`, never as sent. The log's routes are so a bounded set.
 */
export function logPath(url: string | undefined = ''): string {
  const path = targetPath(url)
  if (path === undefined) return OTHER_PATH
  return HEALTH.has(path) ? path : appRoute(path)
}

/** The path of a request target, without query string or fragment; undefined for an unreadable absolute form. */
export function targetPath(url: string | undefined = ''): string | undefined {
  const path = url.split(/[?#]/, 1)[0]!
  if (path.startsWith('/')) return path
  try {
    return new URL(path).pathname
  } catch {
    return undefined
  }
}

/** A path below an agent's base as the log shows it: one of its routes, an HTTP+JSON pattern, or `(other path)`. */
export function appRoute(path: string): string {
  return SERVED_PATHS.has(path) ? path : (restPattern(path) ?? OTHER_PATH)
}
