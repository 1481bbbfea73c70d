import type { AgentCoreRequest, ExecutionContext } from '../agent.js'
import type { Logger } from '../logger.js'
import type { TaskStore } from '../stores/task-store.js'
import type { Message, Principal, Task } from '../types.js'
import { type ConversationOptions, readConversation } from './_conversation.js'
import { newId } from './_ids.js'
import type { TaskRun } from './_task-run.js'

/** What the agent sees of one turn. A class, so each turn allocates one small object with a shared shape. */
export class RunContext implements ExecutionContext {
  readonly parts: Message['parts']
  readonly text: string
  readonly taskId: string
  readonly contextId: string
  readonly history: readonly Message[]
  readonly agentCore: AgentCoreRequest | undefined
  readonly #run: TaskRun
  readonly #store: TaskStore

  constructor(
    run: TaskRun,
    readonly message: Message,
    store: TaskStore,
    readonly logger: Logger,
    readonly principal: Principal | undefined,
  ) {
    this.#run = run
    this.#store = store
    this.parts = message.parts
    this.text = joinText(message)
    this.taskId = run.id
    this.contextId = run.contextId
    this.history = run.task.history
    this.agentCore = run.agentCore
  }

  get signal(): AbortSignal {
    return this.#run.signal
  }

  conversation(options?: ConversationOptions): Promise<Message[]> {
    return readConversation(this.#store, this.#run.task, options, this.#run.owner)
  }
}

function joinText(message: Message | undefined): string {
  if (!message) return ''
  let text = ''
  for (const part of message.parts) if (part.kind === 'text') text += part.text
  return text
}

/** Whether a message says anything in text (a status message that holds the answer, say). */
export const hasText = (message: Message | undefined): boolean => joinText(message).trim().length > 0

/** The message a cancel hook sees: the task's last user message (an empty one when it has none). */
export function lastUserMessage(task: Task): Message {
  for (let i = task.history.length - 1; i >= 0; i--) {
    const message = task.history[i]!
    if (message.role === 'user') return message
  }
  return { kind: 'message', messageId: newId(), role: 'user', parts: [], contextId: task.contextId, taskId: task.id }
}
