import { isObject } from '../_is-object.js'
import type { SendRequest } from '../core/_engine.js'
import { newId } from '../core/_ids.js'
import { A2AError, ErrorCode, InvalidParamsError } from '../errors.js'
import type { PushPayload } from '../push/_delivery.js'
import type { PushService } from '../push/_service.js'
import type { PushConfig, PushDialect } from '../push/push-config.js'
import type { Task, TaskEvent } from '../types.js'
import type { CallContext, MethodHandler } from './_binding.js'
import { readParamsObject } from './_params.js'
import { field, givenName } from './_proto-json.js'
import { eventToV1 } from './_v1-shapes.js'
import { taskToV03 } from './_v03-shapes.js'

/**
 * Push notifications on the wire: the config methods of A2A v1.0 (Create/Get/List/Delete
 * TaskPushNotificationConfig) and v0.3 (`tasks/pushNotificationConfig/*`, also on the platform dialect), a
 * webhook given with a message, and what each dialect's webhook receives.
 */

type Json = Record<string, unknown>

/** A webhook as a client gives it, before it belongs to a task. */
export interface WebhookInput {
  id?: string
  url: string
  token?: string
  authentication?: { schemes: string[]; credentials?: string }
}

const pushNotSupported = (): A2AError => new A2AError(ErrorCode.PushNotificationNotSupported, 'Push notifications are not supported by this agent')

const MAX_URL = 2048
const MAX_SECRET = 4096
/** Visible ASCII with inner spaces: anything else could split or smuggle HTTP headers. */
const HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/
/** An HTTP authentication scheme name (an RFC 9110 token). */
const SCHEME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/
const CONFIG_ID = /^[\x21-\x7e]{1,128}$/

function readString(value: unknown, field: string, max: number): string {
  if (typeof value !== 'string' || value === '') throw new InvalidParamsError(`\`${field}\` must be a non-empty string`)
  if (value.length > max) throw new InvalidParamsError(`\`${field}\` is longer than ${max} characters`)
  return value
}

function readSecret(value: unknown, field: string): string | undefined {
  if (value === undefined || value === '') return undefined
  // The value itself is never echoed: errors about secrets name only the field.
  if (typeof value !== 'string' || value.length > MAX_SECRET || !HEADER_VALUE.test(value)) {
    throw new InvalidParamsError(`\`${field}\` must be a string of visible ASCII characters (at most ${MAX_SECRET}), as it travels in an HTTP header`)
  }
  return value
}

function readScheme(value: unknown, field: string): string {
  if (typeof value !== 'string' || !SCHEME.test(value)) throw new InvalidParamsError(`\`${field}\` must be an HTTP authentication scheme such as "Bearer"`)
  return value
}

function readConfigId(value: unknown, field: string): string | undefined {
  if (value === undefined || value === '') return undefined
  if (typeof value !== 'string' || !CONFIG_ID.test(value)) throw new InvalidParamsError(`\`${field}\` must be a string of up to 128 visible ASCII characters`)
  return value
}

/**
 * A webhook in either shape: v1.0 (`authentication: {scheme, credentials}`) or v0.3 (`authentication:
 * {schemes: [...], credentials}`).
 */
export function readWebhook(value: unknown, field: string): WebhookInput {
  if (!isObject(value)) throw new InvalidParamsError(`\`${field}\` must be an object`)
  const webhook: WebhookInput = { url: readString(value.url, `${field}.url`, MAX_URL) }
  const id = readConfigId(value.id, `${field}.id`)
  const token = readSecret(value.token, `${field}.token`)
  if (id !== undefined) webhook.id = id
  if (token !== undefined) webhook.token = token
  const auth = value.authentication
  if (auth !== undefined && auth !== null) {
    if (!isObject(auth)) throw new InvalidParamsError(`\`${field}.authentication\` must be an object`)
    let schemes: string[]
    if (auth.scheme !== undefined) schemes = [readScheme(auth.scheme, `${field}.authentication.scheme`)]
    else if (Array.isArray(auth.schemes) && auth.schemes.length > 0 && auth.schemes.length <= 8) {
      schemes = auth.schemes.map((scheme, i) => readScheme(scheme, `${field}.authentication.schemes[${i}]`))
    } else throw new InvalidParamsError(`\`${field}.authentication\` needs \`scheme\` (a string) or \`schemes\` (a non-empty array)`)
    const credentials = readSecret(auth.credentials, `${field}.authentication.credentials`)
    webhook.authentication = credentials === undefined ? { schemes } : { schemes, credentials }
  }
  return webhook
}

