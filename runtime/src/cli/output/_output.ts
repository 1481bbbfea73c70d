import type {
  AgentCard,
  ListTaskPushNotificationConfigsResponse,
  ListTasksResponse,
  SendMessageResponse,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
} from '../../client/types.js'
import { exitStatusOf, type FailureContext, toEnvelope } from './_failures.js'
import {
  type RenderContext,
  renderCard,
  renderPushConfig,
  renderPushConfigDeleted,
  renderPushConfigList,
  renderSendResponse,
  renderTask,
  renderTaskList,
  stateLabel,
  type TaskFacts,
  taskFields,
} from './_render.js'
import { printableLine } from './_sanitize.js'
import { createTextStream, type TextStream } from './_stream-text.js'
import { createTextWriter, type TextWriter } from './_text-writer.js'

/**
 * The output contract of the client commands (`-o text|json` × `--stream`):
 * - json: the one terminal document on stdout, as the protocol shapes it, on one line (JSON.stringify without
 *   indentation: a single parse reads it, and so does a reader that keeps lines); with --stream one line per
 *   event, written as it comes; a failure is the error envelope on stdout (under --stream, its last line).
 * - text: `Label: value` fields and blocks (_render.ts lists the labels); with --stream each event as it comes,
 *   and the last lines restate `Task`, `Context` and `State`; a failure is `Error:`, `Code:`, `A2A code:` and
 *   `Hint:` lines on stderr.
 * Warnings (a task that failed, was rejected or canceled, or waits for the caller) are one `Warning:` line on
 * stderr; the exit status stays 0, as the command did its job. Nothing but the contract reaches stdout.
 *
 * A command calls `event` for each event of a stream, then exactly one terminal method: `result`, `end` or
 * `error`. Each returns the exit status for the command to exit with. `result` writes nothing unless the whole
 * document renders, and `error` is always allowed after a terminal call that threw: a document the renderers
 * cannot show (an agent's malformed answer) ends as an error envelope, never half a document and a stack.
 */
export interface Output {
  event(response: StreamResponse): void
  result<K extends ResultKind>(kind: K, document: ResultDocuments[K]): number
  /** The stream is over (its events were given to `event`). */
  end(): number
  error(failure: unknown, context?: FailureContext): number
  warn(line: string): void
}

/** The terminal documents, by what the command did. */
interface ResultDocuments {
  /** `send`: the task, or the agent's direct reply. */
  send: SendMessageResponse
  /** `task get`, `task subscribe`'s end. */
  task: Task
  /** `task cancel`: its canceled state is what was asked, so no warning names it. */
  cancel: Task
  /** `task list`. */
  tasks: ListTasksResponse
  'push-config': TaskPushNotificationConfig
  'push-configs': ListTaskPushNotificationConfigsResponse
  /** A deleted push config: json prints the protocol's empty answer, `{}`. */
  'push-config-deleted': { taskId: string; id: string }
  card: AgentCard
}
type ResultKind = keyof ResultDocuments

interface Writable {
  write(text: string): unknown
}

export interface OutputOptions {
  format: 'text' | 'json'
  /** Every part with its media type and metadata (text). */
  verbose?: boolean
  /** The `--agent-card` the caller gave, repeated in the commands printed; none when the default agent is used. */
  agentRef?: string
  stdout?: Writable
  stderr?: Writable
}

