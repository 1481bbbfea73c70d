import { Command } from '@langchain/langgraph'
import type { Agent } from '../../agent.js'
import { type AdapterOptions, adapterAgent } from '../_agent.js'
import { type TurnMessage, toTurnMessages } from '../_messages.js'
import type { TurnEvent } from '../_turn.js'

/**
 * Serves a compiled LangGraph.js graph over A2A: a `createReactAgent`, or any graph whose state has a `messages`
 * channel:
 *
 * ```ts
 * export default fromLangGraph(createReactAgent({ llm, tools, checkpointer: new MemorySaver() }))
 * ```
 *
 * Each task is a thread of the graph (`thread_id` is the task's id). A new task runs the graph on the conversation
 * of its context (`ctx.conversation()`); the AI messages' streamed tokens become one artifact sent in chunks, the
 * model's tool calls `working` updates. A node or tool that calls `interrupt(question)` asks the user
 * (`input-required`), and the next message to the task resumes the thread with `new Command({ resume: text })`:
 * interrupts need the graph compiled with a checkpointer (`checkpointer: new MemorySaver()` or a persistent one),
 * which also keeps the thread's state while the task waits. Cancel and deadlines abort the run.
 *
 * A model call whose tokens are not the answer (a router, a grader) is left out of the answer with the tag
 * `nostream` (`model.withConfig({ tags: ['nostream'] })`), as LangGraph's `messages` stream mode does.
 */
export function fromLangGraph(graph: LangGraphAgent, options: LangGraphAdapterOptions = {}): Agent {
  return adapterAgent({
    framework: 'LangGraph',
    facts: {
      // 'LangGraph' is the name older versions gave every graph: no name of this agent.
      ...(graph.name && graph.name !== 'LangGraph' && { name: graph.name }),
      ...(graph.description && { description: graph.description }),
      tools: reactAgentTools(graph),
    },
    options,
    async *events(ctx) {
      const config = { ...options.config, configurable: { ...options.config?.configurable, thread_id: ctx.taskId } }
      const pending = await pendingInterrupt(graph, config)
      // The answer goes to the interrupt that was asked, by its id: another one pending (parallel nodes) is asked next.
      const input = pending
        ? new Command({ resume: pending.id ? { [pending.id]: ctx.text } : ctx.text })
        : { messages: toLangChainMessages(toTurnMessages(await ctx.conversation(options.conversation))) }
      // `messages` streams the models' tokens; `updates` has each node's whole messages (tool calls with their
      // parsed input) and the run's interrupts.
      // The thread is the task's while it runs or waits for an answer; then the task holds the conversation, and a
      // thread kept for every task ended would grow the checkpointer (a MemorySaver: the process) without bound.
      let waiting = false
      try {
        const stream = await graph.stream(input, { ...config, streamMode: ['messages', 'updates'], signal: ctx.signal })
        let interrupted = false
        for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
          if (mode === 'messages') {
            const [message] = chunk as [LangChainMessage]
            // Tool results and the user's messages pass through the stream too: only what the AI says is the answer.
            if (message.getType() === 'ai') yield { type: 'text', text: message.text }
            continue
          }
          const updates = chunk as Record<string, unknown>
          if ('__interrupt__' in updates) interrupted = true
          else yield* toolCalls(updates)
        }
        // Asked from the thread's saved state, as the answer will be matched to it: the same interrupt, first of those
        // pending.
        const asked = interrupted ? await pendingInterrupt(graph, config) : undefined
        if (asked) {
          waiting = true
          yield askEvent(asked.value)
        }
      } finally {
        if (!waiting && !options.keepThreads) await forgetThread(graph, ctx.taskId, ctx.logger)
      }
    },
  })
}

/** The part of a compiled LangGraph.js graph (`CompiledStateGraph`, `Pregel`) the adapter uses. */
export interface LangGraphAgent {
  readonly name?: string | undefined
  readonly description?: string | undefined
  readonly checkpointer?: unknown
  /** A prebuilt ReAct agent's `tools` node holds its tools: the card lists them. */
  readonly nodes?: Record<string, { bound?: unknown }>
  stream(input: unknown, options: Record<string, unknown>): PromiseLike<AsyncIterable<unknown>>
  getState(
    config: Record<string, unknown>,
  ): PromiseLike<{ tasks: ReadonlyArray<{ interrupts: readonly LangGraphInterrupt[]; result?: unknown }> }>
}

