import { randomUUID } from 'node:crypto'
import { type Command, Option } from 'commander'
import type { A2AClient } from '../../client/client.js'
import type {
  JsonObject,
  Message,
  SendMessageRequest,
  SendMessageResponse,
  StreamResponse,
} from '../../client/types.js'
import { UsageError } from '../output/_failures.js'
import { withClientOptions } from './_client-options.js'
import { parseDuration } from './_durations.js'
import { followStream } from './_follow.js'
import { messageParts, withMessageParts } from './_message-parts.js'
import { runSession, type Session } from './_session.js'
import { pollTask, settled } from './_wait.js'

/**
 * `a2a send`: one message to an agent, starting a task or continuing one (`--task-id`), or a new task in a context
 * (`--context-id`). It waits by default until the task ends or asks for something, reading the agent's stream when
 * the card declares one (falling back to reading the task when the stream breaks), else the blocking answer and
 * then the task; `--async` returns the identifiers at once; `--stream` prints each event as it comes.
 */
export function registerSend(program: Command): void {
  const base = withClientOptions(
    program
      .command('send')
      .description('Send a message to an agent and wait for the task to end or ask for input')
      .argument('[text...]', 'the message text (or give parts with --text, --file, --data)'),
  )
    .option('--context-id <id>', 'start a new task in this context (an id the agent gave)')
    .option('--task-id <id>', 'continue this task, e.g. one waiting for input')
    .option('--async', 'do not wait: print the task and its identifiers at once', false)
    .addOption(new Option('--return-immediately', 'the same as --async').hideHelp())
    .option('--wait', 'wait until the task ends or asks for input (the default)')
    .option('--no-wait', 'the same as --async')
    .option('--stream', 'print each event as it comes (JSON lines with -o json)')
    .option('--poll-interval <duration>', 'how often to read the task while waiting', '2s')
    .option('--metadata <json>', 'metadata of the request, a JSON object')
    .addOption(new Option('--skill <id>', "ask this skill (the message's metadata.skillId)").hideHelp())
    .addOption(new Option('--context <id>', 'earlier spelling of --context-id').hideHelp())
    .addOption(new Option('--task <id>', 'earlier spelling of --task-id').hideHelp())
  const { command, parts } = withMessageParts(base)
  command.action((words: string[], _flags: unknown, self: Command) =>
    runSession(self, (session) => send(session, words, parts())),
  )
}

async function send(session: Session, words: string[], partFlags: Parameters<typeof messageParts>[1]): Promise<number> {
  const { values } = session.settings
  const { async, stream } = deliveryOf(session.settings)
  const taskId = (values.taskId ?? values.task) as string | undefined
  const contextId = (values.contextId ?? values.context) as string | undefined
  const metadata = parseMetadata(values.metadata as string | undefined)
  const message: Message = {
    messageId: randomUUID(),
    role: 'ROLE_USER',
    parts: messageParts(words, partFlags),
    ...(taskId && { taskId }),
    ...(contextId && { contextId }),
    ...(typeof values.skill === 'string' && { metadata: { skillId: values.skill } }),
  }
  const request: SendMessageRequest = { message, ...(metadata && { metadata }) }
  const pollIntervalMs = parseDuration(String(values.pollInterval ?? '2s'), '--poll-interval')
  const { deadline, signal, output } = session
  const waiting = waitingNotice()
  try {
    const client = await session.client()
    const streams = client.card.capabilities?.streaming === true
    if (async) {
      const answer = await client.sendMessage({ ...request, configuration: { returnImmediately: true } }, { signal })
      return output.result('send', answer)
    }
    if (stream) {
      if (!streams) {
        output.warn("the agent's card declares no streaming: waiting for the whole answer instead")
        const answer = await blockingSend(client, request, { signal, pollIntervalMs, deadline, waiting })
        output.event(answer.task ? { task: answer.task } : { message: answer.message! })
        return output.end()
      }
      await followStream(client, (followed, resuming) => openStream(client, request, followed, resuming, signal), {
        signal,
        onEvent: (response) => output.event(response),
        onFallback: (why) => output.warn(why),
        pollIntervalMs,
        deadline,
        resumeAttempts: 1,
      })
      return output.end()
    }
    const answer = streams
      ? await streamedSend(client, request, { signal, pollIntervalMs, deadline, waiting, warn: output.warn })
      : await blockingSend(client, request, { signal, pollIntervalMs, deadline, waiting })
    return output.result('send', answer)
  } catch (error) {
    if (session.interrupted) {
      // Ctrl-C stops waiting, not the task: the caller needs its id to find it again.
      waiting.sayNow()
      throw error
    }
    // A wait that ran out names the task it waited for, so the hint can say how to wait again.
    return session.fail(error, { taskId: waiting.task?.id ?? taskId, continuing: taskId !== undefined })
  }
}

/**
 * Whether to return at once (`--async`, `--no-wait`, `--return-immediately`, A2ACLI_ASYNC, A2ACLI_WAIT=false) and
 * whether to print each event (`--stream`). A flag on the command line outranks any configured value: `--wait` or
 * `--stream` with A2ACLI_ASYNC=true waits. Two flags asking for opposite things are a usage error.
 */
