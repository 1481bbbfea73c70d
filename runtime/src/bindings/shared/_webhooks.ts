import { isObject } from '../../_is-object.js'
import type { SendRequest } from '../../core/_engine.js'
import { newId } from '../../core/_ids.js'
import { A2AError, ErrorCode, InvalidParamsError } from '../../errors.js'
import type { PushConfig, PushDialect } from '../../push/push-config.js'
import type { CallContext } from './_binding.js'

/**
 * A webhook on the wire, as every dialect takes it: read from a message's configuration or a config method's
 * params (in the v1.0 or the v0.3 shape), checked by the guard and attached to a task.
 */

/** A webhook as a client gives it, before it belongs to a task. */
export interface WebhookInput {
  id?: string
  url: string
  token?: string
  authentication?: { schemes: string[]; credentials?: string }
}

export const pushNotSupported = (): A2AError =>
  new A2AError(ErrorCode.PushNotificationNotSupported, 'Push notifications are not supported by this agent')

const MAX_URL = 2048
const MAX_SECRET = 4096
/** Visible ASCII with inner spaces: anything else could split or smuggle HTTP headers. */
const HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/
/** An HTTP authentication scheme name (an RFC 9110 token). */
const SCHEME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/
const CONFIG_ID = /^[\x21-\x7e]{1,128}$/

export function readString(value: unknown, field: string, max: number): string {
  if (typeof value !== 'string' || value === '') throw new InvalidParamsError(`\`${field}\` must be a non-empty string`)
  if (value.length > max) throw new InvalidParamsError(`\`${field}\` is longer than ${max} characters`)
  return value
}

function readSecret(value: unknown, field: string): string | undefined {
  if (value === undefined || value === '') return undefined
  // The value itself is never echoed: errors about secrets name only the field.
  if (typeof value !== 'string' || value.length > MAX_SECRET || !HEADER_VALUE.test(value)) {
    throw new InvalidParamsError(
      `\`${field}\` must be a string of visible ASCII characters (at most ${MAX_SECRET}), as it travels in an HTTP header`,
    )
  }
  return value
}

function readScheme(value: unknown, field: string): string {
  if (typeof value !== 'string' || !SCHEME.test(value))
    throw new InvalidParamsError(`\`${field}\` must be an HTTP authentication scheme such as "Bearer"`)
  return value
}

export function readConfigId(value: unknown, field: string): string | undefined {
  if (value === undefined || value === '') return undefined
  if (typeof value !== 'string' || !CONFIG_ID.test(value))
    throw new InvalidParamsError(`\`${field}\` must be a string of up to 128 visible ASCII characters`)
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
    } else
      throw new InvalidParamsError(
        `\`${field}.authentication\` needs \`scheme\` (a string) or \`schemes\` (a non-empty array)`,
      )
    const credentials = readSecret(auth.credentials, `${field}.authentication.credentials`)
    webhook.authentication = credentials === undefined ? { schemes } : { schemes, credentials }
  }
  return webhook
}

/**
 * A webhook given with a message: checked by the guard before the task exists, saved once the engine has
 * taken the message and before the agent starts, so it hears the first event.
 */
export async function attachWebhook(
  request: SendRequest & { webhook?: WebhookInput },
  call: CallContext,
  field: string,
): Promise<void> {
  const webhook = request.webhook
  if (!webhook) return
  const push = call.push
  if (!push) throw pushNotSupported()
  await push.check(webhook.url, `${field}.url`)
  const dialect = call.dialect
  // Saved only once the engine has taken the message (a refused follow-up leaves no webhook behind); a
  // follow-up's task must have room for it first, as one too many must not fail the task. Its configs are another
  // caller's to count only once the task is known to be this caller's: before, another's answers as a missing one.
  if (request.taskId !== undefined) {
    if (call.principal) await call.engine.get(request.taskId, call.principal.id)
    await push.assertRoom(request.taskId, webhook.id ?? (dialect === 'a2a-1.0' ? '' : request.taskId))
  }
  request.prepare = (taskId) => push.save(toConfig(webhook, taskId, dialect))
}

export function toConfig(webhook: WebhookInput, taskId: string, dialect: PushDialect): PushConfig {
  // v0.3 servers name a webhook given without an id after its task; v1.0 ones give it a fresh id.
  const config: PushConfig = {
    id: webhook.id ?? (dialect === 'a2a-1.0' ? newId() : taskId),
    taskId,
    url: webhook.url,
    dialect,
  }
  if (webhook.token !== undefined) config.token = webhook.token
  if (webhook.authentication) config.authentication = webhook.authentication
  return config
}
