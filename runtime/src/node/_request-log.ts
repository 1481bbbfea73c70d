import type { IncomingMessage, ServerResponse } from 'node:http'
import type { RequestLine } from '../_log-json.js'
import { restPattern } from '../bindings/_rest-routes.js'
import { SERVED_PATHS } from '../http/_routes.js'

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown

/** The handler with one log line per request once its response is done: method, route, status, time. */
export function withRequestLog(handler: NodeHandler, log: (line: RequestLine) => void): NodeHandler {
  return (req, res) => {
    const started = performance.now()
    res.once('close', () =>
      log({
        method: req.method ?? '',
        route: logPath(req.url),
        status: res.statusCode,
        durationMs: performance.now() - started,
      }),
    )
    return handler(req, res)
  }
}

/**
 * The request target as the request log shows it: one of the app's routes, without the query string or
 * fragment (clients put tokens there, `/?token=…`), an HTTP+JSON path by its shape (`/{tenant}/tasks/{id}`: ids and
 * tenants are the clients'); any other target (a path segment holding a secret, `/;token=…`, an absolute-form URL
 * with user info) is shown as `(other path)`, never as sent.
 */
export function logPath(url = ''): string {
  let path = url.split(/[?#]/, 1)[0]!
  if (!path.startsWith('/')) {
    try {
      path = new URL(path).pathname
    } catch {
      return '(other path)'
    }
  }
  return SERVED_PATHS.has(path) ? path : (restPattern(path) ?? '(other path)')
}
