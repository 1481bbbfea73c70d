import { createTool } from '@mastra/core/tools'
import type { Agent, ExecutionContext } from '../../agent.js'
import { type AdapterOptions, adapterAgent } from '../_agent.js'
import { type TurnMessage, toTurnMessages } from '../_messages.js'
import type { TurnEvent } from '../_turn.js'

/**
 * Serves a Mastra agent over A2A:
 *
 * ```ts
 * export default fromMastra(new Agent({ id, name, instructions, model, tools }))
 * ```
 *
 * Each message runs the agent on the conversation of its context (`ctx.conversation()`); streamed text becomes one
 * artifact sent in chunks, tool calls `working` updates, a tool that suspends (`askUserTool()`, or any tool calling
 * `suspend({ question })` or `suspend({ message })`) an `input-required` question whose answer, the next message,
 * resumes the suspended run. Cancel and deadlines abort the model call. Mastra memory, if the agent has it, would
 * repeat the conversation the adapter already gives: leave it off.
 */
export function fromMastra(agent: MastraAgent, options: MastraAdapterOptions = {}): Agent {
  const { instructions, tools: configured } = codeDefaults(agent)
  const tools = typeof configured === 'object' && configured !== null ? (configured as Record<string, unknown>) : {}
  const toolFacts = Object.entries(tools)
    .filter(([, tool]) => !isAskUser(tool))
    .map(([name, tool]) => ({
      name,
      description: (tool as { description?: unknown }).description as string | undefined,
    }))
  return adapterAgent({
    framework: 'Mastra',
    // A system prompt is no public description: its first sentence at most.
    facts: {
      name: agent.name || agent.id,
      description:
        agent.getDescription() ||
        (typeof instructions === 'string' ? instructions.split(/(?<=[.!?])\s/)[0] : undefined),
      tools: toolFacts,
    },
    options,
    async *events(ctx) {
      const suspended = suspendedRun(ctx)
      const run = suspended ? await resume(agent, ctx, suspended) : undefined
      const output =
        run ??
        (await agent.stream(toMastraMessages(toTurnMessages(await ctx.conversation(options.conversation))), {
          abortSignal: ctx.signal,
        }))
      for await (const chunk of output.fullStream) {
        const payload = (chunk.payload ?? {}) as MastraPayload
        if (chunk.type === 'text-delta') yield { type: 'text', text: payload.text ?? '' }
        else if (chunk.type === 'tool-call' && !isAskUser(tools[payload.toolName ?? '']))
          yield { type: 'tool-call', toolName: payload.toolName ?? 'tool', input: payload.args }
        else if (chunk.type === 'tool-call-suspended') yield askEvent(output.runId, payload)
        else if (chunk.type === 'error') throw payload.error
        // Mastra ends a failed step with a finish chunk: never let one pass as an empty answer.
        else if (chunk.type === 'finish' && payload.stepResult?.reason === 'error')
          throw new Error('The Mastra run ended with an error')
        else if (chunk.type === 'abort') return
      }
    },
  })
}

/** The part of Mastra's `Agent` the adapter uses (Mastra 1.x). */
export interface MastraAgent {
  readonly id: string
  readonly name: string
  getDescription(): string
  stream(messages: MastraMessage[], options: { abortSignal?: AbortSignal }): PromiseLike<MastraRun>
  resumeStream(
    resumeData: Record<string, string>,
    options: { runId: string; toolCallId?: string; abortSignal?: AbortSignal },
  ): PromiseLike<MastraRun>
}

interface MastraRun {
  runId: string
  fullStream: AsyncIterable<{ type: string; payload?: unknown }>
}

/** The payload fields the adapter reads; the other chunks (steps, reasoning, sources) pass by. */
interface MastraPayload {
  text?: string
  toolName?: string
  toolCallId?: string
  args?: unknown
  suspendPayload?: unknown
  resumeSchema?: string
  error?: unknown
  stepResult?: { reason?: string }
}

type MastraMessage =
  | { role: 'assistant'; content: string }
  | {
      role: 'user'
      content: Array<
        { type: 'text'; text: string } | { type: 'file'; data: string | URL; mediaType: string; filename?: string }
      >
    }

/** How `fromMastra` serves the agent: its card, the conversation a run gets, its time limit, failure reasons. */
export type MastraAdapterOptions = AdapterOptions

const ASK_USER = Symbol.for('a2a-runtime.askUser')

/**
 * A tool for the agent's `tools` through which the model asks the user something: it suspends the run with the
 * question (the task goes `input-required`), and the user's answer, the next message to the task, resumes it as
 * the tool's result. Resuming needs the suspended run kept: the agent registered on a `Mastra` instance (its
 * storage, in memory by default, keeps it). Without one the answer starts a new run on the conversation instead.
 */
