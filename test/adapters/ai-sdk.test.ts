import { askUserTool, fromAiSdk } from 'a2a-runtime/ai-sdk'
import { jsonSchema, ToolLoopAgent, tool } from 'ai'
import { describe, expect, it } from 'vitest'
import { nodeServer } from '../runtime/_transports.ts'
import { dialects, sendTurn, streamTurn } from './_clients.ts'
import { adapterContract } from './_contract.ts'
import { FakeProviderError, type ModelStep, promptLines, scriptedModel } from './_mock-ai-sdk.ts'

/**
 * `fromAiSdk`: an AI SDK ToolLoopAgent served over A2A, on a real port, its model the SDK's mock language model
 * scripted per call. Each requirement of the adapter is a test; the streaming ones run against every kind of
 * client (the platform dialect raw, A2A v1.0 and v0.3 through the official SDK clients).
 */

const weather = tool({
  description: 'Current weather in a city',
  inputSchema: jsonSchema<{ city: string }>({
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
  }),
  execute: async ({ city }) => ({ city, temperature: 21 }),
})

async function serve(steps: ModelStep[], options: Parameters<typeof fromAiSdk>[1] = {}) {
  const { model, state } = scriptedModel(steps)
  const agent = new ToolLoopAgent({
    id: 'Weather Helper',
    model,
    instructions: 'You help with the weather.',
    tools: { weather, askUser: askUserTool() },
  })
  const target = await nodeServer.start(fromAiSdk(agent, options))
  return { url: target.url, state, target }
}

describe.each(dialects)('an AI SDK agent asking the user through a %s client', (dialect) => {
  it('asks the user through askUserTool (input-required), and the answer resumes the same task with the question in its conversation', async () => {
    const { url, state } = await serve([
      { tool: 'askUser', input: { question: 'Which city?' } },
      { text: ['Oslo: ', 'sunny.'] },
    ])
    const asked = await streamTurn(dialect, url, 'What is the weather?')
    expect(asked.states.at(-1)).toBe('input-required')
    expect(asked.updates.at(-1)?.parts[0]).toMatchObject({ kind: 'text', text: 'Which city?' })
    const answered = await streamTurn(dialect, url, 'Oslo', { taskId: asked.taskId })
    expect(answered.taskId).toBe(asked.taskId)
    expect(answered.chunks.join('')).toBe('Oslo: sunny.')
    expect(answered.states.at(-1)).toBe('completed')
    expect(promptLines(state.calls[1]!).slice(1)).toEqual([
      'user: What is the weather?',
      'assistant: Which city?',
      'user: Oslo',
    ])
  })
})

describe('an AI SDK agent: its failure reasons, conversation and card', () => {
  it("failureReason gives the client the author's reason for an error it recognises, and the default for others", async () => {
    const recognised = (error: unknown) =>
      error instanceof FakeProviderError ? 'The model refused the key: check OPENAI_API_KEY' : undefined
    const { url } = await serve([{ fail: new FakeProviderError('bad key sk-live-1') }, { fail: new Error('other') }], {
      failureReason: recognised,
    })
    expect((await sendTurn(url, 'one')).status.message.parts[0].text).toBe(
      'The model refused the key: check OPENAI_API_KEY',
    )
    expect((await sendTurn(url, 'two')).status.message.parts[0].text).toBe(
      "The AI SDK model call failed (Error); the server's log has the details",
    )
  })

  it('derives the card from the agent: its id as the name, a skill tagged with its tools (not askUser), their descriptions as examples', async () => {
    const { url } = await serve([{ text: ['hi'] }], { card: { description: 'Weather answers' } })
    const card = await (await fetch(`${url}.well-known/agent-card.json`)).json()
    expect(card.name).toBe('Weather Helper')
    expect(card.description).toBe('Weather answers')
    expect(card.skills).toEqual([
      {
        id: 'weather-helper',
        name: 'Weather Helper',
        description: 'Weather answers',
        tags: ['weather'],
        examples: ['Current weather in a city'],
      },
    ])
  })
})

adapterContract({
  framework: 'AI SDK',
  providerError: (message) => new FakeProviderError(message),
  async serve(steps) {
    const { url, state, target } = await serve(steps)
    return {
      url,
      logger: target.logger,
      aborted: () => state.aborted,
      prompt: (call) => promptLines(state.calls[call]!),
    }
  },
})
