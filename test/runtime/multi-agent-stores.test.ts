import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createFileStore } from 'a2a-runtime/file-store'
import { createPostgresStore } from 'a2a-runtime/postgres-store'
import { createRedisStore } from 'a2a-runtime/redis-store'
import type { TaskStore } from 'a2a-runtime/store'
import { createDurableObjectStore } from 'a2a-runtime/workers'
import { describe, expect, inject, it, onTestFinished } from 'vitest'
import { sdkTestAgent } from '../_sdk-v1.ts'
import { DurableObjectStorageStandIn } from './_durable-object-storage.ts'
import { userMessage, userMessageV1 } from './_messages.ts'
import { postJson, startAgents } from './_multi-agent.ts'
import { eventReader, readEvents } from './_sse.ts'

/**
 * Two agents in one server (`/planner`, `/writer`) on each store: one agent's task is another's unknown task through
 * JSON-RPC v1.0, v0.3, the platform dialect and HTTP+JSON (get, list and its count, cancel, subscribe, push configs),
 * for anonymous callers and for the same caller of two agents that check credentials, and each streams its own.
 */

const suffix = () => Math.random().toString(36).slice(2, 10)
const V1 = { 'a2a-version': '1.0' }

const stores: Array<[string, () => Promise<TaskStore | undefined> | TaskStore | undefined]> = [
  ['memory', () => undefined],
  [
    'file',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'a2a-multi-agent-'))
      // After the server (closed by an afterEach hook) let go of it.
      onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
      return createFileStore({ dir })
    },
  ],
  [
    // As the Worker starts it: on the object's storage (here its stand-in), restored before it serves.
    'Durable Object',
    async () => {
      const store = createDurableObjectStore(new DurableObjectStorageStandIn())
      await store.restore()
      return store
    },
  ],
  ['PostgreSQL', () => createPostgresStore({ url: inject('postgresUrl'), schema: `multi_${suffix()}` })],
  [
    'Redis',
    () => {
      const url = inject('redisUrl')
      if (!url) throw new Error('redis-server is not installed (Debian: apt-get install redis-server)')
      return createRedisStore({ url, prefix: `multi-${suffix()}:` })
    },
  ],
]

const v1 = (url: string, method: string, params: unknown) =>
  postJson(url, { jsonrpc: '2.0', id: 1, method, params }, V1)
const slash = (url: string, method: string, params: unknown) => postJson(url, { jsonrpc: '2.0', id: 1, method, params })
const restGet = (url: string) => fetch(url, { headers: V1 })
const restPost = (url: string, body?: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { ...V1, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })

// Both check the same bearer token: one caller, two agents, so only the agent keeps the tasks apart.
const guarded = (name: string) =>
  sdkTestAgent(
    {
      name,
      description: `${name} with credentials`,
      capabilities: { streaming: true, pushNotifications: true },
      authentication: { schemes: ['bearer'] },
    },
    { waitMs: 30_000 },
  )
const ALICE = { ...V1, authorization: 'Bearer a-secret' }
const restGetAs = (url: string) => fetch(url, { headers: ALICE })