export function createOutput(options: OutputOptions): Output {
  const stdout = options.stdout ?? process.stdout
  const stderr = options.stderr ?? process.stderr
  const context: RenderContext = { verbose: options.verbose === true, agentRef: options.agentRef }
  const json = options.format === 'json'
  const line = (value: unknown) => stdout.write(`${JSON.stringify(value)}\n`)
  const writer: TextWriter = createTextWriter((text) => stdout.write(text))
  let textStream: TextStream | undefined
  // What --stream in json has said of its task, for the warning at its end.
  const jsonFacts: TaskFacts = {}
  let ended = false

  const terminal = () => {
    if (ended) throw new Error('a2a output: a command ends its output once')
  }
  const warn = (text: string) => stderr.write(`Warning: ${printableLine(text)}\n`)
  const warnOutcome = (facts: TaskFacts) => {
    const warning = outcomeWarning(facts)
    if (warning) warn(warning)
  }

  return {
    event(response) {
      if (ended) throw new Error('a2a output: an event after the end')
      if (json) {
        line(response)
        noteFacts(jsonFacts, response)
        return
      }
      textStream ??= createTextStream(writer, context)
      textStream.event(response)
    },
    result(kind, document) {
      terminal()
      // Rendered whole before anything is written: a renderer that throws leaves stdout as it was.
      const text = json ? jsonText(kind, document) : renderedText(kind, document)
      ended = true
      writer.closeBlock()
      stdout.write(text)
      if (kind === 'task') warnOutcome(factsOfTask(document as Task))
      if (kind === 'send' && (document as SendMessageResponse).task)
        warnOutcome(factsOfTask((document as SendMessageResponse).task!))
      return 0
    },
    end() {
      terminal()
      ended = true
      const facts = json ? jsonFacts : (textStream?.facts ?? {})
      if (!json) {
        writer.closeBlock()
        taskFields(writer, facts, context)
      }
      warnOutcome(facts)
      return 0
    },
    error(failure, failureContext = {}) {
      const envelope = toEnvelope(failure, { agentRef: options.agentRef, ...failureContext })
      // After a document was written whole, stdout keeps it alone: the failure goes to stderr as text.
      const afterDocument = ended
      ended = true
      if (json && !afterDocument) line(envelope)
      else {
        // A stream cut short still leaves what it knew of its task on stdout, so the caller can go on with it.
        writer.closeBlock()
        if (!afterDocument && (textStream?.facts.taskId !== undefined || textStream?.facts.contextId !== undefined))
          taskFields(writer, textStream.facts, context)
        const { code, message, hint, a2aCode } = envelope.error
        let text = `Error: ${printableLine(message)}\nCode: ${code}\n`
        if (a2aCode !== null) text += `A2A code: ${printableLine(String(a2aCode))}\n`
        if (hint !== null) text += `Hint: ${printableLine(hint)}\n`
        stderr.write(text)
      }
      return exitStatusOf(envelope.error.code)
    },
    warn,
  }

  function jsonText<K extends ResultKind>(kind: K, document: ResultDocuments[K]): string {
    return `${JSON.stringify(kind === 'push-config-deleted' ? {} : document)}\n`
  }

  function renderedText<K extends ResultKind>(kind: K, document: ResultDocuments[K]): string {
    let text = ''
    const writer = createTextWriter((chunk) => {
      text += chunk
    })
    switch (kind) {
      case 'send':
        renderSendResponse(writer, document as SendMessageResponse, context)
        break
      case 'task':
      case 'cancel':
        renderTask(writer, document as Task, context)
        break
      case 'tasks':
        renderTaskList(writer, document as ListTasksResponse, context)
        break
      case 'push-config':
        renderPushConfig(writer, document as TaskPushNotificationConfig)
        break
      case 'push-configs':
        renderPushConfigList(writer, document as ListTaskPushNotificationConfigsResponse)
        break
      case 'push-config-deleted':
        renderPushConfigDeleted(writer, document as ResultDocuments['push-config-deleted'])
        break
      case 'card':
        renderCard(writer, document as AgentCard, context)
        break
    }
    writer.closeBlock()
    return text
  }
}

const factsOfTask = (task: Task): TaskFacts => ({
  taskId: task.id,
  contextId: task.contextId,
  state: task.status?.state,
})

function noteFacts(facts: TaskFacts, response: StreamResponse): void {
  if ('task' in response && response.task) Object.assign(facts, factsOfTask(response.task))
  else if ('statusUpdate' in response && response.statusUpdate) {
    facts.taskId = response.statusUpdate.taskId
    facts.state = response.statusUpdate.status?.state
  }
}

/** The warning a task's outcome earns: it failed, was rejected or canceled, or waits for the caller. */
function outcomeWarning({ taskId, state }: TaskFacts): string | undefined {
  if (taskId === undefined) return undefined
  switch (state) {
    case 'TASK_STATE_FAILED':
    case 'TASK_STATE_REJECTED':
    case 'TASK_STATE_CANCELED':
      return `task ${taskId} ended ${stateLabel(state)}`
    case 'TASK_STATE_INPUT_REQUIRED':
      return `task ${taskId} is waiting for your input (INPUT_REQUIRED): answer it with --task-id ${taskId}`
    case 'TASK_STATE_AUTH_REQUIRED':
      return `task ${taskId} is waiting for authorization (AUTH_REQUIRED)`
    default:
      return undefined
  }
}