interface LangGraphInterrupt {
  id?: string | undefined
  value?: unknown
}

/** How `fromLangGraph` serves the graph: the adapters' options, the threads it keeps and the run's config. */
export interface LangGraphAdapterOptions extends AdapterOptions {
  /**
   * Keep each task's thread in the checkpointer once the task has ended. Off, it is deleted, as the task holds the
   * conversation; kept, threads grow the checkpointer without bound.
   * @default false
   */
  keepThreads?: boolean
  /**
   * More of the run's config (`recursionLimit`, `context`, `configurable` entries); `thread_id` is always the task's
   * id.
   */
  config?: {
    /** Entries of `config.configurable` for every run, beside the `thread_id` the adapter sets. */
    configurable?: Record<string, unknown>
    [key: string]: unknown
  }
}

/** What the adapter reads of a LangChain message (`AIMessageChunk`, `ToolMessage` …). */
interface LangChainMessage {
  getType(): string
  readonly text: string
  readonly tool_calls?: Array<{ name: string; args?: unknown }>
}

function reactAgentTools(graph: LangGraphAgent): Array<{ name: string; description?: string }> {
  const tools = (graph.nodes?.tools?.bound as { tools?: unknown } | undefined)?.tools
  if (!Array.isArray(tools)) return []
  return tools
    .filter((tool): tool is { name: string; description?: unknown } => typeof tool?.name === 'string')
    .map((tool) => ({
      name: tool.name,
      ...(typeof tool.description === 'string' && { description: tool.description }),
    }))
}

/**
 * The `interrupt()` the task's thread waits on, the first if parallel nodes interrupted: a task that has its result
 * was answered already. Without a checkpointer there is no thread (and LangGraph refuses an interrupt).
 */
async function pendingInterrupt(
  graph: LangGraphAgent,
  config: Record<string, unknown>,
): Promise<LangGraphInterrupt | undefined> {
  if (!graph.checkpointer) return undefined
  const state = await graph.getState(config)
  return state.tasks.flatMap((task) => (task.result === undefined ? task.interrupts : []))[0]
}

/**
 * Deletes a task's thread from the graph's checkpointer, when it has one that can (`BaseCheckpointSaver.deleteThread`).
 */
async function forgetThread(
  graph: LangGraphAgent,
  threadId: string,
  logger: { warn(message: string, detail?: unknown): void },
): Promise<void> {
  const saver = graph.checkpointer as { deleteThread?: (threadId: string) => Promise<void> } | undefined
  if (typeof saver?.deleteThread !== 'function') return
  try {
    await saver.deleteThread(threadId)
  } catch (error) {
    logger.warn(`LangGraph: the thread of task ${threadId} could not be deleted from the checkpointer`, error)
  }
}

/** The model's tool calls in one `updates` chunk (`{ [node]: { messages } }`), as the tools node will run them. */
function* toolCalls(updates: Record<string, unknown>): Generator<TurnEvent> {
  for (const update of Object.values(updates)) {
    const messages = (update as { messages?: unknown } | null)?.messages
    for (const message of Array.isArray(messages) ? messages : [messages]) {
      for (const call of (message as LangChainMessage | undefined)?.tool_calls ?? [])
        yield { type: 'tool-call', toolName: call.name, input: call.args }
    }
  }
}

/**
 * An interrupt's value as a question: a string, an object's `question` or `message`, else its JSON (an object kept
 * whole in the metadata).
 */
function askEvent(value: unknown): TurnEvent {
  if (typeof value === 'string') return { type: 'ask', question: value }
  const { question, message } = (value ?? {}) as { question?: unknown; message?: unknown }
  const text =
    typeof question === 'string' ? question : typeof message === 'string' ? message : JSON.stringify(value ?? null)
  return {
    type: 'ask',
    question: text,
    ...(value !== null && typeof value === 'object' && { metadata: { interrupt: value } }),
  }
}

/**
 * The conversation as LangChain message objects (the `messages` channel's reducer makes them messages). Files are named
 * in the text: providers take LangChain's file blocks each their own way.
 */
function toLangChainMessages(turns: TurnMessage[]): Array<{ role: 'user' | 'assistant'; content: string }> {
  return turns.map((turn) => {
    const named = turn.files.map((file) => `[file${file.filename ? ` ${file.filename}` : ''}]`)
    return { role: turn.role, content: [turn.text, ...named].filter(Boolean).join('\n') }
  })
}