describe.each(stores)('two agents in one server, on the %s store', (_name, makeStore) => {
  it("keep their tasks apart: another agent's task id is not found anywhere; lists count their own", async () => {
    const store = await makeStore()
    const server = await startAgents(undefined, store ? { store } : {})
    const { planner, writer } = server.urls as { planner: string; writer: string }

    const sent = await v1(planner, 'SendMessage', userMessageV1('hello'))
    expect(sent.body.result.task.status.state).toBe('TASK_STATE_COMPLETED')
    const id: string = sent.body.result.task.id
    const contextId: string = sent.body.result.task.contextId
    // The writer's own task, in the planner's context: a context id names nothing across agents either.
    const own = await v1(writer, 'SendMessage', userMessageV1('mine', { contextId }))
    const ownId: string = own.body.result.task.id

    // JSON-RPC v1.0
    expect((await v1(planner, 'GetTask', { id })).body.result.id).toBe(id)
    expect((await v1(writer, 'GetTask', { id })).body.error.code).toBe(-32001)
    expect((await v1(writer, 'CancelTask', { id })).body.error.code).toBe(-32001)
    const writerList = (await v1(writer, 'ListTasks', { pageSize: 50 })).body.result
    expect(writerList.tasks.map((task: any) => task.id)).toEqual([ownId])
    expect(writerList.totalSize).toBe(1)
    const inContext = (await v1(writer, 'ListTasks', { contextId, pageSize: 50 })).body.result
    expect(inContext.tasks.map((task: any) => task.id)).toEqual([ownId])
    const plannerList = (await v1(planner, 'ListTasks', { pageSize: 50 })).body.result
    expect(plannerList.tasks.map((task: any) => task.id)).toEqual([id])
    expect(plannerList.totalSize).toBe(1)
    // A follow-up naming the other agent's task is refused as for a task that does not exist.
    expect((await v1(writer, 'SendMessage', userMessageV1('more', { taskId: id }))).body.error.code).toBe(-32001)

    // A2A v0.3 (POST /writer/v0.3) and the platform dialect (POST /writer)
    expect((await slash(`${planner}v0.3`, 'tasks/get', { id })).body.result.id).toBe(id)
    expect((await slash(`${writer}v0.3`, 'tasks/get', { id })).body.error.code).toBe(-32001)
    expect((await slash(`${writer}v0.3`, 'tasks/cancel', { id })).body.error.code).toBe(-32001)
    expect((await slash(planner, 'tasks/get', { id })).body.result.id).toBe(id)
    expect((await slash(writer, 'tasks/get', { id })).body.error).toMatchObject({ code: -32602 })

    // HTTP+JSON, at the agent's path, and under its tenant (a client honouring the card's `tenant`)
    expect((await restGet(`${planner}tasks/${id}`)).status).toBe(200)
    expect((await restGet(`${planner}planner/tasks/${id}`)).status).toBe(200)
    expect((await restGet(`${writer}tasks/${id}`)).status).toBe(404)
    expect((await restGet(`${writer}writer/tasks/${id}`)).status).toBe(404)
    // A tenant that is not the agent's own names nothing here.
    expect((await restGet(`${planner}writer/tasks/${id}`)).status).toBe(404)
    expect((await restPost(`${writer}tasks/${id}:cancel`)).status).toBe(404)
    const listed = await (await restGet(`${writer}tasks`)).json()
    expect(listed.tasks.map((task: any) => task.id)).toEqual([ownId])
    expect(listed.totalSize).toBe(1)
  })

  it('stream their own tasks, and neither subscribes to nor cancels the other’s running task', async () => {
    const store = await makeStore()
    const server = await startAgents(undefined, store ? { store } : {})
    const { planner, writer } = server.urls as { planner: string; writer: string }

    const streamed = await restPost(`${writer}message:stream`, userMessageV1('streamed words'))
    expect(streamed.status).toBe(200)
    const { events } = await readEvents(streamed, 'numbered')
    expect(events.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED')
    const streamedId: string = events[0].task.id
    expect((await v1(planner, 'GetTask', { id: streamedId })).body.error.code).toBe(-32001)

    const held = await v1(planner, 'SendMessage', {
      ...userMessageV1('wait'),
      configuration: { returnImmediately: true },
    })
    const id: string = held.body.result.task.id
    expect((await restPost(`${writer}tasks/${id}:subscribe`)).status).toBe(404)
    const v1Subscribe = await v1(writer, 'SubscribeToTask', { id })
    expect(v1Subscribe.body.error.code).toBe(-32001)
    const v03Subscribe = await slash(`${writer}v0.3`, 'tasks/resubscribe', { id })
    expect(v03Subscribe.body.error.code).toBe(-32001)

    // The planner's own subscriber hears the cancel; the writer's cancel changed nothing.
    expect((await v1(writer, 'CancelTask', { id })).body.error.code).toBe(-32001)
    const subscribed = await restPost(`${planner}tasks/${id}:subscribe`)
    expect(subscribed.status).toBe(200)
    const events2 = eventReader(subscribed)
    expect((await events2.next()).task.status.state).toBe('TASK_STATE_WORKING')
    expect((await v1(planner, 'CancelTask', { id })).body.result.status.state).toBe('TASK_STATE_CANCELED')
    let last: any
    for (let event = await events2.next(); event; event = await events2.next()) last = event
    expect(last.statusUpdate.status.state).toBe('TASK_STATE_CANCELED')
  })

  it('the platform dialect streams each agent’s own task at its path', async () => {
    const store = await makeStore()
    const server = await startAgents(undefined, store ? { store } : {})
    const { planner, writer } = server.urls as { planner: string; writer: string }
    const response = await fetch(planner, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/stream', params: userMessage('one two') }),
    })
    const { events } = await readEvents(response)
    const id: string = events[0].params.taskId
    expect((await slash(writer, 'tasks/get', { id })).body.error).toMatchObject({ code: -32602 })
    expect((await slash(planner, 'tasks/get', { id })).body.result.status.state).toBe('completed')
  })

  it("keep one caller's tasks and push configs apart when both check credentials", async () => {
    const store = await makeStore()
    const server = await startAgents(
      { planner: guarded('Planner'), writer: guarded('Writer') },
      {
        env: { A2A_BEARER_TOKEN: 'alice:a-secret' },
        push: { allow: ['0.0.0.0/0', '::/0'] },
        ...(store && { store }),
      },
    )
    const { planner, writer } = server.urls as { planner: string; writer: string }
    const call = (url: string, method: string, params: unknown) =>
      postJson(url, { jsonrpc: '2.0', id: 1, method, params }, ALICE)

    const sent = await call(planner, 'SendMessage', userMessageV1('hello'))
    const id: string = sent.body.result.task.id
    // A documentation address (192.0.2.0/24), allowed here: nothing is delivered before the checks below.
    const config = { taskId: id, id: 'hook-1', url: 'https://192.0.2.1/a2a' }
    const created = await call(planner, 'CreateTaskPushNotificationConfig', config)
    expect(created.body.result?.id, JSON.stringify(created.body)).toBe('hook-1')
    const own = await call(writer, 'SendMessage', userMessageV1('mine'))
    const ownId: string = own.body.result.task.id

    expect((await call(writer, 'GetTask', { id })).body.error.code).toBe(-32001)
    const listed = (await call(writer, 'ListTasks', { pageSize: 50 })).body.result
    expect(listed.tasks.map((task: any) => task.id)).toEqual([ownId])
    expect(listed.totalSize).toBe(1)
    expect((await restGetAs(`${writer}tasks/${id}`)).status).toBe(404)
    // Push configs of the planner's task: neither set, read, listed nor deleted through the writer.
    const crossed: Array<[string, unknown]> = [
      ['CreateTaskPushNotificationConfig', { ...config, id: 'hook-2' }],
      ['GetTaskPushNotificationConfig', { taskId: id, id: 'hook-1' }],
      ['ListTaskPushNotificationConfigs', { taskId: id }],
      ['DeleteTaskPushNotificationConfig', { taskId: id, id: 'hook-1' }],
    ]
    for (const [method, params] of crossed)
      expect((await call(writer, method, params)).body.error, method).toMatchObject({ code: -32001 })
    const kept = (await call(planner, 'ListTaskPushNotificationConfigs', { taskId: id })).body.result
    expect(kept.configs.map((each: any) => each.id)).toEqual(['hook-1'])
  })
})
