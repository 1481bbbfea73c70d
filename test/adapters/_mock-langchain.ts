import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager'
import { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { AIMessageChunk, type BaseMessage } from '@langchain/core/messages'
import { ChatGenerationChunk, type ChatResult } from '@langchain/core/outputs'

/** What the fake model does on one call: stream text, call a tool, fail, or hang until the call is aborted. */
export type ModelStep =
  | { text: string[] }
  | { tool: string; input: Record<string, unknown> }
  | { fail: Error }
  | { hang: true; text?: string[] }

/** A provider failure as a LangChain provider reports one: a class, an HTTP status, a message quoting the request. */
export class FakeProviderError extends Error {
  override name = 'AuthenticationError'
  readonly status = 401
}

/**
 * A LangChain chat model scripted per call (the last step repeats), streaming its tokens as a provider's model does
 * (so LangGraph's `messages` stream mode sees each one). `calls` holds the messages of every call; `aborted` counts
 * the calls whose abort signal fired while the model streamed. `bindTools` keeps the script: the script says which
 * tool is called.
 */
export class ScriptedChatModel extends BaseChatModel {
  readonly calls: BaseMessage[][] = []
  aborted = 0
  private next = 0

  constructor(private readonly steps: ModelStep[]) {
    super({})
  }

  _llmType(): string {
    return 'scripted'
  }

  override bindTools(): this {
    return this
  }

  async _generate(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    let whole: ChatGenerationChunk | undefined
    for await (const chunk of this._streamResponseChunks(messages, options, runManager))
      whole = whole ? whole.concat(chunk) : chunk
    return { generations: whole ? [whole] : [] }
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    this.calls.push(messages)
    const step = this.steps[Math.min(this.next++, this.steps.length - 1)]!
    if ('fail' in step) throw step.fail
    for (const text of 'text' in step ? (step.text ?? []) : []) {
      await new Promise((resolve) => setTimeout(resolve, 2))
      const chunk = new ChatGenerationChunk({ text, message: new AIMessageChunk({ content: text }) })
      yield chunk
      await runManager?.handleLLMNewToken(text, undefined, undefined, undefined, undefined, { chunk })
    }
    if ('hang' in step) {
      const signal = options.signal
      await new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve()
        signal?.addEventListener('abort', () => resolve(), { once: true })
      })
      this.aborted++
      throw signal?.reason ?? new Error('aborted')
    }
    // The last chunk: a tool call, or none (an empty one, as providers end a stream with one carrying metadata).
    const toolCalls =
      'tool' in step
        ? [
            {
              type: 'tool_call_chunk' as const,
              id: `call-${this.next}`,
              name: step.tool,
              args: JSON.stringify(step.input),
              index: 0,
            },
          ]
        : []
    const chunk = new ChatGenerationChunk({
      text: '',
      message: new AIMessageChunk({ content: '', tool_call_chunks: toolCalls }),
    })
    yield chunk
    await runManager?.handleLLMNewToken('', undefined, undefined, undefined, undefined, { chunk })
  }
}

/** The texts of the messages a model call was given, one line per message: `type: text`. */
export function promptLines(messages: BaseMessage[]): string[] {
  return messages.map((message) => `${message.getType()}: ${message.text}`)
}
