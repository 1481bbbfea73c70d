import { expect, inject, it } from 'vitest'
import { userMessageV1 } from './_messages.ts'
import { postJson, startAgents } from './_multi-agent.ts'

// Two instances of a two-agent server on one PostgreSQL database named by a setting (A2A_STORE's form): their store
// is made lazily, once the server starts, while the agents' engines handed the store's cluster link their cancel and
// lost-task handlers when the app was made. A cancel sent to one instance reaches the agent running on the other.

const V1 = { 'a2a-version': '1.0' }
const v1 = (url: string, method: string, params: unknown) =>
  postJson(url, { jsonrpc: '2.0', id: 1, method, params }, V1)

it('forwards a cancel sent to B to the planner running the task on A, both on a store made from the setting', async () => {
  const schema = `multi_setting_${Math.random().toString(36).slice(2, 10)}`
  const setting = `${inject('postgresUrl')}?schema=${schema}`
  const a = await startAgents(undefined, { store: setting })
  const b = await startAgents(undefined, { store: setting })
  const onA = a.urls as { planner: string }
  const onB = b.urls as { planner: string; writer: string }

  const held = await v1(onA.planner, 'SendMessage', {
    ...userMessageV1('wait'),
    configuration: { returnImmediately: true },
  })
  const id: string = held.body.result.task.id
  await expect
    .poll(async () => (await v1(onB.planner, 'GetTask', { id })).body.result?.status.state)
    .toBe('TASK_STATE_WORKING')
  // Another agent's task is unknown to the writer on B too.
  expect((await v1(onB.writer, 'CancelTask', { id })).body.error.code).toBe(-32001)
  expect((await v1(onB.planner, 'CancelTask', { id })).body.result.status.state).toBe('TASK_STATE_CANCELED')
  expect((await v1(onA.planner, 'GetTask', { id })).body.result.status.state).toBe('TASK_STATE_CANCELED')
})
