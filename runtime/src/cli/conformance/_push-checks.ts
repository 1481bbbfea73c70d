import type { BindingRun } from './_binding-run.js'
import { unknownTaskId } from './_core-checks.js'
import { isA2AReason } from './_errors-table.js'
import { actualOf, expectError, isError } from './_expect.js'
import { fail } from './_results.js'
import { describe, type Json } from './_wire.js'

const CRUD = ['PUSH-CREATE-001', 'PUSH-GET-001', 'PUSH-LIST-001', 'PUSH-DEL-001', 'PUSH-GET-002'] as const

/**
 * Push notification configs over one interface (A2A v1.0 §3.1.7–3.1.10) when the card declares them, on a task of
 * this run that has ended (no notification is due for it); else the error that says they are not supported.
 *
 * The webhook is `--webhook`. An agent SHOULD refuse webhooks on private addresses (§13.2) yet MAY allow some (a
 * development agent allows loopback): which it does is its policy, not conformance, so a refused webhook skips the
 * checks, saying so, rather than failing them.
 */
export async function pushChecks(run: BindingRun, ended: Json | undefined): Promise<void> {
  const { results, transport } = run
  if (run.card.capabilities?.pushNotifications !== true) {
    await results.check('CORE-CAP-001', transport, async () =>
      expectError(
        transport,
        run.seen,
        'CreateTaskPushNotificationConfig',
        await run.call('CreateTaskPushNotificationConfig', { taskId: ended?.id ?? unknownTaskId(), url: run.webhook }),
        'PushNotificationNotSupportedError',
      ),
    )
    return
  }
  if (!ended) {
    for (const id of CRUD) results.skip(id, transport, 'no task of this run ended to configure')
    return
  }
  const taskId = ended.id as string
  const created = await run.call('CreateTaskPushNotificationConfig', { taskId, url: run.webhook })
  // Refused as invalid parameters (not as an A2A error): the webhook, which is the agent's policy to judge.
  const refused = created.error && isError(run.transport, { ...created.error, reason: undefined }, 'InvalidParamsError')
  if (refused && !isA2AReason(created.error?.reason)) {
    for (const id of CRUD)
      results.skip(
        id,
        transport,
        `the agent refused the webhook ${run.webhook} (${created.error?.summary}); pass --webhook <url> it accepts`,
      )
    return
  }
  let configId: string | undefined
  await results.check('PUSH-CREATE-001', transport, () => {
    const config = created.value
    if (!config) return fail('the TaskPushNotificationConfig', actualOf(created))
    if (typeof config.id !== 'string' || config.id === '') return fail('the config with its id', describe(config))
    configId = config.id
    return config.url === run.webhook ? undefined : fail(`url ${run.webhook}`, `url ${describe(config.url)}`)
  })
  if (configId === undefined) {
    for (const id of CRUD.slice(1)) results.skip(id, transport, 'no config was created')
    return
  }
  const id = configId
  await results.check('PUSH-GET-001', transport, async () => {
    const answer = await run.call('GetTaskPushNotificationConfig', { taskId, id })
    if (!answer.value) return fail(`the config ${id}`, actualOf(answer))
    return answer.value.id === id && answer.value.url === run.webhook
      ? undefined
      : fail(`the config ${id} of url ${run.webhook}`, describe(answer.value))
  })
  await results.check('PUSH-LIST-001', transport, async () => {
    const answer = await run.call('ListTaskPushNotificationConfigs', { taskId })
    const configs = answer.value?.configs
    if (!Array.isArray(configs)) return fail('a ListTaskPushNotificationConfigsResponse', actualOf(answer))
    return configs.some((config: Json) => config?.id === id)
      ? undefined
      : fail(`the config ${id} listed`, describe(configs))
  })
  await results.check('PUSH-DEL-001', transport, async () => {
    const answer = await run.call('DeleteTaskPushNotificationConfig', { taskId, id })
    return answer.error || answer.problem ? fail('the config deleted', actualOf(answer)) : undefined
  })
  await results.check('PUSH-GET-002', transport, async () => {
    const answer = await run.call('GetTaskPushNotificationConfig', { taskId, id })
    return answer.error ? undefined : fail('an error: the config is gone', actualOf(answer))
  })
}
