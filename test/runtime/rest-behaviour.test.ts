import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { agent, gatedAgent } from './_agents.ts'
import { transports } from './_transports.ts'
import { callers, type V1Stream } from './_v1-callers.ts'
import { startReceiver } from './_webhook.ts'

/**
 * The A2A v1.0 operations through each binding the HTTP server speaks, JSON-RPC and HTTP+JSON, on every store: the
 * same cases, the same outcomes (§5.1, functional equivalence). What is particular to one binding's wire (REST paths,
 * query strings, Status bodies) is in rest.test.ts and a2a-v1.test.ts.
 */

const message = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra },
})

/** Asks on "ask" (input-required), replies with a Message on "reply", answers anything else in one artifact. */
const behaviourAgent = agent(
  (ctx, task) => {
    if (ctx.text === 'ask' && ctx.history.length === 1) return task.inputRequired('Which city?')
    if (ctx.text === 'reply') return task.reply('a quick answer')
    task.artifact(`Echo: ${ctx.text}`)
    task.complete()
  },
  {
    card: { capabilities: { streaming: true, pushNotifications: true } },
    messageReplies: true,
    cancel: (_ctx, task) => task.cancel('Stopped'),
  },
)

/** Every StreamResponse of a stream that must end on its own. */
async function drain(stream: V1Stream): Promise<any[]> {
  expect(stream.error).toBeUndefined()
  const events: any[] = []
  for (let i = 0; i < 100; i++) {
    const event = await stream.next!()
    if (event === undefined) return events
    events.push(event)
  }
  throw new Error('the stream did not end after 100 events')
}

const stateOf = (event: any) => (event.task ?? event.statusUpdate)?.status.state

