import type { Command } from 'commander'
import { A2AProtocolError } from '../../client/errors.js'
import { type ListTasksRequest, type TaskState, TERMINAL_STATES } from '../../client/types.js'
import { UsageError } from '../output/_failures.js'
import { withClientOptions } from './_client-options.js'
import { downloadArtifacts } from './_download.js'
import { parseDuration } from './_durations.js'
import { followStream } from './_follow.js'
import { registerPushConfig } from './_push-config.js'
import { runSession, type Session } from './_session.js'
import { pollTask } from './_wait.js'
import { wholeNumber } from './_whole-number.js'

/** `a2a task get|cancel|list|subscribe|push-config|download`: a task the agent already has, by its id. */
export function registerTask(program: Command): void {
  const task = program.command('task').description("Read, follow, list and cancel an agent's tasks")

  withClientOptions(task.command('get').description('Print a task: its state, artifacts and history'))
    .argument('<taskId>', 'the id the agent gave the task')
    .option('--history <n>', 'how many messages of its history to include', wholeNumber('--history'))
    .option('--wait', 'read it again until it ends or asks for input')
    .option('--poll-interval <duration>', 'how often to read it while waiting', '2s')
    .action((taskId: string, _flags: unknown, self: Command) => runSession(self, (session) => get(session, taskId)))

  withClientOptions(task.command('cancel').description('Cancel a task, and print the state it is in'))
    .argument('<taskId>', 'the id the agent gave the task')
    .action((taskId: string, _flags: unknown, self: Command) =>
      runSession(self, async (session) => {
        const client = await session.client()
        try {
          return session.output.result('cancel', await client.cancelTask({ id: taskId }, { signal: session.signal }))
        } catch (error) {
          if (session.interrupted) throw error
          // The hint of a task that has already ended names it (a2a task get <id>).
          return session.fail(error, { taskId })
        }
      }),
    )

  withClientOptions(
    task.command('list').description('List your tasks at the agent, newest change first, a page at a time'),
  )
    .option('--context-id <id>', 'only the tasks of this context')
    .option('--status <state>', 'only tasks in this state (e.g. working, completed, input_required)')
    .option('--page-size <n>', 'tasks per page (the agent caps it)', wholeNumber('--page-size'))
    .option('--page-token <token>', 'the page after the one that gave this token')
    .option('--history <n>', 'how many messages of each history to include', wholeNumber('--history'))
    .option('--since <timestamp>', 'only tasks whose state changed after this time (RFC 3339)')
    .option('--include-artifacts', "include each task's artifacts")
    .action((_flags: unknown, self: Command) => runSession(self, (session) => list(session)))

  withClientOptions(
    task
      .command('subscribe')
      .description('Follow a task until it ends or asks for input, resuming when the connection breaks'),
  )
    .argument('<taskId>', 'the id the agent gave the task')
    .option('--stream', 'print each event as it comes (JSON lines with -o json)')
    .option('--poll-interval <duration>', 'how often to read the task when it cannot be followed', '2s')
    .action((taskId: string, _flags: unknown, self: Command) =>
      runSession(self, (session) => subscribe(session, taskId)),
    )

  registerPushConfig(task)

  withClientOptions(task.command('download').description("Save a task's artifacts to files, and print the task"))
    .argument('<taskId>', 'the id the agent gave the task')
    .option('--dir <path>', 'the folder to save them in', '.')
    .option('--artifact <id>', 'only this artifact (its id or name)')
    .action((taskId: string, _flags: unknown, self: Command) =>
      runSession(self, async (session) => {
        const client = await session.client()
        const got = await client.getTask({ id: taskId }, { signal: session.signal })
        const { dir, artifact } = session.settings.values as { dir: string; artifact?: string }
        for (const saved of await downloadArtifacts(got, { dir, only: artifact, signal: session.signal }))
          process.stderr.write(`Saved: ${saved.path} (${saved.bytes} bytes)\n`)
        return session.output.result('task', got)
      }),
    )
}