/**
 * A webhook given with a message: checked by the guard before the task exists, saved once the engine has
 * taken the message and before the agent starts, so it hears the first event.
 */
export async function attachWebhook(request: SendRequest & { webhook?: WebhookInput }, call: CallContext, field: string): Promise<void> {
  const webhook = request.webhook
  if (!webhook) return
  const push = call.push
  if (!push) throw pushNotSupported()
  await push.check(webhook.url, `${field}.url`)
  const dialect = call.dialect
  // Saved only once the engine has taken the message (a refused follow-up leaves no webhook behind); a
  // follow-up's task must have room for it first, as one too many must not fail the task.
  if (request.taskId !== undefined) await push.assertRoom(request.taskId, webhook.id ?? (dialect === 'a2a-1.0' ? '' : request.taskId))
  request.prepare = (taskId) => push.save(toConfig(webhook, taskId, dialect))
}

function toConfig(webhook: WebhookInput, taskId: string, dialect: PushDialect): PushConfig {
  // v0.3 servers name a webhook given without an id after its task; v1.0 ones give it a fresh id.
  const config: PushConfig = { id: webhook.id ?? (dialect === 'a2a-1.0' ? newId() : taskId), taskId, url: webhook.url, dialect }
  if (webhook.token !== undefined) config.token = webhook.token
  if (webhook.authentication) config.authentication = webhook.authentication
  return config
}

function configNotFound(taskId: string, id: string): A2AError {
  return new A2AError(ErrorCode.TaskNotFound, `Push notification config ${JSON.stringify(id.slice(0, 128))} not found for task ${taskId}`)
}

/** The push service, or -32003 when the card does not declare push notifications. */
function serviceOf(call: CallContext): PushService {
  if (!call.push) throw pushNotSupported()
  return call.push
}

/** A config method: -32003 before anything else when push is not declared, then params as an object. */
type PushMethod = (p: Json, push: PushService, call: CallContext) => Promise<unknown>
const pushMethod =
  (method: PushMethod): MethodHandler =>
  async (params, call) => {
    const push = serviceOf(call)
    return method(readParamsObject(params), push, call)
  }

async function create(push: PushService, call: CallContext, taskId: string, webhook: WebhookInput, field: string): Promise<PushConfig> {
  await call.engine.get(taskId)
  await push.check(webhook.url, `${field}.url`)
  const config = toConfig(webhook, taskId, call.dialect)
  await push.save(config)
  return config
}

async function find(push: PushService, call: CallContext, taskId: string, id: string): Promise<PushConfig> {
  await call.engine.get(taskId)
  const config = (await push.configs.list(taskId)).find((candidate) => candidate.id === id)
  if (!config) throw configNotFound(taskId, id)
  return config
}

async function listOf(push: PushService, call: CallContext, taskId: string): Promise<PushConfig[]> {
  await call.engine.get(taskId)
  return push.configs.list(taskId)
}

/** Deleting is idempotent (A2A v1.0 §3.1.10): a config that is already gone is no error. */
async function remove(push: PushService, call: CallContext, taskId: string, id: string): Promise<void> {
  await call.engine.get(taskId)
  await push.delete(taskId, id)
}

const readTaskIdField = (p: Json, key: string): string => readString(p[key], `params.${key}`, 256)

/** A v1.0 method's `taskId`, also as `task_id` (ProtoJSON: see `field`). */
function readV1TaskId(p: Json): string {
  const taskId = field(p.taskId, p.task_id, 'params', 'taskId')
  return readString(taskId, taskId === undefined ? 'params.taskId' : `params.${givenName(p.taskId, 'taskId')}`, 256)
}

// --- A2A v1.0 ----------------------------------------------------------------------------------------------

/**
 * ProtoJSON TaskPushNotificationConfig. The webhook's credentials are never sent back (they are the
 * client's secret for its own receiver; anyone who can read tasks could read them otherwise).
 */
