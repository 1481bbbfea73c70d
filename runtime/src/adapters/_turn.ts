import type { ExecutionContext, TaskHandle } from '../agent.js'
import type { Part } from '../types.js'

/**
 * What a framework's run says, in the adapters' common words. Each adapter turns its framework's stream into
 * these; `runTurn` gives them their A2A meaning, so the three frameworks behave alike.
 */
export type TurnEvent =
  /** Streamed answer text. */
  | { type: 'text'; text: string }
  /** The model called a tool: progress a client can show, never the answer. */
  | { type: 'tool-call'; toolName: string; input?: unknown }
  /** The run stops to ask the user; the next message to the task resumes it. */
  | { type: 'ask'; question: string; metadata?: Record<string, unknown> }

export interface TurnOptions {
  /** The framework's name, for the failure reason ("The AI SDK model call failed …"). */
  framework: string
  /** Whether a tool call's input goes to the client with its working update (default true). */
  showToolInput?: boolean
  /** The reason the client reads for a failure the agent's author recognises; `undefined` for the default. */
  failureReason?: (error: unknown) => string | undefined
}

/**
 * Runs one turn of a framework agent as an A2A task: text chunks become one artifact streamed in chunks (its last
 * chunk marked, the final answer always in an artifact), tool calls `working` updates, a question `input-required`.
 * A failure fails the task with a reason that names its kind only (a provider's message may quote the prompt or a
 * key) and is logged in full; a cancel or a deadline (the signal fired) leaves the ending to the runtime.
 *
 * Each text chunk goes to the client as it comes (a model may pause for seconds mid-answer: nothing is held back),
 * so the end of the answer is marked by a last chunk with no text.
 */
export async function runTurn(
  ctx: ExecutionContext,
  task: TaskHandle,
  events: AsyncIterable<TurnEvent>,
  options: TurnOptions,
): Promise<void> {
  const showInput = options.showToolInput !== false
  let artifactId: string | undefined
  // Closes the answer's artifact: a last chunk with no text (a chunk is sent as it comes, before the end is known).
  const close = () => {
    if (artifactId !== undefined) task.artifact('', { artifactId, append: true, lastChunk: true })
  }
  let question: { question: string; metadata?: Record<string, unknown> } | undefined
  try {
    for await (const event of events) {
      if (event.type === 'text') {
        if (event.text === '') continue
        artifactId = task.artifact(
          event.text,
          artifactId === undefined
            ? { name: 'answer', lastChunk: false }
            : { artifactId, append: true, lastChunk: false },
        )
      } else if (event.type === 'tool-call') {
        task.working(toolParts(event, showInput))
      } else {
        question = event
        break
      }
    }
  } catch (error) {
    // Canceled or past its deadline: the runtime has ended the task (or is ending it) already.
    if (ctx.signal.aborted) return
    ctx.logger.error(`${options.framework}: the run of task ${ctx.taskId} failed; the task is failed`, error)
    close()
    task.fail(options.failureReason?.(error) ?? failureReason(options.framework, error))
    return
  }
  if (ctx.signal.aborted) return
  close()
  if (question) {
    task.inputRequired(
      question.metadata ? [{ kind: 'text', text: question.question, metadata: question.metadata }] : question.question,
    )
    return
  }
  // The answer is always an artifact, even an empty one: clients read the result there.
  if (artifactId === undefined) task.artifact('', { name: 'answer' })
  task.complete()
}

function toolParts(event: { toolName: string; input?: unknown }, showInput: boolean): Part[] {
  const parts: Part[] = [{ kind: 'text', text: `Calling tool ${event.toolName}` }]
  const input =
    showInput && event.input !== null && typeof event.input === 'object'
      ? (event.input as Record<string, unknown>)
      : undefined
  parts.push({ kind: 'data', data: { tool: event.toolName, ...(input && { input }) } })
  return parts
}

/**
 * A reason a client may read: the framework, the error's class and an HTTP status when the error has one. Never
 * the error's message: providers put request bodies (the prompt) and sometimes key fragments in them.
 */
function failureReason(framework: string, error: unknown): string {
  const name = error instanceof Error && /^[A-Za-z_$][\w$]{0,60}$/.test(error.name) ? error.name : 'Error'
  const status = statusOf(error)
  return `The ${framework} model call failed (${name}${status ? `, HTTP ${status}` : ''}); the server's log has the details`
}

function statusOf(error: unknown): number | undefined {
  if (!error || typeof error !== 'object') return undefined
  const candidate =
    (error as { statusCode?: unknown; status?: unknown }).statusCode ?? (error as { status?: unknown }).status
  return typeof candidate === 'number' && Number.isInteger(candidate) && candidate >= 100 && candidate <= 599
    ? candidate
    : undefined
}
