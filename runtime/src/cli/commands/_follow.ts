import { setTimeout as sleep } from 'node:timers/promises'
import type { A2AClient, StreamEvent } from '../../client/client.js'
import { A2AClientFailure } from '../../client/errors.js'
import type { Message, StreamResponse, Task } from '../../client/types.js'
import { pollTask, settled } from './_wait.js'

/** What a stream has told of its task so far: enough to resume it, poll it, or say where it stood. */
export interface Followed {
  taskId?: string
  contextId?: string
  state?: string
  lastEventId?: string
  /** The agent answered with a message and no task. */
  message?: Message
}

/** Notes what one event says of the task. */
function note(followed: Followed, response: StreamResponse): void {
  if ('task' in response) {
    followed.taskId = response.task.id
    followed.contextId = response.task.contextId
    followed.state = response.task.status?.state
  } else if ('statusUpdate' in response) {
    followed.taskId = response.statusUpdate.taskId
    followed.contextId = response.statusUpdate.contextId
    followed.state = response.statusUpdate.status?.state
  } else if ('artifactUpdate' in response) {
    followed.taskId ??= response.artifactUpdate.taskId
    followed.contextId ??= response.artifactUpdate.contextId
  } else if ('message' in response) followed.message = response.message
}

/**
 * A stream that stopped without an A2A answer (the connection cut, a proxy's timeout): the task may well go on.
 * An A2A error ends the command instead: it is the agent's word.
 */
const isCut = (error: unknown): boolean =>
  error instanceof A2AClientFailure && (error.kind === 'unreachable' || error.kind === 'bad-response')

export interface FollowOptions {
  signal: AbortSignal
  /** Each event as it comes. */
  onEvent: (response: StreamResponse) => void
  /** Said once when the stream broke and the command reads the task instead (or resumes). */
  onFallback: (why: string) => void
  pollIntervalMs: number
  deadline: number | undefined
  /** Resume with `Last-Event-ID` this many times before polling (`task subscribe`); 0 polls at once. */
  resumeAttempts: number
}

/**
 * Follows a stream to its end: each event handed on; when it breaks after the task is known, it is resumed from
 * the last event (the agent sends the Task first again), and past the attempts the task is read until it settles,
 * its final state handed on as one more `{ task }` event. A stream that ends before the task settles (an agent
 * closing early) is read the same way. It returns at the event that settles the task (or the agent's message),
 * whether or not the agent closes the stream then. Returns what it knew.
 */
export async function followStream(
  client: A2AClient,
  /** The stream: first the command's own; when resuming, SubscribeToTask after `followed.lastEventId`. */
  open: (followed: Followed, resuming: boolean) => AsyncIterable<StreamEvent>,
  options: FollowOptions,
): Promise<Followed> {
  const followed: Followed = {}
  let attempts = 0
  for (;;) {
    try {
      for await (const { response, eventId } of open(followed, attempts > 0)) {
        if (eventId !== undefined) followed.lastEventId = eventId
        note(followed, response)
        options.onEvent(response)
        // Done once the task settles or the agent replied: an agent may keep the stream open after that (only
        // keep-alive comments), and leaving the loop closes it.
        if (followed.message || settled(followed.state)) return followed
      }
      if (followed.message || followed.taskId === undefined || settled(followed.state)) return followed
      options.onFallback('the stream ended before the task did; reading the task instead')
      break
    } catch (error) {
      if (!isCut(error) || followed.taskId === undefined || options.signal.aborted) throw error
      if (attempts < options.resumeAttempts && followed.lastEventId !== undefined) {
        attempts++
        options.onFallback(
          `the stream broke (${(error as Error).message}); resuming after event ${followed.lastEventId}`,
        )
        await sleep(250 * 2 ** attempts, undefined, { signal: options.signal })
        continue
      }
      options.onFallback(`the stream broke (${(error as Error).message}); reading the task instead`)
      break
    }
  }
  const task: Task = await pollTask(client, followed.taskId!, {
    intervalMs: options.pollIntervalMs,
    deadline: options.deadline,
    signal: options.signal,
  })
  const response = { task }
  note(followed, response)
  options.onEvent(response)
  return followed
}
