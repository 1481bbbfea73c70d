import type { Command } from 'commander'
import type { A2AClient } from '../../client/client.js'
import type { TaskPushNotificationConfig } from '../../client/types.js'
import { NotDeclaredError, UsageError } from '../output/_failures.js'
import { withClientOptions } from './_client-options.js'
import { runSession, type Session } from './_session.js'
import { wholeNumber } from './_whole-number.js'

/**
 * `a2a task push-config create|get|list|delete`: where the agent posts a task's updates (A2A's push notification
 * configs). The card is asked first: an agent that declares no push notifications is not sent the call.
 */
export function registerPushConfig(task: Command): void {
  const push = task.command('push-config').description("Manage the webhooks a task's updates are posted to")

  withClientOptions(push.command('create').description("Ask the agent to post the task's updates to a webhook"))
    .argument('<taskId>', 'the task')
    .option('--webhook <url>', 'the HTTPS address to post to (required)')
    .option('--id <id>', "the config's id (default: the agent chooses)")
    .option('--webhook-token <token>', 'a token the agent sends with each post, for the webhook to check')
    .option('--auth-scheme <scheme>', 'the scheme the agent authenticates to the webhook with (e.g. Bearer)')
    .option('--auth-credentials <credentials>', 'the credentials for --auth-scheme')
    .action((taskId: string, _flags: unknown, self: Command) =>
      withPush(
        self,
        async (client, session) => {
          const values = session.settings.values as Record<string, string | undefined>
          const config: TaskPushNotificationConfig & { taskId: string } = {
            taskId,
            url: values.webhook!,
            ...(values.id && { id: values.id }),
            ...(values.webhookToken && { token: values.webhookToken }),
            ...(values.authScheme && {
              authentication: {
                scheme: values.authScheme,
                ...(values.authCredentials && { credentials: values.authCredentials }),
              },
            }),
          }
          const created = await client.createTaskPushNotificationConfig(config, { signal: session.signal })
          return session.output.result('push-config', created)
        },
        requireWebhook,
      ),
    )

  withClientOptions(push.command('get').description("Print one of the task's webhook configs"))
    .argument('<taskId>', 'the task')
    .argument('<configId>', 'the config')
    .action((taskId: string, id: string, _flags: unknown, self: Command) =>
      withPush(self, async (client, session) =>
        session.output.result(
          'push-config',
          await client.getTaskPushNotificationConfig({ taskId, id }, { signal: session.signal }),
        ),
      ),
    )

  withClientOptions(push.command('list').description("List the task's webhook configs"))
    .argument('<taskId>', 'the task')
    .option('--page-size <n>', 'configs per page', wholeNumber('--page-size'))
    .option('--page-token <token>', 'the page after the one that gave this token')
    .action((taskId: string, _flags: unknown, self: Command) =>
      withPush(self, async (client, session) => {
        const { pageSize, pageToken } = session.settings.values as { pageSize?: number; pageToken?: string }
        const request = {
          taskId,
          ...(pageSize !== undefined && { pageSize }),
          ...(pageToken !== undefined && { pageToken }),
        }
        return session.output.result(
          'push-configs',
          await client.listTaskPushNotificationConfigs(request, { signal: session.signal }),
        )
      }),
    )

  withClientOptions(push.command('delete').description("Stop posting the task's updates to a webhook"))
    .argument('<taskId>', 'the task')
    .argument('<configId>', 'the config')
    .action((taskId: string, id: string, _flags: unknown, self: Command) =>
      withPush(self, async (client, session) => {
        await client.deleteTaskPushNotificationConfig({ taskId, id }, { signal: session.signal })
        return session.output.result('push-config-deleted', { taskId, id })
      }),
    )
}

/** `--webhook` is required, but only once resolved: A2ACLI_WEBHOOK or an `.env` file may give it as well. */
function requireWebhook(session: Session): void {
  if (!session.settings.values.webhook)
    throw new UsageError("required option '--webhook <url>' not specified", 'or set A2ACLI_WEBHOOK')
}

/** Runs a push-config action once its values check out and the card says the agent takes push notifications. */
function withPush(
  command: Command,
  action: (client: A2AClient, session: Session) => Promise<number>,
  check?: (session: Session) => void,
) {
  return runSession(command, async (session) => {
    check?.(session)
    const client = await session.client()
    if (client.card.capabilities?.pushNotifications !== true)
      throw new NotDeclaredError(
        'PushNotificationNotSupportedError',
        `${client.card.name} declares no push notifications (its card's capabilities.pushNotifications), so it was not asked`,
      )
    return action(client, session)
  })
}