function configToV1(config: PushConfig): Json {
  const out: Json = { id: config.id, taskId: config.taskId, url: config.url }
  if (config.token !== undefined) out.token = config.token
  if (config.authentication) out.authentication = { scheme: config.authentication.schemes[0] }
  return out
}

export const v1PushMethods: Array<[string, MethodHandler]> = [
  [
    'CreateTaskPushNotificationConfig',
    pushMethod(async (p, push, call) => {
      // The config's fields sit beside taskId; some clients nest them in `config` or `pushNotificationConfig`.
      const nested = p.config ?? field(p.pushNotificationConfig, p.push_notification_config, 'params', 'pushNotificationConfig')
      const where =
        nested === undefined ? 'params' : p.config !== undefined ? 'params.config' : `params.${givenName(p.pushNotificationConfig, 'pushNotificationConfig')}`
      return configToV1(await create(push, call, readV1TaskId(p), readWebhook(nested ?? p, where), where))
    }),
  ],
  [
    'GetTaskPushNotificationConfig',
    pushMethod(async (p, push, call) => configToV1(await find(push, call, readV1TaskId(p), readString(p.id, 'params.id', 128)))),
  ],
  [
    'ListTaskPushNotificationConfigs',
    // At most `maxConfigsPerTask` per task: one page holds them all.
    pushMethod(async (p, push, call) => ({ configs: (await listOf(push, call, readV1TaskId(p))).map(configToV1), nextPageToken: '' })),
  ],
  [
    'DeleteTaskPushNotificationConfig',
    pushMethod(async (p, push, call) => {
      await remove(push, call, readV1TaskId(p), readString(p.id, 'params.id', 128))
      return {}
    }),
  ],
]

// --- A2A v0.3 (and the platform dialect) ---------------------------------------------------------------------

/** v0.3 TaskPushNotificationConfig: the webhook nested under `pushNotificationConfig`. */
function configToV03(config: PushConfig): Json {
  const inner: Json = { id: config.id, url: config.url }
  if (config.token !== undefined) inner.token = config.token
  if (config.authentication) inner.authentication = { schemes: config.authentication.schemes }
  return { taskId: config.taskId, pushNotificationConfig: inner }
}

/** v0.3 names the config by `pushNotificationConfigId`, and by the task's id when it is left out. */
const v03ConfigId = (p: Json, taskId: string): string => readConfigId(p.pushNotificationConfigId, 'params.pushNotificationConfigId') ?? taskId

export const v03PushMethods: Array<[string, MethodHandler]> = [
  [
    'tasks/pushNotificationConfig/set',
    pushMethod(async (p, push, call) => {
      const where = 'params.pushNotificationConfig'
      return configToV03(await create(push, call, readTaskIdField(p, 'taskId'), readWebhook(p.pushNotificationConfig, where), where))
    }),
  ],
  [
    'tasks/pushNotificationConfig/get',
    pushMethod(async (p, push, call) => {
      const taskId = readTaskIdField(p, 'id')
      return configToV03(await find(push, call, taskId, v03ConfigId(p, taskId)))
    }),
  ],
  ['tasks/pushNotificationConfig/list', pushMethod(async (p, push, call) => (await listOf(push, call, readTaskIdField(p, 'id'))).map(configToV03))],
  [
    'tasks/pushNotificationConfig/delete',
    pushMethod(async (p, push, call) => {
      const taskId = readTaskIdField(p, 'id')
      await remove(push, call, taskId, v03ConfigId(p, taskId))
      return null
    }),
  ],
]

// --- What a webhook receives --------------------------------------------------------------------------------

const A2A_JSON = 'application/a2a+json'

/**
 * v1.0 webhooks get each update as a StreamResponse (`{statusUpdate}` / `{artifactUpdate}`), as a stream
 * would; v0.3 and platform ones get the whole Task as it stands, as v0.3 servers send it.
 */
export function renderPush(config: PushConfig, task: Task, event: TaskEvent): PushPayload {
  if (config.dialect === 'a2a-1.0') return { body: JSON.stringify(eventToV1(event)), contentType: A2A_JSON }
  return { body: JSON.stringify(taskToV03(task)), contentType: 'application/json' }
}
