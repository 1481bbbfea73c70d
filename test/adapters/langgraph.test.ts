import { AIMessage } from '@langchain/core/messages'
import { tool } from '@langchain/core/tools'
import { END, interrupt, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph'
import { createReactAgent } from '@langchain/langgraph/prebuilt'
import { fromLangGraph } from 'a2a-runtime/langgraph'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { nodeServer } from '../runtime/_transports.ts'
import { dialects, sendTurn, streamTurn } from './_clients.ts'
import { adapterContract } from './_contract.ts'
import { FakeProviderError, type ModelStep, promptLines, ScriptedChatModel } from './_mock-langchain.ts'

/**
 * `fromLangGraph`: a LangGraph.js graph served over A2A, on a real port. Most tests run a prebuilt ReAct agent
 * (`createReactAgent`) whose model is a LangChain chat model scripted per call; the interrupt tests also run a
 * hand-written `StateGraph`. Each requirement of the adapter is a test; the streaming ones run against every kind
 * of client (the platform dialect raw, A2A v1.0 and v0.3 through the official SDK clients).
 */

const weather = tool(async ({ city }) => JSON.stringify({ city, temperature: 21 }), {
  name: 'weather',
  description: 'Current weather in a city',
  schema: z.object({ city: z.string() }),
})

// Asking the user, the LangGraph way: the tool interrupts the run, and the user's answer is what it returns.
const askUser = tool(async ({ question }) => String(interrupt({ question })), {
  name: 'ask_user',
  description: 'Ask the user a question',
  schema: z.object({ question: z.string() }),
})

async function serve(steps: ModelStep[], options: Parameters<typeof fromLangGraph>[1] = {}) {
  const model = new ScriptedChatModel(steps)
  const graph = createReactAgent({
    llm: model,
    tools: [weather, askUser],
    name: 'Weather Helper',
    prompt: 'You help with the weather.',
    checkpointer: new MemorySaver(),
  })
  const target = await nodeServer.start(fromLangGraph(graph, options))
  return { url: target.url, model, target }
}

/** A graph of one node that asks the user (`interrupt(value)`) and answers with what the user said. */
function askingGraph(value: unknown, options: { checkpointer?: MemorySaver } = {}) {
  const ask = () => ({ messages: [new AIMessage(`${String(interrupt(value))}: sunny.`)] })
  return new StateGraph(MessagesAnnotation)
    .addNode('ask', ask)
    .addEdge(START, 'ask')
    .addEdge('ask', END)
    .compile(options)
}

describe.each(dialects)('a LangGraph agent asking the user through a %s client', (dialect) => {
  it("asks the user when a tool calls interrupt() (input-required); the answer resumes the same task's run, the tool returning it", async () => {
    const { url, model } = await serve([
      { tool: 'ask_user', input: { question: 'Which city?' } },
      { text: ['Oslo: ', 'sunny.'] },
    ])
    const asked = await streamTurn(dialect, url, 'What is the weather?')
    expect(asked.states.at(-1)).toBe('input-required')
    expect(asked.updates.at(-1)?.parts[0]).toMatchObject({ kind: 'text', text: 'Which city?' })
    const answered = await streamTurn(dialect, url, 'Oslo', { taskId: asked.taskId })
    expect(answered.taskId).toBe(asked.taskId)
    expect(answered.chunks.join('')).toBe('Oslo: sunny.')
    expect(answered.states.at(-1)).toBe('completed')
    // The run went on from the interrupt (the thread's state, not a new run): the tool returned the user's answer.
    expect(model.calls).toHaveLength(2)
    expect(promptLines(model.calls[1]!)).toEqual([
      'system: You help with the weather.',
      'human: What is the weather?',
      'ai: ',
      'tool: Oslo',
    ])
  })
})

describe('a LangGraph agent: interrupts, threads, conversation and card', () => {
  it("a node's interrupt() asks the user, and the node resumed with the answer (Command resume) completes the task with it", async () => {
    const target = await nodeServer.start(
      fromLangGraph(
        askingGraph({ message: 'Which city?', choices: ['Oslo', 'Bergen'] }, { checkpointer: new MemorySaver() }),
      ),
    )
    const asked = await sendTurn(target.url, 'What is the weather?')
    expect(asked.status.state).toBe('input-required')
    // An object's `message` is the question; the whole value goes along in the part's metadata.
    expect(asked.status.message.parts[0]).toMatchObject({
      kind: 'text',
      text: 'Which city?',
      metadata: { interrupt: { message: 'Which city?', choices: ['Oslo', 'Bergen'] } },
    })
    const answered = await sendTurn(target.url, 'Bergen', { taskId: asked.id, contextId: asked.contextId })
    expect(answered.id).toBe(asked.id)
    expect(answered.status.state).toBe('completed')
    expect(answered.artifacts.flatMap((artifact: any) => artifact.parts.map((part: any) => part.text)).join('')).toBe(
      'Bergen: sunny.',
    )
  })

  it('parallel nodes that interrupt are asked one at a time, each answer resuming the node that asked', async () => {
    const city = () => ({ messages: [new AIMessage(`City: ${String(interrupt('Which city?'))}.`)] })
    const day = () => ({ messages: [new AIMessage(`Day: ${String(interrupt('Which day?'))}.`)] })
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('city', city)
      .addNode('day', day)
      .addEdge(START, 'city')
      .addEdge(START, 'day')
      .addEdge('city', END)
      .addEdge('day', END)
      .compile({ checkpointer: new MemorySaver() })
    const { url } = await nodeServer.start(fromLangGraph(graph))
    const first = await sendTurn(url, 'Plan a trip')
    expect(first.status.message.parts[0].text).toBe('Which city?')
    const second = await sendTurn(url, 'Oslo', { taskId: first.id, contextId: first.contextId })
    expect(second.status).toMatchObject({ state: 'input-required', message: { parts: [{ text: 'Which day?' }] } })
    const done = await sendTurn(url, 'Monday', { taskId: first.id, contextId: first.contextId })
    expect(done.status.state).toBe('completed')
    expect(done.artifacts.map((artifact: any) => artifact.parts.map((part: any) => part.text).join(''))).toEqual([
      'City: Oslo.',
      'Day: Monday.',
    ])
  })

  it("deletes a task's thread from the checkpointer once the task ends (keeps it while it waits for an answer, and with keepThreads)", async () => {
    const threads = (saver: MemorySaver) => Object.keys(saver.storage)
    const saver = new MemorySaver()
    const target = await nodeServer.start(fromLangGraph(askingGraph('Which city?', { checkpointer: saver })))
    const asked = await sendTurn(target.url, 'Weather?')
    expect(threads(saver)).toEqual([asked.id])
    const answered = await sendTurn(target.url, 'Oslo', { taskId: asked.id })
    expect(answered.status.state).toBe('completed')
    expect(threads(saver)).toEqual([])

    const keeping = new MemorySaver()
    const kept = await nodeServer.start(
      fromLangGraph(askingGraph('Which city?', { checkpointer: keeping }), { keepThreads: true }),
    )
    const task = await sendTurn(kept.url, 'Weather?')
    await sendTurn(kept.url, 'Oslo', { taskId: task.id })
    expect(threads(keeping)).toEqual([task.id])
  })

  it('an interrupt in a graph without a checkpointer fails the task (LangGraph refuses it), logged in full', async () => {
    const target = await nodeServer.start(fromLangGraph(askingGraph('Which city?')))
    const task = await sendTurn(target.url, 'What is the weather?')
    expect(task.status.state).toBe('failed')
    expect(task.status.message.parts[0].text).toBe(
      "The LangGraph model call failed (GraphValueError); the server's log has the details",
    )
    expect(target.logger.text('error')).toContain('No checkpointer set')
  })

  it("derives the card from the graph: its name, a skill tagged with the ReAct agent's tools, their descriptions as examples", async () => {
    const { url } = await serve([{ text: ['hi'] }], { card: { description: 'Weather answers' } })
    const card = await (await fetch(`${url}.well-known/agent-card.json`)).json()
    expect(card.name).toBe('Weather Helper')
    expect(card.description).toBe('Weather answers')
    expect(card.skills).toEqual([
      {
        id: 'weather-helper',
        name: 'Weather Helper',
        description: 'Weather answers',
        tags: ['weather', 'ask_user'],
        examples: ['Current weather in a city', 'Ask the user a question'],
      },
    ])
  })

  it('a graph with no name and no tools gets the default card, and the card option names it', async () => {
    const unnamed = await nodeServer.start(fromLangGraph(askingGraph('?')))
    const card = await (await fetch(`${unnamed.url}.well-known/agent-card.json`)).json()
    expect(card).toMatchObject({ name: 'LangGraph agent', description: 'An agent built with LangGraph' })
    expect(card.skills[0].tags).toEqual([])
    const named = await nodeServer.start(fromLangGraph(askingGraph('?'), { card: { name: 'Forecaster' } }))
    expect((await (await fetch(`${named.url}.well-known/agent-card.json`)).json()).name).toBe('Forecaster')
  })
})

adapterContract({
  framework: 'LangGraph',
  providerError: (message) => new FakeProviderError(message),
  async serve(steps) {
    const { url, model, target } = await serve(steps)
    return {
      url,
      logger: target.logger,
      aborted: () => model.aborted,
      prompt: (call) => promptLines(model.calls[call]!),
    }
  },
})
