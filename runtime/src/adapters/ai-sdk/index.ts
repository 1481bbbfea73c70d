import { jsonSchema, type ModelMessage, type Tool } from 'ai'
import type { Agent } from '../../agent.js'
import { type AdapterOptions, adapterAgent } from '../_agent.js'
import { type TurnFile, type TurnMessage, toTurnMessages } from '../_messages.js'
import type { TurnEvent } from '../_turn.js'

/**
 * Serves a Vercel AI SDK agent (a `ToolLoopAgent`, or anything with the SDK's `Agent` interface) over A2A:
 *
 * ```ts
 * export default fromAiSdk(new ToolLoopAgent({ model, instructions, tools }))
 * ```
 *
 * Each message runs the agent on the conversation of its context (`ctx.conversation()`); streamed text becomes one
 * artifact sent in chunks, tool calls `working` updates, a call of `askUserTool()` an `input-required` question the
 * next message answers. Cancel and deadlines abort the model call.
 */
export function fromAiSdk(agent: AiSdkAgent, options: AiSdkAdapterOptions = {}): Agent {
  const tools = agent.tools ?? {}
  const toolFacts = Object.entries(tools)
    .filter(([, tool]) => !isAskUser(tool))
    .map(([name, tool]) => ({
      name,
      description: (tool as { description?: unknown }).description as string | undefined,
    }))
  return adapterAgent({
    framework: 'AI SDK',
    facts: { ...(agent.id !== undefined && { name: agent.id }), tools: toolFacts },
    options,
    async *events(ctx) {
      const conversation = await ctx.conversation(options.conversation)
      const result = await agent.stream({
        messages: toModelMessages(toTurnMessages(conversation)),
        abortSignal: ctx.signal,
      })
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') yield { type: 'text', text: part.text ?? '' }
        else if (part.type === 'tool-call') yield toolEvent(part, tools)
        else if (part.type === 'error') throw part.error
        else if (part.type === 'abort') return
      }
    },
  })
}

/** The part of the AI SDK's `Agent` interface the adapter uses (AI SDK 6 and 7 both have it). */
export interface AiSdkAgent {
  readonly id?: string | undefined
  readonly tools?: Record<string, unknown>
  stream(options: {
    messages: ModelMessage[]
    abortSignal?: AbortSignal
  }): PromiseLike<{ fullStream: AsyncIterable<AiSdkStreamPart> }>
}

/** The stream parts the adapter reads; the others (steps, reasoning, sources) pass by. */
interface AiSdkStreamPart {
  type: string
  text?: string
  toolName?: string
  input?: unknown
  error?: unknown
}

/** How `fromAiSdk` serves the agent: its card, the conversation a run gets, its time limit, failure reasons. */
export type AiSdkAdapterOptions = AdapterOptions

const ASK_USER = Symbol.for('a2a-runtime.askUser')

/**
 * A tool for the agent's `tools` through which the model asks the user something: the run stops, the task asks
 * the question (`input-required`), and the user's answer, the next message to the task, continues the
 * conversation. It has no `execute`, so the AI SDK ends the run when the model calls it.
 */
export function askUserTool(
  description = 'Ask the user a question and wait for the answer. Use it when you need something only the user can tell you.',
): Tool<{ question: string }, never> {
  const tool = {
    description,
    inputSchema: jsonSchema<{ question: string }>({
      type: 'object',
      properties: { question: { type: 'string', description: 'The question, as the user will read it' } },
      required: ['question'],
      additionalProperties: false,
    }),
  }
  Object.defineProperty(tool, ASK_USER, { value: true })
  return tool as Tool<{ question: string }, never>
}

const isAskUser = (tool: unknown): boolean => typeof tool === 'object' && tool !== null && ASK_USER in tool

function toolEvent(part: AiSdkStreamPart, tools: Record<string, unknown>): TurnEvent {
  const toolName = part.toolName ?? 'tool'
  if (isAskUser(tools[toolName])) {
    const question = (part.input as { question?: unknown } | undefined)?.question
    return {
      type: 'ask',
      question: typeof question === 'string' && question.trim() !== '' ? question : 'Could you tell me more?',
    }
  }
  return { type: 'tool-call', toolName, input: part.input }
}

function toModelMessages(turns: TurnMessage[]): ModelMessage[] {
  return turns.map((turn): ModelMessage => {
    if (turn.role === 'assistant') {
      // Models take files from the user only: an agent's file is named in its text.
      const named = turn.files.map((file) => `[file${file.filename ? ` ${file.filename}` : ''}]`)
      return { role: 'assistant', content: [turn.text, ...named].filter(Boolean).join('\n') }
    }
    const content: Exclude<Extract<ModelMessage, { role: 'user' }>['content'], string> = []
    if (turn.text !== '' || turn.files.length === 0) content.push({ type: 'text', text: turn.text })
    for (const file of turn.files) content.push(filePart(file))
    return { role: 'user', content }
  })
}

const filePart = (file: TurnFile) => ({
  type: 'file' as const,
  data: file.data,
  mediaType: file.mediaType,
  ...(file.filename !== undefined && { filename: file.filename }),
})
