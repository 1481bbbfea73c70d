import { randomUUID } from 'node:crypto'
import { createInterface } from 'node:readline/promises'
import type { Command } from 'commander'
import { INTERRUPTED_STATES, type SendMessageResponse, type TaskState } from '../../client/types.js'
import { UsageError } from '../output/_failures.js'
import { createOutput } from '../output/_output.js'
import { withClientOptions } from './_client-options.js'
import { runSession } from './_session.js'

/**
 * `a2a chat`: a conversation at the terminal. Each line is a message; the context the agent gives is carried to
 * the next, and while a task waits for input the next line answers that task. It needs a terminal on both ends:
 * anywhere else (a pipe, a script) it refuses, and `a2a send` with `--context-id` / `--task-id` does the same
 * explicitly.
 */
export function registerChat(program: Command): void {
  withClientOptions(program.command('chat').description('Talk to an agent at the terminal, one message per line'))
    .option('--context-id <id>', 'continue this context')
    .action((_flags: unknown, self: Command) =>
      runSession(self, async (session) => {
        if (!process.stdin.isTTY || !process.stdout.isTTY)
          throw new UsageError(
            'a2a chat needs a terminal on stdin and stdout',
            'in a script, use a2a send with --context-id and --task-id',
          )
        if (session.settings.values.output === 'json')
          throw new UsageError('a2a chat prints text: -o json is for a2a send')
        const client = await session.client()
        const lines = createInterface({ input: process.stdin, output: process.stdout })
        session.signal.addEventListener('abort', () => lines.close(), { once: true })
        process.stdout.write(`Talking to ${client.card.name}. An empty line or Ctrl-D ends.\n`)
        let contextId = session.settings.values.contextId as string | undefined
        let waitingTask: string | undefined
        for (;;) {
          let text: string
          try {
            text = (await lines.question('> ')).trim()
          } catch {
            break
          }
          if (text === '') break
          const answer: SendMessageResponse = await client.sendMessage(
            {
              message: {
                messageId: randomUUID(),
                role: 'ROLE_USER',
                parts: [{ text }],
                ...(contextId && { contextId }),
                ...(waitingTask && { taskId: waitingTask }),
              },
            },
            { signal: session.signal },
          )
          const state = answer.task?.status?.state
          contextId = answer.task?.contextId ?? answer.message?.contextId ?? contextId
          waitingTask = state && INTERRUPTED_STATES.has(state as TaskState) ? answer.task!.id : undefined
          createOutput({ format: 'text', agentRef: session.settings.agentRef }).result('send', answer)
        }
        lines.close()
        return 0
      }),
    )
}
