import { randomUUID } from 'node:crypto'
import { createA2AApp, createMemoryStore, type Principal } from 'a2a-runtime'
import type { TaskStore } from 'a2a-runtime/store'
import { describe, expect, it } from 'vitest'
import { agent } from './_agents.ts'
import { type Target, transports } from './_transports.ts'

/**
 * Each caller sees only its own tasks (A2A v1.0 §3.1.4, §13.1): another caller's task answers every operation
 * exactly as a task that does not exist, in every dialect, on every store the transports run on.
 */

const ALICE = { 'x-api-key': 'key-alice-7c1e' }
const BOB = { authorization: 'Bearer token-bob-4d9a' }
const SHARED = { 'x-api-key': 'key-unnamed-0b3f' }
const auth = { apiKeys: ['alice:key-alice-7c1e', 'key-unnamed-0b3f'], bearerTokens: ['bob:token-bob-4d9a'] }

const seen: Array<{ text: string; principal: Principal | undefined }> = []

/** Asks once, then completes: a task waiting for input can be followed, continued and canceled. */
const asking = agent(
  async (ctx, task) => {
    seen.push({ text: ctx.text, principal: ctx.principal })
    if (ctx.history.length === 1) return task.inputRequired('Which one?')
    const earlier = await ctx.conversation()
    task.artifact(`${earlier.length} messages in this conversation`)
    task.complete()
  },
  {
    card: {
      authentication: { schemes: ['apiKey', 'bearer'] },
      capabilities: { streaming: true, pushNotifications: true },
    },
    cancel: (_ctx, task) => task.cancel(),
  },
)

const V1 = { 'a2a-version': '1.0' }
const V03 = { 'a2a-version': '0.3' }

const userMessage = (text: string, extra: Record<string, unknown> = {}) => ({
  kind: 'message',
  role: 'user',
  messageId: randomUUID(),
  parts: [{ kind: 'text', text }],
  ...extra,
})
const v1Message = (text: string, extra: Record<string, unknown> = {}) => ({
  role: 'ROLE_USER',
  messageId: randomUUID(),
  parts: [{ text }],
  ...extra,
})

/** Starts a task as `caller` (v0.3 shape), waiting for input. */
async function startTask(target: Target, caller: Record<string, string>, contextId?: string) {
  const reply = await target.rpc(
    'message/send',
    { message: userMessage('start', contextId ? { contextId } : {}) },
    { headers: { ...caller, ...V03 } },
  )
  expect(reply.body.result?.status?.state, JSON.stringify(reply.body)).toBe('input-required')
  return reply.body.result as { id: string; contextId: string }
}

