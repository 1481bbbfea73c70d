import type { PushConfig } from '../../push/push-config.js'
import type { MethodHandler } from './_binding.js'
import type { Json } from './_params.js'
import { create, find, listOf, pushMethod, remove } from './_push-configs.js'
import { readConfigId, readString, readWebhook } from './_webhooks.js'

/** The v0.3 push config methods (`tasks/pushNotificationConfig/*`), which the platform dialect serves too. */

const readTaskIdField = (p: Json, key: string): string => readString(p[key], `params.${key}`, 256)

/** v0.3 TaskPushNotificationConfig: the webhook nested under `pushNotificationConfig`. */
function configToV03(config: PushConfig): Json {
  const inner: Json = { id: config.id, url: config.url }
  if (config.token !== undefined) inner.token = config.token
  if (config.authentication) inner.authentication = { schemes: config.authentication.schemes }
  return { taskId: config.taskId, pushNotificationConfig: inner }
}

/** v0.3 names the config by `pushNotificationConfigId`, and by the task's id when it is left out. */
const v03ConfigId = (p: Json, taskId: string): string =>
  readConfigId(p.pushNotificationConfigId, 'params.pushNotificationConfigId') ?? taskId

export const v03PushMethods: Array<[string, MethodHandler]> = [
  [
    'tasks/pushNotificationConfig/set',
    pushMethod(async (p, push, call) => {
      const where = 'params.pushNotificationConfig'
      return configToV03(
        await create(push, call, readTaskIdField(p, 'taskId'), readWebhook(p.pushNotificationConfig, where), where),
      )
    }),
  ],
  [
    'tasks/pushNotificationConfig/get',
    pushMethod(async (p, push, call) => {
      const taskId = readTaskIdField(p, 'id')
      return configToV03(await find(push, call, taskId, v03ConfigId(p, taskId)))
    }),
  ],
  [
    'tasks/pushNotificationConfig/list',
    pushMethod(async (p, push, call) => (await listOf(push, call, readTaskIdField(p, 'id'))).map(configToV03)),
  ],
  [
    'tasks/pushNotificationConfig/delete',
    pushMethod(async (p, push, call) => {
      const taskId = readTaskIdField(p, 'id')
      await remove(push, call, taskId, v03ConfigId(p, taskId))
      return null
    }),
  ],
]
