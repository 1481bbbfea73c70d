// Models that answer at once with a fixed number of text chunks: the frameworks' own mock (the AI SDK's
// MockLanguageModelV4, which Mastra takes too) and a LangChain chat model that streams its tokens as a provider's
// model does. They cost next to nothing, so a benchmark on them measures what is around the model.
import { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { AIMessageChunk } from '@langchain/core/messages'
import { ChatGenerationChunk } from '@langchain/core/outputs'
import { MockLanguageModelV4 } from 'ai/test'

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
}

/** The AI SDK's mock model streaming `chunks` text deltas ("w0 ", "w1 ", …), then a stop. */
export function mockLanguageModel(chunks) {
  return new MockLanguageModelV4({
    doStream: async () => ({
      stream: new ReadableStream({
        start(controller) {
          controller.enqueue({ type: 'text-start', id: 't' })
          for (let i = 0; i < chunks; i++) controller.enqueue({ type: 'text-delta', id: 't', delta: `w${i} ` })
          controller.enqueue({ type: 'text-end', id: 't' })
          controller.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage })
          controller.close()
        },
      }),
    }),
  })
}

/**
 * A LangChain chat model streaming `chunks` tokens, each reported to the run's callbacks (LangGraph's `messages` mode).
 */
export function fakeChatModel(chunks) {
  class FakeChatModel extends BaseChatModel {
    _llmType() {
      return 'bench'
    }
    bindTools() {
      return this
    }
    async _generate(messages, options, runManager) {
      let whole
      for await (const chunk of this._streamResponseChunks(messages, options, runManager))
        whole = whole ? whole.concat(chunk) : chunk
      return { generations: [whole] }
    }
    async *_streamResponseChunks(_messages, _options, runManager) {
      for (let i = 0; i < chunks; i++) {
        const text = `w${i} `
        const chunk = new ChatGenerationChunk({ text, message: new AIMessageChunk({ content: text }) })
        yield chunk
        await runManager?.handleLLMNewToken(text, undefined, undefined, undefined, undefined, { chunk })
      }
    }
  }
  return new FakeChatModel({})
}
