import { defineAgent } from 'a2a-runtime'
import { describe, expect, it } from 'vitest'
import type { StreamEvent } from '../../runtime/src/client/client.ts'
import { connectOver, startRuntimeAgent, userMessage } from './_agents.ts'

/**
 * Resuming a stream after a disconnect (A2A CLI spec §9.4): this runtime numbers each task's events and sends the
 * number as the SSE id; a subscription with `lastEventId` gets the events after that one, each once, then the live ones.
 */

/** An agent that says it is working, waits for the test's word, then answers in three chunks. */
function gatedAgent() {
  let open!: () => void
  const gate = new Promise<void>((resolve) => (open = resolve))
  const agent = defineAgent({
    card: {
      name: 'Gated',
      description: 'Answers when told',
      capabilities: { streaming: true },
      skills: [{ id: 'g', name: 'G', description: 'G', tags: ['g'] }],
    },
    async execute(_ctx, task) {
      task.working('Waiting for the word')
      await gate
      const id = task.artifact('one ', { lastChunk: false })
      task.artifact('two ', { artifactId: id, append: true, lastChunk: false })
      task.artifact('three', { artifactId: id, append: true, lastChunk: true })
      task.complete()
    },
  })
  return { agent, open }
}

const chunkOf = (event: StreamEvent) =>
  'artifactUpdate' in event.response ? event.response.artifactUpdate.artifact.parts[0]!.text : undefined

describe.each(['JSONRPC', 'HTTP+JSON'])('over %s', (binding) => {
  it('resumes a subscription after the last event seen: every later event, none seen before', async () => {
    const { agent, open } = gatedAgent()
    const client = await connectOver(await startRuntimeAgent({ agent }), binding)
    const sent = await client.sendMessage({ message: userMessage('go'), configuration: { returnImmediately: true } })
    const id = sent.task!.id

    // The first connection sees the Task and the working status, then drops.
    const seen: StreamEvent[] = []
    for await (const event of client.subscribeToTask(id)) {
      seen.push(event)
      const { response } = event
      if ('statusUpdate' in response || ('task' in response && response.task.status.state === 'TASK_STATE_WORKING'))
        break
    }
    expect(seen.every((event) => /^\d+$/.test(event.eventId ?? ''))).toBe(true)
    const lastEventId = seen.at(-1)!.eventId!

    open()
    const later: StreamEvent[] = []
    for await (const event of client.subscribeToTask(id, { lastEventId })) later.push(event)
    for (const event of later) expect(Number(event.eventId)).toBeGreaterThan(Number(lastEventId))
    expect(later.map(chunkOf).join('')).toBe('one two three')
    expect(later.at(-1)!.response).toHaveProperty('statusUpdate.status.state', 'TASK_STATE_COMPLETED')
  })

  it("a stream's events carry the agent's numbers as their ids, in order", async () => {
    const { agent, open } = gatedAgent()
    open()
    const client = await connectOver(await startRuntimeAgent({ agent }), binding)
    const events: StreamEvent[] = []
    for await (const event of client.sendStreamingMessage({ message: userMessage('go') })) events.push(event)
    const ids = events.map((event) => Number(event.eventId))
    expect(ids.every(Number.isInteger)).toBe(true)
    expect([...ids].sort((a, b) => a - b)).toEqual(ids)
  })
})