/** Every way a client names a task, per dialect: what it sends. */
const OPERATIONS: Array<{
  name: string
  headers: Record<string, string>
  call: (taskId: string) => [string, unknown]
}> = [
  { name: 'v1 GetTask', headers: V1, call: (id) => ['GetTask', { id }] },
  { name: 'v1 CancelTask', headers: V1, call: (id) => ['CancelTask', { id }] },
  { name: 'v1 SubscribeToTask', headers: V1, call: (id) => ['SubscribeToTask', { id }] },
  {
    name: 'v1 SendMessage naming the task',
    headers: V1,
    call: (id) => ['SendMessage', { message: v1Message('more', { taskId: id }) }],
  },
  {
    name: 'v1 SendStreamingMessage naming the task',
    headers: V1,
    call: (id) => ['SendStreamingMessage', { message: v1Message('more', { taskId: id }) }],
  },
  {
    name: 'v1 CreateTaskPushNotificationConfig',
    headers: V1,
    call: (id) => ['CreateTaskPushNotificationConfig', { taskId: id, url: 'https://hooks.example/a2a' }],
  },
  {
    name: 'v1 GetTaskPushNotificationConfig',
    headers: V1,
    call: (id) => ['GetTaskPushNotificationConfig', { taskId: id, id: 'config-1' }],
  },
  {
    name: 'v1 ListTaskPushNotificationConfigs',
    headers: V1,
    call: (id) => ['ListTaskPushNotificationConfigs', { taskId: id }],
  },
  {
    name: 'v1 DeleteTaskPushNotificationConfig',
    headers: V1,
    call: (id) => ['DeleteTaskPushNotificationConfig', { taskId: id, id: 'config-1' }],
  },
  { name: 'v0.3 tasks/get', headers: V03, call: (id) => ['tasks/get', { id }] },
  { name: 'v0.3 tasks/cancel', headers: V03, call: (id) => ['tasks/cancel', { id }] },
  { name: 'v0.3 tasks/resubscribe', headers: V03, call: (id) => ['tasks/resubscribe', { id }] },
  {
    name: 'v0.3 message/send naming the task',
    headers: V03,
    call: (id) => ['message/send', { message: userMessage('more', { taskId: id }) }],
  },
  {
    name: 'v0.3 message/stream naming the task',
    headers: V03,
    call: (id) => ['message/stream', { message: userMessage('more', { taskId: id }) }],
  },
  {
    name: 'v0.3 tasks/pushNotificationConfig/set',
    headers: V03,
    call: (id) => [
      'tasks/pushNotificationConfig/set',
      { taskId: id, pushNotificationConfig: { url: 'https://hooks.example/a2a' } },
    ],
  },
  {
    name: 'v0.3 tasks/pushNotificationConfig/get',
    headers: V03,
    call: (id) => ['tasks/pushNotificationConfig/get', { id }],
  },
  {
    name: 'v0.3 tasks/pushNotificationConfig/list',
    headers: V03,
    call: (id) => ['tasks/pushNotificationConfig/list', { id }],
  },
  {
    name: 'v0.3 tasks/pushNotificationConfig/delete',
    headers: V03,
    call: (id) => ['tasks/pushNotificationConfig/delete', { id, pushNotificationConfigId: 'config-1' }],
  },
  { name: 'platform tasks/get', headers: {}, call: (id) => ['tasks/get', { id }] },
  { name: 'platform tasks/cancel', headers: {}, call: (id) => ['tasks/cancel', { id }] },
  {
    name: 'platform message/send naming the task',
    headers: {},
    call: (id) => ['message/send', { message: userMessage('more', { taskId: id }) }],
  },
]

/** The answer as a client reads it, with the task id asked about replaced (so two ids compare). */
async function answerOf(target: Target, caller: Record<string, string>, op: (typeof OPERATIONS)[number], id: string) {
  const [method, params] = op.call(id)
  const response = await target.post(JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }), {
    ...caller,
    ...op.headers,
  })
  const text = await response.text()
  return { status: response.status, type: response.headers.get('content-type'), text: text.replaceAll(id, '<id>') }
}

