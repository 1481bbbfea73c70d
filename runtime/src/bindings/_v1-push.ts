import type { PushConfig } from '../push/push-config.js'
import { field, givenName } from './_v1-proto-json.js'
import type { MethodHandler } from './shared/_binding.js'
import type { Json } from './shared/_params.js'
import { create, find, listOf, pushMethod, remove } from './shared/_push-configs.js'
import { readString, readWebhook } from './shared/_webhooks.js'

/** The A2A v1.0 push config methods: Create/Get/List/Delete TaskPushNotificationConfig. */

/** A v1.0 method's `taskId`, also as `task_id` (ProtoJSON: see `field`). */
function readV1TaskId(p: Json): string {
  const taskId = field(p.taskId, p.task_id, 'params', 'taskId')
  return readString(taskId, taskId === undefined ? 'params.taskId' : `params.${givenName(p.taskId, 'taskId')}`, 256)
}

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
      const nested =
        p.config ?? field(p.pushNotificationConfig, p.push_notification_config, 'params', 'pushNotificationConfig')
      const where =
        nested === undefined
          ? 'params'
          : p.config !== undefined
            ? 'params.config'
            : `params.${givenName(p.pushNotificationConfig, 'pushNotificationConfig')}`
      return configToV1(await create(push, call, readV1TaskId(p), readWebhook(nested ?? p, where), where))
    }),
  ],
  [
    'GetTaskPushNotificationConfig',
    pushMethod(async (p, push, call) =>
      configToV1(await find(push, call, readV1TaskId(p), readString(p.id, 'params.id', 128))),
    ),
  ],
  [
    'ListTaskPushNotificationConfigs',
    // At most `maxConfigsPerTask` per task: one page holds them all.
    pushMethod(async (p, push, call) => ({
      configs: (await listOf(push, call, readV1TaskId(p))).map(configToV1),
      nextPageToken: '',
    })),
  ],
  [
    'DeleteTaskPushNotificationConfig',
    pushMethod(async (p, push, call) => {
      await remove(push, call, readV1TaskId(p), readString(p.id, 'params.id', 128))
      return {}
    }),
  ],
]