export function askUserTool(
  description = 'Ask the user a question and wait for the answer. Use it when you need something only the user can tell you.',
) {
  const question = {
    type: 'object' as const,
    properties: { question: { type: 'string' as const } },
    required: ['question'],
  }
  const tool = createTool({
    id: 'askUser',
    description,
    inputSchema: question,
    suspendSchema: question,
    resumeSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
    execute: async (input, context) => {
      const answer = (context?.agent?.resumeData as { answer?: unknown } | undefined)?.answer
      return typeof answer === 'string'
        ? { answer }
        : context?.agent?.suspend({ question: (input as { question: string }).question })
    },
  })
  Object.defineProperty(tool, ASK_USER, { value: true })
  return tool
}

const isAskUser = (tool: unknown): boolean => typeof tool === 'object' && tool !== null && ASK_USER in tool

/** Where a suspended run waits, and the field of its resume data the answer fills: kept on the question's metadata. */
type SuspendedRun = { runId: string; toolCallId?: string; answerField: string }

function askEvent(runId: string, payload: MastraPayload): TurnEvent {
  const asked = payload.suspendPayload as { question?: unknown; message?: unknown } | undefined
  const question = [asked?.question, asked?.message].find(
    (text): text is string => typeof text === 'string' && text.trim() !== '',
  )
  const run: SuspendedRun = {
    runId,
    answerField: answerField(payload.resumeSchema),
    ...(payload.toolCallId && { toolCallId: payload.toolCallId }),
  }
  return { type: 'ask', question: question ?? 'Could you tell me more?', metadata: { mastra: run } }
}

/** The answer fills the one field of the tool's resume schema (`answer` when it has none or several). */
function answerField(resumeSchema: string | undefined): string {
  try {
    const fields = Object.keys((JSON.parse(resumeSchema || '{}') as { properties?: object }).properties ?? {})
    return fields.length === 1 ? fields[0]! : 'answer'
  } catch {
    return 'answer'
  }
}

/** The run the task's last question suspended (a task resumes only from its question: no server-side map). */
function suspendedRun(ctx: ExecutionContext): SuspendedRun | undefined {
  const question = ctx.history.slice(0, -1).findLast((message) => message.role === 'agent')
  const run = question?.parts.find((part) => part.metadata?.mastra)?.metadata?.mastra as SuspendedRun | undefined
  return typeof run?.runId === 'string' ? run : undefined
}

/** Resumes the suspended run with the answer, or nothing when Mastra no longer has it (no storage, a restart). */
async function resume(agent: MastraAgent, ctx: ExecutionContext, run: SuspendedRun): Promise<MastraRun | undefined> {
  try {
    return await agent.resumeStream(
      { [run.answerField]: ctx.text },
      { runId: run.runId, toolCallId: run.toolCallId, abortSignal: ctx.signal },
    )
  } catch (error) {
    if ((error as { id?: unknown }).id !== 'AGENT_RESUME_NO_SNAPSHOT_FOUND') throw error
    ctx.logger.warn(
      `Mastra: run ${run.runId} of task ${ctx.taskId} is no longer suspended; the answer starts a new run on the conversation`,
    )
    return undefined
  }
}

/**
 * The instructions and tools the agent was built with, for the card (and to know `askUserTool()` by). Mastra lists
 * tools only asynchronously (`listTools()`) and the card is made as the server starts, so they are read from the
 * agent's code defaults, an internal of Mastra 1.x: without it (or for tools and instructions given as functions)
 * the card lists no tools.
 */
function codeDefaults(agent: MastraAgent): { instructions?: unknown; tools?: unknown } {
  const read = (agent as { __getOverridableFields?: () => { instructions?: unknown; tools?: unknown } })
    .__getOverridableFields
  return typeof read === 'function' ? read.call(agent) : {}
}

function toMastraMessages(turns: TurnMessage[]): MastraMessage[] {
  return turns.map((turn): MastraMessage => {
    if (turn.role === 'assistant') {
      // Models take files from the user only: an agent's file is named in its text.
      const named = turn.files.map((file) => `[file${file.filename ? ` ${file.filename}` : ''}]`)
      return { role: 'assistant', content: [turn.text, ...named].filter(Boolean).join('\n') }
    }
    const content: Extract<MastraMessage, { role: 'user' }>['content'] = []
    if (turn.text !== '' || turn.files.length === 0) content.push({ type: 'text', text: turn.text })
    for (const file of turn.files) content.push({ type: 'file', ...file })
    return { role: 'user', content }
  })
}
