import { A2AError, ErrorCode } from '../../errors.js'
import type { PushService } from '../../push/_service.js'
import type { PushConfig } from '../../push/push-config.js'
import type { CallContext, MethodHandler } from './_binding.js'
import { type Json, readParamsObject } from './_params.js'
import { pushNotSupported, toConfig, type WebhookInput } from './_webhooks.js'

/**
 * What the push config methods of every generation do (A2A v1.0's Create/Get/List/Delete
 * TaskPushNotificationConfig, v0.3's `tasks/pushNotificationConfig/*`); each dialect reads its params and
 * writes its shapes around them.
 */

function configNotFound(taskId: string, id: string): A2AError {
  return new A2AError(
    ErrorCode.TaskNotFound,
    `Push notification config ${JSON.stringify(id.slice(0, 128))} not found for task ${taskId}`,
  )
}

/** The push service, or -32003 when the card does not declare push notifications. */
function serviceOf(call: CallContext): PushService {
  if (!call.push) throw pushNotSupported()
  return call.push
}

/** A config method: -32003 before anything else when push is not declared, then params as an object. */
type PushMethod = (p: Json, push: PushService, call: CallContext) => Promise<unknown>
export const pushMethod =
  (method: PushMethod): MethodHandler =>
  async (params, call) => {
    const push = serviceOf(call)
    return method(readParamsObject(params), push, call)
  }

export async function create(
  push: PushService,
  call: CallContext,
  taskId: string,
  webhook: WebhookInput,
  field: string,
): Promise<PushConfig> {
  await call.engine.get(taskId, call.principal?.id)
  await push.check(webhook.url, `${field}.url`)
  const config = toConfig(webhook, taskId, call.dialect)
  await push.save(config)
  return config
}

export async function find(push: PushService, call: CallContext, taskId: string, id: string): Promise<PushConfig> {
  await call.engine.get(taskId, call.principal?.id)
  const config = (await push.configs.list(taskId)).find((candidate) => candidate.id === id)
  if (!config) throw configNotFound(taskId, id)
  return config
}

export async function listOf(push: PushService, call: CallContext, taskId: string): Promise<PushConfig[]> {
  await call.engine.get(taskId, call.principal?.id)
  return push.configs.list(taskId)
}

/** Deleting is idempotent (A2A v1.0 §3.1.10): a config that is already gone is no error. */
export async function remove(push: PushService, call: CallContext, taskId: string, id: string): Promise<void> {
  await call.engine.get(taskId, call.principal?.id)
  await push.delete(taskId, id)
}
