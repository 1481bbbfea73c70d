/**
 * The A2A v1.0 HTTP+JSON (REST) binding's routes (§11.3, the proto's `google.api.http` rules): each path shape and
 * HTTP method names the v1.0 method that answers it, at the agent's base address and under a `/{tenant}` prefix.
 * A path is matched by splitting it at `/` and comparing segments: no pattern is tested per request.
 */

/** The operations, named as the v1.0 methods that answer them. */
export type RestOperation =
  | 'SendMessage'
  | 'SendStreamingMessage'
  | 'GetTask'
  | 'ListTasks'
  | 'CancelTask'
  | 'SubscribeToTask'
  | 'CreateTaskPushNotificationConfig'
  | 'GetTaskPushNotificationConfig'
  | 'ListTaskPushNotificationConfigs'
  | 'DeleteTaskPushNotificationConfig'
  | 'GetExtendedAgentCard'

/** One path shape: the operation of each HTTP method it takes. */
interface RestRoute {
  /** The shape as the request log shows it: ids as `{id}`, never their values. */
  readonly pattern: string
  /** The same under a tenant. */
  readonly tenantPattern: string
  /** By HTTP method (a Map: a method named like a prototype key finds nothing). */
  readonly operations: ReadonlyMap<string, RestOperation>
  /** The `Allow` header of this shape (a 405, an OPTIONS answer, a preflight). */
  readonly allow: string
}

function route(pattern: string, operations: Partial<Record<string, RestOperation>>): RestRoute {
  return {
    pattern,
    tenantPattern: `/{tenant}${pattern}`,
    operations: new Map(Object.entries(operations) as Array<[string, RestOperation]>),
    allow: [...Object.keys(operations), 'OPTIONS'].join(', '),
  }
}

const SEND = route('/message:send', { POST: 'SendMessage' })
const STREAM = route('/message:stream', { POST: 'SendStreamingMessage' })
const TASKS = route('/tasks', { GET: 'ListTasks' })
const CARD = route('/extendedAgentCard', { GET: 'GetExtendedAgentCard' })
const TASK = route('/tasks/{id}', { GET: 'GetTask' })
const CANCEL = route('/tasks/{id}:cancel', { POST: 'CancelTask' })
// The spec's text says POST, the proto's rule GET: both are served (as the official SDK servers do).
const SUBSCRIBE = route('/tasks/{id}:subscribe', { GET: 'SubscribeToTask', POST: 'SubscribeToTask' })
const CONFIGS = route('/tasks/{id}/pushNotificationConfigs', {
  GET: 'ListTaskPushNotificationConfigs',
  POST: 'CreateTaskPushNotificationConfig',
})
const CONFIG = route('/tasks/{id}/pushNotificationConfigs/{configId}', {
  GET: 'GetTaskPushNotificationConfig',
  DELETE: 'DeleteTaskPushNotificationConfig',
})

/** A path matched to a route, with what its segments hold (still percent-encoded). */
export interface RestMatch {
  route: RestRoute
  /** The task's id (`{id}`), when the shape has one. */
  id: string | undefined
  /** The push config's id (`{configId}`). */
  configId: string | undefined
  /** The tenant segment, when the path has one. */
  tenant: string | undefined
}

const CANCEL_SUFFIX = ':cancel'
const SUBSCRIBE_SUFFIX = ':subscribe'
/** A tenant, `tasks`, an id, `pushNotificationConfigs`, a config id: after the leading empty segment. */
const MOST_SEGMENTS = 6

/** The route of `segments` from index `at` on (`segments` is a path split at `/`), or undefined. */
function matchFrom(segments: string[], at: number, tenant: string | undefined): RestMatch | undefined {
  const count = segments.length - at
  const first = segments[at]!
  if (count === 1) {
    const shape =
      first === 'tasks'
        ? TASKS
        : first === 'message:send'
          ? SEND
          : first === 'message:stream'
            ? STREAM
            : first === 'extendedAgentCard'
              ? CARD
              : undefined
    return shape && { route: shape, id: undefined, configId: undefined, tenant }
  }
  if (first !== 'tasks') return undefined
  const id = segments[at + 1]!
  if (count === 2) {
    if (id.endsWith(CANCEL_SUFFIX)) return task(CANCEL, id.slice(0, -CANCEL_SUFFIX.length), tenant)
    if (id.endsWith(SUBSCRIBE_SUFFIX)) return task(SUBSCRIBE, id.slice(0, -SUBSCRIBE_SUFFIX.length), tenant)
    return task(TASK, id, tenant)
  }
  if (segments[at + 2] !== 'pushNotificationConfigs' || id === '') return undefined
  if (count === 3) return { route: CONFIGS, id, configId: undefined, tenant }
  const configId = segments[at + 3]!
  if (count !== 4 || configId === '') return undefined
  return { route: CONFIG, id, configId, tenant }
}

const task = (shape: RestRoute, id: string, tenant: string | undefined): RestMatch | undefined =>
  id === '' ? undefined : { route: shape, id, configId: undefined, tenant }

/**
 * The route a path takes for `method`: read first without a tenant, then with its first segment as one (so
 * `/tasks/abc` is GetTask, and `/acme/tasks` ListTasks of tenant `acme`); a reading whose route does not take the
 * method gives way to one that does. Undefined for a path no route has; a match without the method is a 405.
 */
export function matchRest(pathname: string, method: string): RestMatch | undefined {
  const segments = pathname.split('/')
  if (segments.length < 2 || segments.length > MOST_SEGMENTS) return undefined
  const plain = matchFrom(segments, 1, undefined)
  if (plain?.route.operations.has(method)) return plain
  const tenant = segments[1]!
  const tenanted = segments.length > 2 && tenant !== '' ? matchFrom(segments, 2, tenant) : undefined
  if (tenanted?.route.operations.has(method)) return tenanted
  return plain ?? tenanted
}

/** A path's route shape for the request log (`/tasks/{id}`), undefined for a path that is no REST route. */
export function restPattern(pathname: string): string | undefined {
  const match = matchRest(pathname, '')
  return match && (match.tenant === undefined ? match.route.pattern : match.route.tenantPattern)
}

/** The `Allow` header of a REST path, undefined for a path that is no REST route. */
export function restAllow(pathname: string): string | undefined {
  return matchRest(pathname, '')?.route.allow
}