describe.each(transports)('each caller sees only its own tasks ($name)', (transport) => {
  it("another caller's task answers every operation of every dialect exactly as a task that does not exist", async () => {
    const target = await transport.start(asking, { auth, push: { allow: ['0.0.0.0/0', '::/0'] } })
    for (const op of OPERATIONS) {
      // A fresh task per operation: a cancel or a follow-up must not have moved it for the next one.
      const alices = await startTask(target, ALICE)
      for (const stranger of [BOB, SHARED]) {
        const foreign = await answerOf(target, stranger, op, alices.id)
        const unknown = await answerOf(target, stranger, op, randomUUID())
        expect(foreign, `${op.name}: another's task as an unknown one`).toEqual(unknown)
        expect(foreign.text, op.name).toMatch(/"error"/)
      }
      // Nothing of it moved: Alice still finds it waiting for her.
      const mine = await target.rpc('GetTask', { id: alices.id }, { headers: { ...ALICE, ...V1 } })
      expect(mine.body.result?.status?.state, op.name).toBe('TASK_STATE_INPUT_REQUIRED')
    }
  }, 120_000)

  it('ListTasks gives each caller its own tasks only, with and without filters, a context two callers named included', async () => {
    const target = await transport.start(asking, { auth })
    const context = randomUUID()
    const alices = [await startTask(target, ALICE, context), await startTask(target, ALICE)]
    const bobs = [await startTask(target, BOB, context)]
    const shared = [await startTask(target, SHARED, context)]
    const list = async (caller: Record<string, string>, params: Record<string, unknown>) => {
      const reply = await target.rpc('ListTasks', params, { headers: { ...caller, ...V1 } })
      expect(reply.status, JSON.stringify(reply.body)).toBe(200)
      return {
        ids: (reply.body.result.tasks as Array<{ id: string }>).map((task) => task.id).sort(),
        total: reply.body.result.totalSize,
      }
    }
    const ids = (tasks: Array<{ id: string }>) => tasks.map((task) => task.id).sort()
    for (const [caller, own] of [
      [ALICE, alices],
      [BOB, bobs],
      [SHARED, shared],
    ] as const) {
      expect(await list(caller, {})).toEqual({ ids: ids(own), total: own.length })
      const inContext = own.filter((task) => task.contextId === context)
      expect(await list(caller, { contextId: context })).toEqual({ ids: ids(inContext), total: inContext.length })
      expect(await list(caller, { status: 'TASK_STATE_INPUT_REQUIRED' })).toEqual({ ids: ids(own), total: own.length })
      expect(await list(caller, { status: 'TASK_STATE_COMPLETED' })).toEqual({ ids: [], total: 0 })
    }
  })

  it("the agent sees who sent each message, and its conversation holds only that caller's tasks of a shared context", async () => {
    const target = await transport.start(asking, { auth })
    const context = randomUUID()
    await startTask(target, BOB, context)
    await startTask(target, BOB, context)
    const alices = await startTask(target, ALICE, context)
    seen.length = 0
    const reply = await target.rpc(
      'message/send',
      { message: userMessage('the second one', { taskId: alices.id }) },
      { headers: { ...ALICE, ...V03 } },
    )
    expect(reply.body.result.status.state).toBe('completed')
    // Her first task's two messages and her answer's (none: no artifact yet), no message of Bob's two tasks.
    expect(reply.body.result.artifacts[0].parts[0].text).toBe('3 messages in this conversation')
    expect(seen).toEqual([
      {
        text: 'the second one',
        principal: {
          id: 'credential:alice',
          scheme: 'apiKey',
          subject: 'alice',
          issuer: undefined,
          scopes: [],
          claims: {},
        },
      },
    ])
  })
})

