import { MockLanguageModelV4 } from 'ai/test'

type CallOptions = Parameters<MockLanguageModelV4['doStream']>[0]
type StreamPart =
  Awaited<ReturnType<MockLanguageModelV4['doStream']>>['stream'] extends ReadableStream<infer Part> ? Part : never

/** What the mock model does on one call: stream text, call a tool, fail, or hang until the call is aborted. */
export type ModelStep =
  | { text: string[] }
  | { tool: string; input: Record<string, unknown>; text?: string[] }
  | { fail: Error }
  | { hang: true; text?: string[] }

/**
 * A provider failure as the AI SDK's OpenAI-compatible provider reports one: a class, an HTTP status, a message quoting
 * the request.
 */
export class FakeProviderError extends Error {
  override name = 'AI_APICallError'
  readonly statusCode = 401
}

/**
 * The AI SDK's mock language model, scripted: each call takes the next step (the last one repeats). `calls` holds
 * the prompt of every call; `aborted` counts the calls whose abort signal fired while the model streamed.
 */
export function scriptedModel(steps: ModelStep[], options: { chunkDelayMs?: number } = {}) {
  const delay = options.chunkDelayMs ?? 2
  const state = { calls: [] as CallOptions['prompt'][], aborted: 0 }
  let next = 0
  const model = new MockLanguageModelV4({
    doStream: async (call) => {
      state.calls.push(call.prompt)
      const step = steps[Math.min(next++, steps.length - 1)]!
      const signal = call.abortSignal
      const stream = new ReadableStream<StreamPart>({
        async start(controller) {
          const pause = () => new Promise((resolve) => setTimeout(resolve, delay))
          if ('fail' in step) {
            controller.enqueue({ type: 'error', error: step.fail })
            controller.close()
            return
          }
          const text = step.text ?? []
          if (text.length > 0) controller.enqueue({ type: 'text-start', id: 't' })
          for (const delta of text) {
            await pause()
            controller.enqueue({ type: 'text-delta', id: 't', delta })
          }
          if (text.length > 0) controller.enqueue({ type: 'text-end', id: 't' })
          if ('hang' in step) {
            await new Promise<void>((resolve) => {
              if (signal?.aborted) return resolve()
              signal?.addEventListener('abort', () => resolve(), { once: true })
            })
            state.aborted++
            controller.error(signal?.reason ?? new Error('aborted'))
            return
          }
          if ('tool' in step) {
            controller.enqueue({
              type: 'tool-call',
              toolCallId: `call-${next}`,
              toolName: step.tool,
              input: JSON.stringify(step.input),
            })
          }
          controller.enqueue({
            type: 'finish',
            finishReason: { unified: 'tool' in step ? 'tool-calls' : 'stop', raw: undefined },
            usage: {
              inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
              outputTokens: { total: 1, text: 1, reasoning: undefined },
            },
          })
          controller.close()
        },
      })
      return { stream }
    },
  })
  return { model, state }
}

/** The texts of the messages a model call was given, one line per message: `role: text`. */
export function promptLines(prompt: CallOptions['prompt']): string[] {
  return prompt.map((message) => {
    const content =
      typeof message.content === 'string'
        ? message.content
        : message.content.map((part: any) => part.text ?? `[${part.type}]`).join('')
    return `${message.role}: ${content}`
  })
}