function deliveryOf({ values, flags }: Session['settings']): { async: boolean; stream: boolean } {
  const stream = values.stream === true
  const asksAsync = (only: (attribute: string) => boolean) =>
    (only('async') && values.async === true) ||
    (only('returnImmediately') && values.returnImmediately === true) ||
    (only('wait') && values.wait === false)
  const flagAsync = asksAsync((attribute) => flags.has(attribute))
  if (flagAsync && stream) throw new UsageError('--async and --stream ask for opposite things: choose one')
  if (flagAsync && flags.has('wait') && values.wait === true)
    throw new UsageError('--async and --wait ask for opposite things: choose one')
  if (flagAsync) return { async: true, stream: false }
  // Only a flag chooses --stream; a configured A2ACLI_ASYNC or A2ACLI_WAIT gives way to it, and to --wait.
  if (stream || flags.has('wait')) return { async: false, stream }
  return { async: asksAsync(() => true), stream: false }
}

/** The first stream is the message's own; resuming follows the task from the last event it got. */
function openStream(
  client: A2AClient,
  request: SendMessageRequest,
  followed: { taskId?: string; lastEventId?: string },
  resuming: boolean,
  signal: AbortSignal,
) {
  return resuming && followed.taskId !== undefined
    ? client.subscribeToTask(followed.taskId, { lastEventId: followed.lastEventId, signal })
    : client.sendStreamingMessage(request, { signal })
}

interface WaitOptions {
  signal: AbortSignal
  pollIntervalMs: number
  deadline: number | undefined
  waiting: WaitingNotice
}

/** SendMessage, which the agent answers when the task settles (or earlier: then the task is read until it does). */
async function blockingSend(
  client: A2AClient,
  request: SendMessageRequest,
  options: WaitOptions,
): Promise<SendMessageResponse> {
  const answer = await client.sendMessage(request, { signal: options.signal })
  if (!answer.task || settled(answer.task.status?.state)) return answer
  options.waiting.know(answer.task)
  options.waiting.sayNow()
  return { task: await pollTask(client, answer.task.id, { ...options, intervalMs: options.pollIntervalMs }) }
}

/**
 * The wait over the agent's stream: the task's identifiers arrive with the first event (so Ctrl-C can name it), and
 * once it settles the task is read whole, as SendMessage would have answered it.
 */
async function streamedSend(
  client: A2AClient,
  request: SendMessageRequest,
  options: WaitOptions & { warn: (line: string) => void },
): Promise<SendMessageResponse> {
  const followed = await followStream(
    client,
    (state, resuming) => openStream(client, request, state, resuming, options.signal),
    {
      ...options,
      onEvent: (response: StreamResponse) => {
        // Said only of a task that takes a while: a quick answer needs no word on stderr.
        if (options.waiting.task === undefined && 'task' in response && !settled(response.task.status?.state)) {
          options.waiting.know(response.task)
          options.waiting.sayAfter(ANNOUNCE_AFTER_MS)
        }
      },
      onFallback: options.warn,
      resumeAttempts: 1,
    },
  ).finally(() => options.waiting.cancel())
  if (followed.message) return { message: followed.message }
  return { task: await client.getTask({ id: followed.taskId! }, { signal: options.signal }) }
}

/** How long a task runs before `send` says on stderr which task it waits for. */
const ANNOUNCE_AFTER_MS = 1000

/**
 * The line on stderr naming the task `send` waits for (Ctrl-C then stops waiting, the task goes on): said once,
 * after a while or at once, and in any case before the command stops waiting unfinished.
 */
interface WaitingNotice {
  task: { id: string; contextId: string } | undefined
  know(task: { id: string; contextId: string }): void
  sayAfter(ms: number): void
  /** Says it now if the task is known and it has not been said; stops a pending `sayAfter`. */
  sayNow(): void
  /** Stops a pending `sayAfter`. */
  cancel(): void
}

function waitingNotice(): WaitingNotice {
  let said = false
  let timer: NodeJS.Timeout | undefined
  const notice: WaitingNotice = {
    task: undefined,
    know(task) {
      notice.task = { id: task.id, contextId: task.contextId }
    },
    sayAfter(ms) {
      timer ??= setTimeout(() => notice.sayNow(), ms).unref()
    },
    sayNow() {
      notice.cancel()
      if (said || notice.task === undefined) return
      said = true
      const { id, contextId } = notice.task
      process.stderr.write(`Waiting for task ${id} (context ${contextId}); Ctrl-C stops waiting, the task goes on\n`)
    },
    cancel() {
      clearTimeout(timer)
      timer = undefined
    },
  }
  return notice
}

function parseMetadata(text: string | undefined): JsonObject | undefined {
  if (text === undefined) return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new UsageError(`--metadata is not JSON: ${(error as Error).message}`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError('--metadata must be a JSON object, e.g. \'{"key":"value"}\'')
  return value as JsonObject
}
