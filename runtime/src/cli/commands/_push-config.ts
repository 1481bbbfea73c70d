import type { Command } from 'commander'
import type { A2AClient } from '../../client/client.js'
import { A2AProtocolError } from '../../client/errors.js'
import type { TaskPushNotificationConfig } from '../../client/types.js'
import { withClientOptions } from './_client-options.js'
import { runSession, type Session } from './_session.js'

/**
 * `a2a task push-config create|get|list|delete`: where the agent posts a task's updates (A2A's push notification
 * configs). The card is asked first: an agent that declares no push notifications is not sent the call.
 */
export function registerPushConfig(task: Command): void {
  const push = task.command('push-config').description("Manage the webhooks a task's updates are posted to")

  withClientOptions(push.command('create').description("Ask the agent to post the task's updates to a webhook"))
    .argument('<taskId>', 'the task')
    .requiredOption('--webhook <url>', 'the HTTPS address to post to')
    .option('--id <id>', "the config's id (default: the agent chooses)")
    .option('--webhook-token <token>', 'a token the agent sends with each post, for the webhook to check')
    .option('--auth-scheme <scheme>', 'the scheme the agent authenticates to the webhook with (e.g. Bearer)')
    .option('--auth-credentials <credentials>', 'the credentials for --auth-scheme')
    .action((taskId: string, flags: Record<string, string | undefined>, self: Command) =>
      withPush(self, async (client, session) => {
        const config: TaskPushNotificationConfig & { taskId: string } = {
          taskId,
          url: flags.webhook!,
          ...(flags.id && { id: flags.id }),
          ...(flags.webhookToken && { token: flags.webhookToken }),
          ...(flags.authScheme && {
            authentication: {
              scheme: flags.authScheme,
              ...(flags.authCredentials && { credentials: flags.authCredentials }),
            },
          }),
        }
        const created = await client.createTaskPushNotificationConfig(config, { signal: session.signal })
        return session.output.result('push-config', created)
      }),
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
    .option('--page-size <n>', 'configs per page')
    .option('--page-token <token>', 'the page after the one that gave this token')
    .action((taskId: string, flags: { pageSize?: string; pageToken?: string }, self: Command) =>
      withPush(self, async (client, session) =>
        session.output.result(
          'push-configs',
          await client.listTaskPushNotificationConfigs(
            {
              taskId,
              ...(flags.pageSize !== undefined && { pageSize: Number(flags.pageSize) }),
              ...(flags.pageToken !== undefined && { pageToken: flags.pageToken }),
            },
            { signal: session.signal },
          ),
        ),
      ),
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

function withPush(command: Command, action: (client: A2AClient, session: Session) => Promise<number>) {
  return runSession(command, async (session) => {
    const client = await session.client()
    if (client.card.capabilities?.pushNotifications !== true)
      throw new A2AProtocolError(
        'PushNotificationNotSupportedError',
        `${client.card.name} declares no push notifications (its card's capabilities.pushNotifications), so it was not asked`,
        'card',
      )
    return action(client, session)
  })
}