async function get(session: Session, taskId: string): Promise<number> {
  const { values } = session.settings
  const historyLength = values.history as number | undefined
  const { deadline, signal } = session
  const client = await session.client()
  try {
    const task =
      values.wait === true
        ? await pollTask(client, taskId, {
            intervalMs: parseDuration(String(values.pollInterval), '--poll-interval'),
            deadline,
            signal,
            historyLength,
          })
        : await client.getTask({ id: taskId, ...(historyLength !== undefined && { historyLength }) }, { signal })
    return session.output.result('task', task)
  } catch (error) {
    if (session.interrupted) throw error
    return session.fail(error, { taskId })
  }
}

/** `--status working` or `TASK_STATE_WORKING`, either case. */
function stateOf(text: string): TaskState {
  const name = text.trim().toUpperCase().replace(/-/g, '_')
  const state = (name.startsWith('TASK_STATE_') ? name : `TASK_STATE_${name}`) as TaskState
  const known = [
    ...TERMINAL_STATES,
    'TASK_STATE_SUBMITTED',
    'TASK_STATE_WORKING',
    'TASK_STATE_INPUT_REQUIRED',
    'TASK_STATE_AUTH_REQUIRED',
  ]
  if (!known.includes(state)) throw new UsageError(`--status: '${text}' is not a task state (e.g. working, completed)`)
  return state
}

async function list(session: Session): Promise<number> {
  const values = session.settings.values as Record<string, string | number | boolean | undefined>
  if (typeof values.since === 'string' && Number.isNaN(Date.parse(values.since)))
    throw new UsageError(`--since: '${values.since}' is not a timestamp (e.g. 2026-01-31T12:00:00Z)`)
  const request: ListTasksRequest = {
    ...(typeof values.contextId === 'string' && { contextId: values.contextId }),
    ...(typeof values.status === 'string' && { status: stateOf(values.status) }),
    ...(typeof values.pageSize === 'number' && { pageSize: values.pageSize }),
    ...(typeof values.pageToken === 'string' && { pageToken: values.pageToken }),
    ...(typeof values.history === 'number' && { historyLength: values.history }),
    ...(typeof values.since === 'string' && { statusTimestampAfter: new Date(values.since).toISOString() }),
    ...(values.includeArtifacts === true && { includeArtifacts: true }),
  }
  const client = await session.client()
  return session.output.result('tasks', await client.listTasks(request, { signal: session.signal }))
}

async function subscribe(session: Session, taskId: string): Promise<number> {
  const { values } = session.settings
  const stream = values.stream === true
  const pollIntervalMs = parseDuration(String(values.pollInterval), '--poll-interval')
  const { deadline, signal, output } = session
  const client = await session.client()
  try {
    if (client.card.capabilities?.streaming !== true) {
      output.warn("the agent's card declares no streaming: reading the task until it ends instead")
      const task = await pollTask(client, taskId, { intervalMs: pollIntervalMs, deadline, signal })
      if (!stream) return output.result('task', task)
      output.event({ task })
      return output.end()
    }
    await followStream(
      client,
      (state, resuming) =>
        client.subscribeToTask(taskId, { ...(resuming && { lastEventId: state.lastEventId }), signal }),
      {
        signal,
        onEvent: (response) => stream && output.event(response),
        onFallback: (why) => output.warn(why),
        pollIntervalMs,
        deadline,
        resumeAttempts: 3,
      },
    )
    if (stream) return output.end()
    // The task as it settled, read whole: a stream carries it in pieces.
    return output.result('task', await client.getTask({ id: taskId }, { signal }))
  } catch (error) {
    if (session.interrupted) throw error
    // A task that has already ended cannot be followed (A2A v1.0 §3.1.6): what there is to see is the task itself.
    if (error instanceof A2AProtocolError && error.name === 'UnsupportedOperationError') {
      const task = await client.getTask({ id: taskId }, { signal }).catch(() => undefined)
      if (task && TERMINAL_STATES.has(task.status?.state)) {
        if (!stream) return output.result('task', task)
        output.event({ task })
        return output.end()
      }
    }
    return session.fail(error, { taskId })
  }
}