describe.each(transports)(
  'another caller against a task while it runs, or one full of webhooks ($name)',
  (transport) => {
    it('answers every operation on a running task as on one that does not exist, and the task runs on', async () => {
      let release: () => void = () => {}
      const released = new Promise<void>((resolve) => (release = resolve))
      const cancelers: Array<string | undefined> = []
      const holding = agent(
        async (ctx, task) => {
          task.working('holding')
          await Promise.race([released, new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))])
          if (ctx.signal.aborted) return
          task.artifact('released')
          task.complete()
        },
        {
          card: { authentication: { schemes: ['apiKey', 'bearer'] }, capabilities: { streaming: true } },
          cancel: (ctx, task) => {
            cancelers.push(ctx.principal?.subject)
            task.cancel()
          },
        },
      )
      const target = await transport.start(holding, { auth })
      const start = async () =>
        (
          await target.rpc(
            'SendMessage',
            { message: v1Message('hold'), configuration: { returnImmediately: true } },
            { headers: { ...ALICE, ...V1 } },
          )
        ).body.result.task as { id: string }
      const running = await start()
      for (const op of OPERATIONS.filter((op) => op.headers === V1 && !op.name.includes('Push'))) {
        const foreign = await answerOf(target, BOB, op, running.id)
        const unknown = await answerOf(target, BOB, op, randomUUID())
        expect(foreign, `${op.name} on a running task`).toEqual(unknown)
      }
      const mine = await target.rpc('GetTask', { id: running.id }, { headers: { ...ALICE, ...V1 } })
      expect(mine.body.result.status.state).toBe('TASK_STATE_WORKING')
      // Her own cancel reaches the agent's hook as hers.
      const canceled = await target.rpc('CancelTask', { id: running.id }, { headers: { ...ALICE, ...V1 } })
      expect(canceled.body.result.status.state).toBe('TASK_STATE_CANCELED')
      expect(cancelers).toEqual(['alice'])
      const next = await start()
      release()
      await expect
        .poll(
          async () =>
            (await target.rpc('GetTask', { id: next.id }, { headers: { ...ALICE, ...V1 } })).body.result.status.state,
        )
        .toBe('TASK_STATE_COMPLETED')
    })

    it("refuses a follow-up with a webhook naming another's task full of webhooks as a missing task, not as full", async () => {
      const target = await transport.start(asking, {
        auth,
        push: { allow: ['0.0.0.0/0', '::/0'], maxConfigsPerTask: 1 },
      })
      const alices = await startTask(target, ALICE)
      const created = await target.rpc(
        'CreateTaskPushNotificationConfig',
        { taskId: alices.id, url: 'https://192.0.2.1/alice' },
        { headers: { ...ALICE, ...V1 } },
      )
      expect(created.body.result?.id, JSON.stringify(created.body)).toBeDefined()
      const withWebhook = (taskId: string) => ({
        message: v1Message('more', { taskId }),
        configuration: { taskPushNotificationConfig: { url: 'https://192.0.2.1/bob' } },
      })
      const foreign = await target.rpc('SendMessage', withWebhook(alices.id), { headers: { ...BOB, ...V1 }, id: 1 })
      const unknownId = randomUUID()
      const unknown = await target.rpc('SendMessage', withWebhook(unknownId), { headers: { ...BOB, ...V1 }, id: 1 })
      expect(JSON.stringify(foreign.body).replaceAll(alices.id, '<id>')).toBe(
        JSON.stringify(unknown.body).replaceAll(unknownId, '<id>'),
      )
      expect(foreign.body.error.code, JSON.stringify(foreign.body)).toBe(-32001)
      // Alice herself is told it is full.
      const own = await target.rpc('SendMessage', withWebhook(alices.id), { headers: { ...ALICE, ...V1 } })
      expect(own.body.error.message).toMatch(/push notification config/)
    })
  },
)

describe('a store that does not keep owners', () => {
  it('stops an agent that checks credentials from starting, naming keepsOwners; without credentials it serves', () => {
    const memory = createMemoryStore()
    // A store written for a runtime before owners: everything but `keepsOwners` (and it ignores owners).
    const ownerless: TaskStore = {
      get: (taskId) => memory.get(taskId),
      create: (task) => memory.create(task),
      append: (task, event) => memory.append(task, event),
      events: (taskId, afterSeq) => memory.events(taskId, afterSeq),
      list: (query) => memory.list({ ...query, owner: undefined }),
    }
    expect(() => createA2AApp(asking, { auth, store: ownerless })).toThrow(
      /declares authentication, but its task store does not keep owners \(keepsOwners\)/,
    )
    expect(() =>
      createA2AApp(
        agent((_ctx, task) => task.complete()),
        { store: ownerless },
      ),
    ).not.toThrow()
  })
})

describe('named credentials', () => {
  it('says at start which names it read (a secret written with a colon shows up as named), never a secret', () => {
    const lines: string[] = []
    const logger = { debug() {}, info: (line: string) => lines.push(line), warn() {}, error() {} }
    createA2AApp(asking, { auth, logger, env: {} })
    expect(lines).toEqual([
      'auth.bearerTokens: 1 named credential (bob), 0 unnamed',
      'auth.apiKeys: 1 named credential (alice), 1 unnamed',
    ])
    lines.length = 0
    createA2AApp(asking, { logger, env: { A2A_API_KEY: 'sk:live-secret,another', A2A_BEARER_TOKEN: 'plain' } })
    expect(lines).toEqual(['A2A_API_KEY: 1 named credential (sk), 1 unnamed'])
    expect(lines.join('\n')).not.toContain('live-secret')
  })
})
