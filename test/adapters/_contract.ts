import { describe, expect, it } from 'vitest'
import type { CapturedLogger } from '../runtime/_logger.ts'
import { dialects, rpcBody, sendTurn, streamTurn } from './_clients.ts'

/** What every framework's mock model can be told to do on one call (each mock takes these steps). */
export type ContractStep =
  | { text: string[] }
  | { tool: string; input: Record<string, unknown> }
  | { fail: Error }
  | { hang: true; text?: string[] }

/** An adapted agent served on a real port, its model scripted with `steps`. */
export interface ServedAdapter {
  url: string
  logger: CapturedLogger
  /** How many of the model's calls saw their abort signal fire. */
  aborted(): number
  /** The messages the model's call number `call` (from 0) was given, a line each: `role: text`. */
  prompt(call: number): string[]
}

export interface AdapterContract {
  /** How the adapter names its framework in failure reasons ("AI SDK", "Mastra", "LangGraph"). */
  framework: string
  /** Serves the framework's agent (with a tool named `weather` taking `{ city }`) on a model scripted with `steps`. */
  serve(steps: ContractStep[]): Promise<ServedAdapter>
  /** A provider's failure carrying `message`, as the framework's providers report one, and its class name. */
  providerError(message: string): Error
}

/**
 * What every adapter gives a framework's run in A2A, the same for all: streamed text as the chunks of one artifact
 * (to the platform dialect and the official v1.0 and v0.3 clients), tool calls as `working` updates and never the
 * answer, cancel aborting the model call, a provider's failure failing the task with a reason that quotes nothing of
 * its message, and an artifact even for an empty answer. Each adapter's own tests add what its framework does its
 * own way (asking the user, the card, what the model is given).
 */
export function adapterContract(contract: AdapterContract): void {
  const { framework, serve } = contract

  describe.each(dialects)(`a ${framework} agent streamed to a %s client`, (dialect) => {
    it('sends the streamed text as chunks of one artifact, in order, then an empty last chunk, and completes', async () => {
      const { url } = await serve([{ text: ['The ', 'sky ', 'is ', 'blue.'] }])
      const turn = await streamTurn(dialect, url, 'What colour is the sky?')
      expect(turn.chunks).toEqual(['The ', 'sky ', 'is ', 'blue.', ''])
      expect(turn.lastChunk).toEqual([false, false, false, false, true])
      expect(turn.states.at(-1)).toBe('completed')
    })

    it("shows a tool call as a working update naming the tool and its input; neither it nor the tool's result is the answer", async () => {
      const { url } = await serve([{ tool: 'weather', input: { city: 'Oslo' } }, { text: ['It is ', '21 degrees.'] }])
      const turn = await streamTurn(dialect, url, 'Weather in Oslo?')
      const toolUpdate = turn.updates.find((update) => update.state === 'working')
      expect(toolUpdate?.parts[0]).toMatchObject({ kind: 'text', text: 'Calling tool weather' })
      expect(toolUpdate?.parts[1]).toMatchObject({ kind: 'data', data: { tool: 'weather', input: { city: 'Oslo' } } })
      expect(turn.chunks.join('')).toBe('It is 21 degrees.')
      expect(turn.states.at(-1)).toBe('completed')
    })
  })

  describe(`a ${framework} agent over A2A`, () => {
    it('cancel mid-stream aborts the model call, and the task ends canceled', async () => {
      const served = await serve([{ hang: true, text: ['Thinking'] }])
      const running = await sendTurn(served.url, 'Take your time', {}, { returnImmediately: true })
      await expect
        .poll(async () => (await rpcBody(served.url, 'tasks/get', { id: running.id })).result.artifacts?.length ?? 0)
        .toBeGreaterThan(0)
      const canceled = await rpcBody(served.url, 'tasks/cancel', { id: running.id })
      expect(canceled.result.status.state).toBe('canceled')
      await expect.poll(() => served.aborted()).toBe(1)
      expect((await rpcBody(served.url, 'tasks/get', { id: running.id })).result.status.state).toBe('canceled')
    })

    it('a provider error fails the task with a clean reason (no message, no key, no prompt) and logs it in full', async () => {
      const secret = 'Incorrect API key provided: sk-live-1234 for prompt "my medical history"'
      const error = contract.providerError(secret)
      const served = await serve([{ fail: error }])
      const task = await sendTurn(served.url, 'my medical history')
      expect(task.status.state).toBe('failed')
      expect(task.status.message.parts[0].text).toBe(
        `The ${framework} model call failed (${error.name}, HTTP 401); the server's log has the details`,
      )
      expect(JSON.stringify(task)).not.toContain('sk-live')
      expect(served.logger.text('error')).toContain(secret)
    })

    it('a second task in the same context gives the model the first one: what the user said and what the agent answered', async () => {
      const served = await serve([{ text: ['Nice to meet you, ', 'Ada.'] }, { text: ['You are Ada.'] }])
      const first = await sendTurn(served.url, 'My name is Ada')
      const second = await sendTurn(served.url, 'What is my name?', { contextId: first.contextId })
      expect(second.status.state).toBe('completed')
      // The frameworks name the roles their own way (LangChain: human, ai); the instructions come first.
      const said = served.prompt(1).map((line) => line.replace(/^human:/, 'user:').replace(/^ai:/, 'assistant:'))
      expect(said[0]).toMatch(/^system: You help with the weather/)
      expect(said.slice(1)).toEqual([
        'user: My name is Ada',
        'assistant: Nice to meet you, Ada.',
        'user: What is my name?',
      ])
    })

    it('an answer with no text still completes with an artifact (clients read the result there)', async () => {
      const { url } = await serve([{ text: [] }])
      const task = await sendTurn(url, 'Say nothing')
      expect(task.status.state).toBe('completed')
      expect(task.artifacts).toHaveLength(1)
    })
  })
}