describe.each(transports)('v1.0 behaviour ($name)', (transport) => {
  describe.each(callers)('over $binding', (caller) => {
    const start = () => transport.start(behaviourAgent, { push: { allow: ['127.0.0.1'], allowHttp: true } })
    const send = async (target: Awaited<ReturnType<typeof start>>, text: string, extra?: Record<string, unknown>) => {
      const { result, error } = await caller.call(target, 'SendMessage', message(text, extra))
      expect(error).toBeUndefined()
      return result
    }

    it('SendMessage answers the Task, or the Message an agent replied with', async () => {
      const target = await start()
      const { task } = await send(target, 'hello')
      expect(task.status.state).toBe('TASK_STATE_COMPLETED')
      expect(task.artifacts[0].parts).toEqual([{ text: 'Echo: hello' }])
      const replied = await send(target, 'reply')
      expect(Object.keys(replied)).toEqual(['message'])
      expect(replied.message.parts).toEqual([{ text: 'a quick answer' }])
    })

    it('SendStreamingMessage streams the Task first, then its events, ending at the terminal or interrupted state', async () => {
      const target = await start()
      const events = await drain(await caller.stream(target, 'SendStreamingMessage', message('hi')))
      expect(Object.keys(events[0])).toEqual(['task'])
      expect(events.some((event) => event.artifactUpdate?.artifact.parts[0].text === 'Echo: hi')).toBe(true)
      expect(stateOf(events.at(-1))).toBe('TASK_STATE_COMPLETED')
      const asked = await drain(await caller.stream(target, 'SendStreamingMessage', message('ask')))
      expect(stateOf(asked.at(-1))).toBe('TASK_STATE_INPUT_REQUIRED')
    })

    it('GetTask honours historyLength', async () => {
      const target = await start()
      const { task } = await send(target, 'ask')
      await send(target, 'Paris', { taskId: task.id })
      const full = await caller.call(target, 'GetTask', { id: task.id })
      expect(full.result.history.length).toBeGreaterThanOrEqual(3)
      const one = await caller.call(target, 'GetTask', { id: task.id, historyLength: 1 })
      expect(one.result.history).toEqual([full.result.history.at(-1)])
      const none = await caller.call(target, 'GetTask', { id: task.id, historyLength: 0 })
      expect(none.result.history).toBeUndefined()
      expect(none.result.status.state).toBe('TASK_STATE_COMPLETED')
    })

    it('ListTasks filters by context and state, pages through every task once, and adds artifacts when asked', async () => {
      const target = await start()
      const first = (await send(target, 'one')).task
      const ids = [first.id]
      for (const text of ['two', 'three']) ids.push((await send(target, text, { contextId: first.contextId })).task.id)
      const asked = (await send(target, 'ask')).task
      const inContext = await caller.call(target, 'ListTasks', { contextId: first.contextId })
      expect(inContext.result.tasks.map((task: any) => task.id).sort()).toEqual([...ids].sort())
      expect(inContext.result.totalSize).toBe(3)
      const waiting = await caller.call(target, 'ListTasks', { status: 'TASK_STATE_INPUT_REQUIRED' })
      expect(waiting.result.tasks.map((task: any) => task.id)).toEqual([asked.id])
      const seen: string[] = []
      let pageToken: string | undefined
      for (let page = 0; page < 10; page++) {
        const { result } = await caller.call(target, 'ListTasks', { pageSize: 3, ...(pageToken && { pageToken }) })
        expect(result.pageSize).toBe(3)
        seen.push(...result.tasks.map((task: any) => task.id))
        pageToken = result.nextPageToken
        if (!pageToken) break
      }
      expect(seen.sort()).toEqual([...ids, asked.id].sort())
      const bare = await caller.call(target, 'ListTasks', { contextId: first.contextId })
      expect(bare.result.tasks.every((task: any) => task.artifacts === undefined)).toBe(true)
      const full = await caller.call(target, 'ListTasks', { contextId: first.contextId, includeArtifacts: true })
      expect(full.result.tasks.every((task: any) => task.artifacts.length === 1)).toBe(true)
    })

    it('CancelTask cancels a running task; a finished one is TaskNotCancelable, an unknown one TaskNotFound', async () => {
      const gated = gatedAgent()
      const target = await transport.start(gated.agent)
      const started = caller.call(target, 'SendMessage', {
        ...message('work'),
        configuration: { returnImmediately: true },
      })
      const taskId = (await started).result.task.id
      await gated.started
      const canceled = await caller.call(target, 'CancelTask', { id: taskId })
      expect(canceled.result.status.state).toBe('TASK_STATE_CANCELED')
      expect((await caller.call(target, 'CancelTask', { id: taskId })).error?.type).toBe('TaskNotCancelable')
      expect((await caller.call(target, 'CancelTask', { id: 'no-such-task' })).error?.type).toBe('TaskNotFound')
    })

    it('SubscribeToTask follows a task across input-required to its terminal state, and resumes from Last-Event-ID', async () => {
      const target = await start()
      const { task } = await send(target, 'ask')
      const stream = await caller.stream(target, 'SubscribeToTask', { id: task.id })
      expect(stateOf(await stream.next!())).toBe('TASK_STATE_INPUT_REQUIRED')
      await send(target, 'Paris', { taskId: task.id })
      const live = await drain(stream)
      expect(stateOf(live.at(-1))).toBe('TASK_STATE_COMPLETED')
      expect(live.some((event) => event.artifactUpdate?.artifact.parts[0].text === 'Echo: Paris')).toBe(true)
      const last = stream.lastId!()!
      const resumed = await drain(
        await caller.stream(target, 'SubscribeToTask', { id: task.id }, { 'last-event-id': String(last - 1) }),
      )
      expect(resumed).toEqual(live.slice(-1))
      const ended = await caller.stream(target, 'SubscribeToTask', { id: task.id })
      expect(ended.error?.type).toBe('UnsupportedOperation')
    })

    it('creates, gets, lists and deletes push configs, whose webhook receives the task', async () => {
      const receiver = await startReceiver()
      const target = await start()
      const { task } = await send(target, 'ask')
      const created = await caller.call(target, 'CreateTaskPushNotificationConfig', {
        taskId: task.id,
        id: 'hook-1',
        url: receiver.url,
        token: 'secret-token',
      })
      expect(created.result).toEqual({ id: 'hook-1', taskId: task.id, url: receiver.url, token: 'secret-token' })
      const got = await caller.call(target, 'GetTaskPushNotificationConfig', { taskId: task.id, id: 'hook-1' })
      expect(got.result).toEqual(created.result)
      const listed = await caller.call(target, 'ListTaskPushNotificationConfigs', { taskId: task.id })
      expect(listed.result).toEqual({ configs: [created.result], nextPageToken: '' })
      await send(target, 'Paris', { taskId: task.id })
      await expect
        .poll(() => receiver.delivered.some((d) => d.body.statusUpdate?.status.state === 'TASK_STATE_COMPLETED'))
        .toBe(true)
      expect(receiver.delivered[0]!.headers['x-a2a-notification-token']).toBe('secret-token')
      const deleted = await caller.call(target, 'DeleteTaskPushNotificationConfig', { taskId: task.id, id: 'hook-1' })
      expect(deleted.result).toEqual({})
      const gone = await caller.call(target, 'GetTaskPushNotificationConfig', { taskId: task.id, id: 'hook-1' })
      expect(gone.error?.type).toBe('TaskNotFound')
      const unknown = await caller.call(target, 'ListTaskPushNotificationConfigs', { taskId: 'no-such-task' })
      expect(unknown.error?.type).toBe('TaskNotFound')
    })

    it('GetExtendedAgentCard answers the extended card to a caller with a credential, and is refused otherwise', async () => {
      const key = { 'x-api-key': 'key-behaviour-3c1d' }
      const extended = agent((_ctx, task) => task.complete(), {
        card: {
          authentication: { schemes: ['apiKey'] },
          extendedCard: { skills: [{ id: 'bulk', name: 'Bulk', description: 'Many at once', tags: ['bulk'] }] },
        },
      })
      const target = await transport.start(extended, { auth: { apiKeys: ['key-behaviour-3c1d'] } })
      const card = await caller.call(target, 'GetExtendedAgentCard', {}, key)
      expect(card.result.skills.map((skill: any) => skill.id)).toEqual(['echo', 'bulk'])
      expect(card.result.supportedInterfaces.map((entry: any) => entry.protocolBinding)).toContain('HTTP+JSON')
      expect((await caller.call(target, 'GetExtendedAgentCard', {})).error?.type).toBe('Unauthorized')
      const plain = await start()
      expect((await caller.call(plain, 'GetExtendedAgentCard', {})).error?.type).toBe('UnsupportedOperation')
    })

    it('answers the same A2A errors: unknown task, ended task, bad params, output modes, no push, no streaming', async () => {
      const target = await start()
      expect((await caller.call(target, 'GetTask', { id: 'no-such-task' })).error?.type).toBe('TaskNotFound')
      const { task } = await send(target, 'done')
      const again = await caller.call(target, 'SendMessage', message('again', { taskId: task.id }))
      expect(again.error?.type).toBe('UnsupportedOperation')
      const empty = await caller.call(target, 'SendMessage', message('x', { parts: [] }))
      expect(empty.error).toEqual({ type: 'InvalidParams', message: expect.stringContaining('message.parts`') })
      const modes = await caller.call(target, 'SendMessage', {
        ...message('x'),
        configuration: { acceptedOutputModes: ['image/png'] },
      })
      expect(modes.error?.type).toBe('ContentTypeNotSupported')
      expect((await caller.call(target, 'ListTasks', { pageSize: 500 })).error?.type).toBe('InvalidParams')
      const quiet = await transport.start(
        agent((_ctx, t) => t.complete(), { card: { capabilities: { streaming: false } } }),
      )
      const push = await caller.call(quiet, 'CreateTaskPushNotificationConfig', {
        taskId: task.id,
        url: 'https://example.com/hook',
      })
      expect(push.error?.type).toBe('PushNotificationNotSupported')
      const stream = await caller.stream(quiet, 'SendStreamingMessage', message('hi'))
      expect(stream.error?.type).toBe('UnsupportedOperation')
    })
  })
})
