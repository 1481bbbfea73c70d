import { Agent, type AgentConfig } from '@mastra/core/agent'
import { Mastra } from '@mastra/core/mastra'
import { createTool } from '@mastra/core/tools'
import { askUserTool, fromMastra } from 'a2a-runtime/mastra'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { nodeServer } from '../runtime/_transports.ts'
import { dialects, sendTurn, streamTurn } from './_clients.ts'
import { adapterContract } from './_contract.ts'
import { FakeProviderError, type ModelStep, promptLines, scriptedModel } from './_mock-ai-sdk.ts'

/**
 * `fromMastra`: a Mastra agent served over A2A, on a real port, its model the AI SDK's mock language model (Mastra
 * takes AI SDK models) scripted per call. Each requirement of the adapter is a test; the streaming ones run against
 * every kind of client (the platform dialect raw, A2A v1.0 and v0.3 through the official SDK clients).
 */

// Mastra reports some feature usage to its telemetry (PostHog) unless this is set: the tests reach no network.
beforeAll(() => {
  vi.stubEnv('MASTRA_TELEMETRY_DISABLED', '1')
})
afterAll(() => {
  vi.unstubAllEnvs()
})

const weather = createTool({
  id: 'weather',
  description: 'Current weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, temperature: 21 }),
})

/** A tool of the agent's own that asks: it suspends with a message and takes the answer as its one resume field. */
const forecast = createTool({
  id: 'forecast',
  description: 'Forecast for a city',
  inputSchema: z.object({}),
  suspendSchema: z.object({ message: z.string() }),
  resumeSchema: z.object({ city: z.string() }),
  execute: async (_input, context) => {
    const city = context?.agent?.resumeData?.city
    return city ? { city, forecast: 'rain' } : context?.agent?.suspend({ message: 'For which city?' })
  },
})

function weatherAgent(steps: ModelStep[]) {
  const { model, state } = scriptedModel(steps)
  const agent = new Agent({
    id: 'weather-helper',
    name: 'Weather Helper',
    instructions: 'You help with the weather. Keep it short.',
    // The AI SDK 7 mock runs as Mastra's model; only its types differ (Mastra 1.71 bundles an older copy of
    // @ai-sdk/provider 4, whose finish reasons lack 'interrupted').
    model: model as unknown as AgentConfig['model'],
    tools: { weather, forecast, askUser: askUserTool() },
  })
  return { agent, state }
}

/** The agent registered on a Mastra instance (its in-memory storage keeps suspended runs), served. */
async function serve(steps: ModelStep[], options: Parameters<typeof fromMastra>[1] = {}) {
  const { agent, state } = weatherAgent(steps)
  new Mastra({ agents: { weatherHelper: agent }, logger: false })
  const target = await nodeServer.start(fromMastra(agent, options))
  return { url: target.url, state, target }
}

describe.each(dialects)('a Mastra agent asking the user through a %s client', (dialect) => {
  it('asks the user through askUserTool (the run suspends, input-required), and the answer resumes that run in the same task', async () => {
    const { url, state } = await serve([
      { tool: 'askUser', input: { question: 'Which city?' } },
      { text: ['Oslo: ', 'sunny.'] },
    ])
    const asked = await streamTurn(dialect, url, 'What is the weather?')
    expect(asked.states.at(-1)).toBe('input-required')
    expect(asked.updates.at(-1)?.parts[0]).toMatchObject({ kind: 'text', text: 'Which city?' })
    // Asking is not a tool call the client is shown.
    expect(asked.updates.filter((update) => update.state === 'working')).toEqual([])
    const answered = await streamTurn(dialect, url, 'Oslo', { taskId: asked.taskId })
    expect(answered.taskId).toBe(asked.taskId)
    expect(answered.chunks.join('')).toBe('Oslo: sunny.')
    expect(answered.states.at(-1)).toBe('completed')
    // Resumed, not started again: the model gets the suspended run, the answer as the tool's result.
    expect(state.calls).toHaveLength(2)
    expect(promptLines(state.calls[1]!).slice(1, 3)).toEqual(['user: What is the weather?', 'assistant: [tool-call]'])
    expect(JSON.stringify(state.calls[1]!.at(-1))).toContain('{"answer":"Oslo"}')
  })
})

describe('a Mastra agent: suspended runs, conversation and card', () => {
  it("a tool of the agent's own that suspends asks its message, and the answer fills the one field of its resume schema", async () => {
    const { url, state } = await serve([{ tool: 'forecast', input: {} }, { text: ['Rain in Bergen.'] }])
    const asked = await sendTurn(url, 'Forecast?')
    expect(asked.status.state).toBe('input-required')
    expect(asked.status.message.parts[0].text).toBe('For which city?')
    const answered = await sendTurn(url, 'Bergen', { taskId: asked.id })
    expect(answered.status.state).toBe('completed')
    expect(JSON.stringify(state.calls[1]!.at(-1))).toContain('{"city":"Bergen","forecast":"rain"}')
  })

  it('an agent on no Mastra instance keeps no suspended run: the answer starts a new run on the conversation, question included', async () => {
    const { agent, state } = weatherAgent([
      { tool: 'askUser', input: { question: 'Which city?' } },
      { text: ['Oslo: sunny.'] },
    ])
    const target = await nodeServer.start(fromMastra(agent))
    const asked = await sendTurn(target.url, 'What is the weather?')
    expect(asked.status.state).toBe('input-required')
    const answered = await sendTurn(target.url, 'Oslo', { taskId: asked.id })
    expect(answered.status.state).toBe('completed')
    expect(answered.artifacts[0].parts.map((part: any) => part.text).join('')).toBe('Oslo: sunny.')
    expect(promptLines(state.calls[1]!).slice(1)).toEqual([
      'user: What is the weather?',
      'assistant: Which city?',
      'user: Oslo',
    ])
    expect(target.logger.text('warn')).toContain('no longer suspended')
  })

  it('derives the card from the agent: its name, the first sentence of its instructions, a skill tagged with its tools (not askUser)', async () => {
    const { url } = await serve([{ text: ['hi'] }])
    const card = await (await fetch(`${url}.well-known/agent-card.json`)).json()
    expect(card.name).toBe('Weather Helper')
    expect(card.description).toBe('You help with the weather.')
    expect(card.skills).toEqual([
      {
        id: 'weather-helper',
        name: 'Weather Helper',
        description: 'You help with the weather.',
        tags: ['weather', 'forecast'],
        examples: ['Current weather in a city', 'Forecast for a city'],
      },
    ])
  })

  it('the card option overrides what is derived', async () => {
    const { url } = await serve([{ text: ['hi'] }], { card: { name: 'Forecasts', description: 'Weather answers' } })
    const card = await (await fetch(`${url}.well-known/agent-card.json`)).json()
    expect(card.name).toBe('Forecasts')
    expect(card.description).toBe('Weather answers')
    expect(card.skills[0]).toMatchObject({
      id: 'forecasts',
      name: 'Forecasts',
      description: 'Weather answers',
      tags: ['weather', 'forecast'],
    })
  })
})

adapterContract({
  framework: 'Mastra',
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
