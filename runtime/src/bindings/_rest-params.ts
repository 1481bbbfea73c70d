import { InvalidParamsError } from '../errors.js'
import type { RestMatch, RestOperation } from './_rest-routes.js'
import type { Json } from './shared/_params.js'

/**
 * The params of a REST request in the v1.0 methods' ProtoJSON shape, built from the path, the query string and the
 * body (§11.4, §11.5), so the methods that answer JSON-RPC answer REST too. Path ids win over the body's. A query
 * parameter is read by the type of its field (camelCase, or the .proto's snake_case, which the methods read as well):
 * strings as given, integers from decimal digits, booleans from `true` or `false`, timestamps from ISO 8601, enums
 * by name (the method checks the name); a bad value is refused naming the parameter, an unknown one ignored. No
 * request read from a query has a repeated field, so a parameter given twice is refused too.
 */

type QueryType = 'string' | 'integer' | 'boolean' | 'timestamp'

/** Each field under both of its names. */
function queryFields(fields: Record<string, QueryType>): ReadonlyMap<string, QueryType> {
  const byName = new Map<string, QueryType>()
  for (const [name, type] of Object.entries(fields)) {
    byName.set(name, type)
    byName.set(
      name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`),
      type,
    )
  }
  return byName
}

const GET_TASK_QUERY = queryFields({ historyLength: 'integer', tenant: 'string' })
const LIST_TASKS_QUERY = queryFields({
  contextId: 'string',
  status: 'string',
  pageSize: 'integer',
  pageToken: 'string',
  historyLength: 'integer',
  statusTimestampAfter: 'timestamp',
  includeArtifacts: 'boolean',
  tenant: 'string',
})
const LIST_CONFIGS_QUERY = queryFields({ pageSize: 'integer', pageToken: 'string', tenant: 'string' })
const TENANT_QUERY = queryFields({ tenant: 'string' })

const INTEGER = /^-?\d{1,15}$/
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i

function queryValue(value: string, type: QueryType, name: string): string | number | boolean {
  switch (type) {
    case 'string':
      return value
    case 'integer':
      if (!INTEGER.test(value)) throw badQuery(name, 'must be a whole number in decimal digits', value)
      return Number(value)
    case 'boolean':
      if (value !== 'true' && value !== 'false') throw badQuery(name, 'must be true or false', value)
      return value === 'true'
    case 'timestamp':
      if (!ISO_8601.test(value) || Number.isNaN(Date.parse(value)))
        throw badQuery(name, 'must be an ISO 8601 time such as 2025-11-09T10:30:00Z', value)
      return value
  }
}

const badQuery = (name: string, what: string, value: string) =>
  new InvalidParamsError(`\`${name}\` ${what} (got ${JSON.stringify(value.slice(0, 60))})`)

/** Adds the known parameters of `search` (`?a=1&b=2`, or '') to `into`. */
function readQuery(search: string, fields: ReadonlyMap<string, QueryType>, into: Json): Json {
  if (search.length < 2) return into
  for (const [name, value] of new URLSearchParams(search)) {
    const type = fields.get(name)
    if (type === undefined) continue
    if (Object.hasOwn(into, name)) throw new InvalidParamsError(`\`${name}\` is given more than once; give it once`)
    into[name] = queryValue(value, type, name)
  }
  return into
}

/** A path segment as it was meant (`%2F` a slash inside an id); one that is not valid percent-encoding is refused. */
function pathSegment(segment: string, what: string): string {
  if (!segment.includes('%')) return segment
  try {
    return decodeURIComponent(segment)
  } catch {
    throw new InvalidParamsError(`the ${what} in the path is not valid percent-encoding`)
  }
}

/**
 * The params of `operation` for a request to `match` with the query string `search` and the parsed `body` (a fresh
 * object, which is used in place; undefined for a request without one).
 */
export function restParams(operation: RestOperation, match: RestMatch, search: string, body: Json | undefined): Json {
  const id = match.id === undefined ? undefined : pathSegment(match.id, 'task id')
  let params: Json
  switch (operation) {
    case 'SendMessage':
    case 'SendStreamingMessage':
      params = body ?? {}
      break
    case 'GetTask':
      params = readQuery(search, GET_TASK_QUERY, { id })
      break
    case 'ListTasks':
      params = readQuery(search, LIST_TASKS_QUERY, {})
      break
    case 'CancelTask':
    case 'SubscribeToTask':
      params = body ?? readQuery(search, TENANT_QUERY, {})
      params.id = fromPath('id', 'task id', id!, params.id)
      break
    case 'CreateTaskPushNotificationConfig':
      params = body ?? {}
      params.taskId = fromPath('taskId', 'task id', id!, params.taskId)
      break
    case 'GetTaskPushNotificationConfig':
    case 'DeleteTaskPushNotificationConfig':
      params = readQuery(search, TENANT_QUERY, { taskId: id, id: pathSegment(match.configId!, 'config id') })
      break
    case 'ListTaskPushNotificationConfigs':
      params = readQuery(search, LIST_CONFIGS_QUERY, { taskId: id })
      break
    case 'GetExtendedAgentCard':
      params = readQuery(search, TENANT_QUERY, {})
      break
  }
  if (match.tenant !== undefined)
    params.tenant = fromPath('tenant', 'tenant', pathSegment(match.tenant, 'tenant'), params.tenant)
  return params
}

/** Longest value an error repeats: the client's own text, bounded. */
const SHOWN_VALUE = 64

/**
 * The path's value of `field` (a `what`), which is the request's. A body or query that names the field as well must
 * name the same (or none): a different one is refused rather than silently replaced, as the client meant one of the
 * two and cannot tell which was served.
 */
function fromPath(field: string, what: string, value: string, named: unknown): string {
  // JSON's null, as ProtoJSON reads it, is the field left unset.
  if (named === undefined || named === null || named === '' || named === value) return value
  if (typeof named !== 'string') throw new InvalidParamsError(`\`${field}\` must be a string`)
  const shown = (text: string) => JSON.stringify(text.slice(0, SHOWN_VALUE))
  throw new InvalidParamsError(
    `\`${field}\` ${shown(named)} differs from the path's ${what} ${shown(value)}: name one ${what}, in the path`,
  )
}
