import { messageHeapBytes } from '../_heap-bytes.js'
import type { TaskStore } from '../stores/task-store.js'
import type { Message, Part, Task } from '../types.js'

/** How much of a context's earlier tasks `ctx.conversation()` reads. */
export interface ConversationOptions {
  /**
   * Most bytes (of memory, about their text for text messages) of the earlier tasks' messages: the newest tasks that
   * fit are kept whole, older ones left out. This task's own history always comes whole (bounded by maxTaskBytes).
   * 256 KiB is about 64k tokens of text, a large share of a model's context window.
   * @default 262_144
   */
  maxBytes?: number
  /**
   * Most earlier tasks read.
   * @default 50
   */
  maxTasks?: number
}

const DEFAULT_CONVERSATION_BYTES = 256 * 1024
const DEFAULT_CONVERSATION_TASKS = 50
// The store is read a page at a time, newest first: a conversation of a few turns costs one read.
const PAGE_SIZE = 20

/**
 * The conversation of a task's context, oldest first: each earlier task of the context (same `contextId`) as its
 * history followed by its answer (its artifacts as one agent message, or the agent's final status message when it
 * has no artifact), then this task's history. Reads the store newest first and stops at the first task that does
 * not fit the budget, so what it costs grows with the budget, not with the context.
 */
export async function readConversation(
  store: TaskStore,
  task: Task,
  options: ConversationOptions = {},
  /** Only this owner's tasks of the context (another caller may have named the same context). */
  owner?: string,
): Promise<Message[]> {
  const maxBytes = positive(options.maxBytes, DEFAULT_CONVERSATION_BYTES, 'maxBytes')
  const maxTasks = positive(options.maxTasks, DEFAULT_CONVERSATION_TASKS, 'maxTasks')
  const earlier: Message[][] = []
  let bytes = 0
  let cursor: string | undefined
  reading: do {
    const page = await store.list({
      contextId: task.contextId,
      limit: Math.min(PAGE_SIZE, maxTasks + 1),
      cursor,
      ...(owner !== undefined && { owner }),
    })
    for (const other of page.tasks) {
      if (other.id === task.id) continue
      const messages = turnOf(other)
      let size = 0
      for (const message of messages) size += messageHeapBytes(message)
      if (bytes + size > maxBytes) break reading
      bytes += size
      earlier.push(messages)
      if (earlier.length >= maxTasks) break reading
    }
    cursor = page.nextCursor
  } while (cursor !== undefined)
  const conversation: Message[] = []
  for (let i = earlier.length - 1; i >= 0; i--) conversation.push(...earlier[i]!)
  conversation.push(...task.history)
  return conversation
}

/** An earlier task as messages: what was said, then what the agent answered. */
function turnOf(task: Task): Message[] {
  const messages = [...task.history]
  const answerParts = task.artifacts.flatMap((artifact) => joinedText(artifact.parts))
  if (answerParts.length > 0) {
    messages.push({
      kind: 'message',
      role: 'agent',
      messageId: `${task.id}:artifacts`,
      parts: answerParts,
      taskId: task.id,
      contextId: task.contextId,
    })
  } else {
    const status = task.status.message
    if (status && status.role === 'agent' && !task.history.includes(status)) messages.push(status)
  }
  return messages
}

/** An artifact streamed in chunks holds a text part per chunk: read back as the one text it is. */
function joinedText(parts: Part[]): Part[] {
  if (parts.length < 2) return parts
  const joined: Part[] = []
  for (const part of parts) {
    const last = joined.at(-1)
    if (part.kind === 'text' && last?.kind === 'text' && part.metadata === undefined && last.metadata === undefined) {
      joined[joined.length - 1] = { kind: 'text', text: last.text + part.text }
    } else joined.push(part)
  }
  return joined
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`conversation(): ${name} must be a whole number of at least 1 (got ${value})`)
  return value
}
