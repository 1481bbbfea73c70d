import { describe, expect, it } from 'vitest'
import type { StreamResponse, Task } from '../../runtime/src/client/types.ts'
import { answerText, collect, connectOver, startRuntimeAgent, startSdkAgent, userMessage } from './_agents.ts'

/**
 * Every v1.0 operation of the client against real agents, over both bindings: this runtime's agent and a v1.0-only
 * agent on the official SDK's server, which answer alike (an answer in chunks, a question on "ask", long work on
 * "wait" until canceled).
 */

const AGENTS = [
  { name: "this runtime's agent", start: async () => startRuntimeAgent() },
  { name: 'an agent on the official SDK server', start: async () => (await startSdkAgent()).url },
]
const BINDINGS = ['JSONRPC', 'HTTP+JSON']

const stateOf = (event: StreamResponse) =>
  'task' in event ? event.task.status.state : 'statusUpdate' in event ? event.statusUpdate.status.state : undefined

/** Polls the task until it reaches `state`. */
async function waitFor(get: () => Promise<Task>, state: string) {
  await expect.poll(async () => (await get()).status.state, { timeout: 10_000 }).toBe(state)
}

describe.each(AGENTS)('the client against $name', ({ start }) => {
  describe.each(BINDINGS)('over %s', (binding) => {
    it('selects the interface of the binding asked for, from the card at the origin', async () => {
      const client = await connectOver(await start(), binding)
      expect(client.selected.protocolBinding).toBe(binding)
      expect(client.cardSource).toMatch(/\/\.well-known\/agent-card\.json$/)
    })

    it('sends a message and gets the completed task with its answer', async () => {
      const client = await connectOver(await start(), binding)
      const answer = await client.sendMessage({ message: userMessage('hello') })
      if (!('task' in answer) || !answer.task) throw new Error(`expected a task: ${JSON.stringify(answer)}`)
      expect(answer.task.status.state).toBe('TASK_STATE_COMPLETED')
      expect(answerText(answer.task)).toBe('Echo: hello')
    })

    it('streams a message: the Task first, the answer in chunks, the completed status last', async () => {
      const client = await connectOver(await start(), binding)
      const events = await collect(client.sendStreamingMessage({ message: userMessage('streamed words') }))
      const responses = events.map((event) => event.response)
      expect(Object.keys(responses[0]!)).toEqual(['task'])
      const chunks = responses.flatMap((r) => ('artifactUpdate' in r ? [r.artifactUpdate.artifact.parts[0]!.text] : []))
      expect(chunks.join('')).toBe('Echo: streamed words')
      expect(stateOf(responses.at(-1)!)).toBe('TASK_STATE_COMPLETED')
    })

    it('answers a question: input-required, then the follow-up naming the task completes it', async () => {
      const client = await connectOver(await start(), binding)
      const question = await client.sendMessage({ message: userMessage('ask') })
      if (!question.task) throw new Error('expected a task')
      expect(question.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED')
      const answer = await client.sendMessage({ message: userMessage('Oslo', { taskId: question.task.id }) })
      expect(answer.task?.id).toBe(question.task.id)
      expect(answer.task?.status.state).toBe('TASK_STATE_COMPLETED')
    })

    it('gets a task by id, and lists it among the tasks of its context', async () => {
      const client = await connectOver(await start(), binding)
      const sent = (await client.sendMessage({ message: userMessage('listed') })).task!
      const got = await client.getTask({ id: sent.id, historyLength: 1 })
      expect(got.id).toBe(sent.id)
      expect(got.status.state).toBe('TASK_STATE_COMPLETED')
      expect(got.history?.length ?? 0).toBeLessThanOrEqual(1)
      const listed = await client.listTasks({ contextId: sent.contextId, pageSize: 10 })
      expect(listed.tasks.map((task) => task.id)).toContain(sent.id)
    })

    it('cancels a working task, and a subscriber sees it end canceled', async () => {
      const client = await connectOver(await start(), binding)
      const sent = await client.sendMessage({
        message: userMessage('wait'),
        configuration: { returnImmediately: true },
      })
      const id = sent.task!.id
      await waitFor(() => client.getTask({ id }), 'TASK_STATE_WORKING')
      const subscription = client.subscribeToTask(id)[Symbol.asyncIterator]()
      const first = await subscription.next()
      expect(first.value?.response).toHaveProperty('task.id', id)
      const canceled = await client.cancelTask({ id })
      expect(canceled.id).toBe(id)
      const rest: StreamResponse[] = []
      for (let next = await subscription.next(); !next.done; next = await subscription.next())
        rest.push(next.value.response)
      expect(stateOf(rest.at(-1)!)).toBe('TASK_STATE_CANCELED')
      await waitFor(() => client.getTask({ id }), 'TASK_STATE_CANCELED')
    })

    it('creates, gets, lists and deletes a push notification config of a task', async () => {
      const client = await connectOver(await start(), binding)
      const task = (await client.sendMessage({ message: userMessage('hooked') })).task!
      const url = 'http://127.0.0.1:9/hook'
      const created = await client.createTaskPushNotificationConfig({ taskId: task.id, id: 'hook-1', url, token: 't' })
      expect(created).toMatchObject({ taskId: task.id, url })
      const id = created.id!
      expect(await client.getTaskPushNotificationConfig({ taskId: task.id, id })).toMatchObject({ id, url })
      const listed = await client.listTaskPushNotificationConfigs({ taskId: task.id })
      expect(listed.configs.map((config) => config.id)).toContain(id)
      await client.deleteTaskPushNotificationConfig({ taskId: task.id, id })
      const after = await client.listTaskPushNotificationConfigs({ taskId: task.id })
      expect((after.configs ?? []).map((config) => config.id)).not.toContain(id)
    })
  })
})
