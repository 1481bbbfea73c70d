import { askUserTool, fromAiSdk } from 'a2a-runtime/ai-sdk'
import { jsonSchema, ToolLoopAgent, tool } from 'ai'
import { describe, expect, it } from 'vitest'
import { nodeServer } from '../runtime/_transports.ts'
import { dialects, rpc, sendTurn, streamTurn } from './_clients.ts'
import { FakeProviderError, type ModelStep, promptLines, scriptedModel } from './_mock-ai-sdk.ts'

/**
 * `fromAiSdk`: an AI SDK ToolLoopAgent served over A2A, on a real port, its model the SDK's mock language model
 * scripted per call. Each requirement of the adapter is a test; the streaming ones run against every kind of
 * client (the platform dialect raw, A2A v1.0 and v0.3 through the official SDK clients).
 */

const weather = tool({
  description: 'Current weather in a city',
  inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
  execute: async ({ city }) => ({ city, temperature: 21 }),
})

async function serve(steps: ModelStep[], options: Parameters<typeof fromAiSdk>[1] = {}) {
  const { model, state } = scriptedModel(steps)
  const agent = new ToolLoopAgent({ id: 'Weather Helper', model, instructions: 'You help with the weather.', tools: { weather, askUser: askUserTool() } })
  const target = await nodeServer.start(fromAiSdk(agent, options))
  return { url: target.url, state, target }
}

describe.each(dialects)('an AI SDK agent streamed to a %s client', (dialect) => {
  it('sends the streamed text as chunks of one artifact, in order, the last one marked, and completes', async () => {
    const { url } = await serve([{ text: ['The ', 'sky ', 'is ', 'blue.'] }])
    const turn = await streamTurn(dialect, url, 'What colour is the sky?')
    // Each chunk as the model gave it, then an empty one marking the end.
    expect(turn.chunks).toEqual(['The ', 'sky ', 'is ', 'blue.', ''])
    expect(turn.lastChunk).toEqual([false, false, false, false, true])
    expect(turn.states.at(-1)).toBe('completed')
  })

  it('shows a tool call as a working update naming the tool and its input, never as the answer', async () => {
    const { url } = await serve([{ tool: 'weather', input: { city: 'Oslo' } }, { text: ['It is ', '21 degrees.'] }])
    const turn = await streamTurn(dialect, url, 'Weather in Oslo?')
    const toolUpdate = turn.updates.find((update) => update.state === 'working')
    expect(toolUpdate?.parts[0]).toMatchObject({ kind: 'text', text: 'Calling tool weather' })
    expect(toolUpdate?.parts[1]).toMatchObject({ kind: 'data', data: { tool: 'weather', input: { city: 'Oslo' } } })
    expect(turn.chunks.join('')).toBe('It is 21 degrees.')
    expect(turn.states.at(-1)).toBe('completed')
  })

  it('asks the user through askUserTool (input-required), and the answer resumes the same task with the question in its conversation', async () => {
    const { url, state } = await serve([{ tool: 'askUser', input: { question: 'Which city?' } }, { text: ['Oslo: ', 'sunny.'] }])
    const asked = await streamTurn(dialect, url, 'What is the weather?')
    expect(asked.states.at(-1)).toBe('input-required')
    expect(asked.updates.at(-1)?.parts[0]).toMatchObject({ kind: 'text', text: 'Which city?' })
    const answered = await streamTurn(dialect, url, 'Oslo', { taskId: asked.taskId })
    expect(answered.taskId).toBe(asked.taskId)
    expect(answered.chunks.join('')).toBe('Oslo: sunny.')
    expect(answered.states.at(-1)).toBe('completed')
    expect(promptLines(state.calls[1]!).slice(1)).toEqual(['user: What is the weather?', 'assistant: Which city?', 'user: Oslo'])
  })
})

describe('an AI SDK agent over A2A', () => {
  it('cancel mid-stream aborts the model call, and the task ends canceled', async () => {
    const { url, state } = await serve([{ hang: true, text: ['Thinking'] }])
    const running = await sendTurn(url, 'Take your time', {}, { returnImmediately: true })
    await expect.poll(async () => (await rpc(url, 'tasks/get', { id: running.id })).result.artifacts?.length ?? 0).toBeGreaterThan(0)
    const canceled = await rpc(url, 'tasks/cancel', { id: running.id })
    expect(canceled.result.status.state).toBe('canceled')
    await expect.poll(() => state.aborted).toBe(1)
  })

  it('a provider error fails the task with a clean reason (no message, no key, no prompt) and logs it in full', async () => {
    const secret = 'Incorrect API key provided: sk-live-1234 for prompt "my medical history"'
    const { url, target } = await serve([{ fail: new FakeProviderError(secret) }])
    const task = await sendTurn(url, 'my medical history')
    expect(task.status.state).toBe('failed')
    const reason = task.status.message.parts[0].text
    expect(reason).toBe("The AI SDK model call failed (AI_APICallError, HTTP 401); the server's log has the details")
    expect(JSON.stringify(task)).not.toContain('sk-live')
    expect(target.logger.text('error')).toContain(secret)
  })

  it("failureReason gives the client the author's reason for an error it recognises, and the default for others", async () => {
    const recognised = (error: unknown) => (error instanceof FakeProviderError ? 'The model refused the key: check OPENAI_API_KEY' : undefined)
    const { url } = await serve([{ fail: new FakeProviderError('bad key sk-live-1') }, { fail: new Error('other') }], { failureReason: recognised })
    expect((await sendTurn(url, 'one')).status.message.parts[0].text).toBe('The model refused the key: check OPENAI_API_KEY')
    expect((await sendTurn(url, 'two')).status.message.parts[0].text).toBe("The AI SDK model call failed (Error); the server's log has the details")
  })

  it('a second task in the same context gives the model the first one: what the user said and what the agent answered', async () => {
    const { url, state } = await serve([{ text: ['Nice to meet you, ', 'Ada.'] }, { text: ['You are Ada.'] }])
    const first = await sendTurn(url, 'My name is Ada')
    const second = await sendTurn(url, 'What is my name?', { contextId: first.contextId })
    expect(second.status.state).toBe('completed')
    expect(promptLines(state.calls[1]!)).toEqual([
      'system: You help with the weather.',
      'user: My name is Ada',
      'assistant: Nice to meet you, Ada.',
      'user: What is my name?',
    ])
  })

  it('derives the card from the agent: its id as the name, a skill tagged with its tools (not askUser), their descriptions as examples', async () => {
    const { url } = await serve([{ text: ['hi'] }], { card: { description: 'Weather answers' } })
    const card = await (await fetch(`${url}.well-known/agent-card.json`)).json()
    expect(card.name).toBe('Weather Helper')
    expect(card.description).toBe('Weather answers')
    expect(card.skills).toEqual([
      { id: 'weather-helper', name: 'Weather Helper', description: 'Weather answers', tags: ['weather'], examples: ['Current weather in a city'] },
    ])
  })

  it('an answer with no text still completes with an artifact (clients read the result there)', async () => {
    const { url } = await serve([{ text: [] }])
    const task = await sendTurn(url, 'Say nothing')
    expect(task.status.state).toBe('completed')
    expect(task.artifacts).toHaveLength(1)
  })
})
