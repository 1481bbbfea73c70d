import { describe, expect, it } from 'vitest'
import { replaceAgent } from '../../runtime/src/multi/_agent-set.ts'
import { sdkTestAgent } from '../_sdk-v1.ts'
import { userMessageV1 } from './_messages.ts'
import { planner, postJson, startAgents } from './_multi-agent.ts'
import { eventReader } from './_sse.ts'

/**
 * An agent reloaded with or without credentials (`a2a dev` serves each save through `replaceAgent`): its view of the
 * shared store follows the version served now. Dropping them must not open the other agents' tasks to its anonymous
 * callers; adding them must not hide its callers' own tasks from the runtime's reads.
 */

const V1 = { 'a2a-version': '1.0' }
const ALICE = { authorization: 'Bearer a-secret' }
// As a2a dev reads them from .env: the option would be refused beside a card that declares no bearer scheme.
const env = { A2A_BEARER_TOKEN: 'alice:a-secret' }
const writerCard = { name: 'Writer', description: 'Writes', capabilities: { streaming: true } }
const openWriter = sdkTestAgent(writerCard, { waitMs: 30_000 })
const guardedWriter = sdkTestAgent({ ...writerCard, authentication: { schemes: ['bearer'] } }, { waitMs: 30_000 })

const call = (url: string, method: string, params: unknown, headers: Record<string, string> = {}) =>
  postJson(url, { jsonrpc: '2.0', id: 1, method, params }, { ...V1, ...headers })

describe('an agent reloaded with other credentials', () => {
  it("that drops them (bearer → none) still finds none of another agent's tasks", async () => {
    const server = await startAgents({ planner, writer: guardedWriter }, { env })
    const { planner: plannerUrl, writer: writerUrl } = server.urls as { planner: string; writer: string }
    const planned = await call(plannerUrl, 'SendMessage', userMessageV1('hello'))
    const id: string = planned.body.result.task.id

    expect(replaceAgent(server.app, 'writer', openWriter)).toBe('replaced')
    // The writer now takes anonymous callers: they are its own anonymous owner, not every owner of the store.
    expect((await call(writerUrl, 'GetTask', { id })).body.error.code).toBe(-32001)
    const listed = (await call(writerUrl, 'ListTasks', { pageSize: 50 })).body.result
    expect(listed.tasks).toEqual([])
    expect(listed.totalSize).toBe(0)
    expect((await fetch(`${writerUrl}tasks/${id}`, { headers: V1 })).status).toBe(404)
    // Its own anonymous tasks answer.
    const own = await call(writerUrl, 'SendMessage', userMessageV1('mine'))
    expect((await call(writerUrl, 'GetTask', { id: own.body.result.task.id })).body.result.id).toBe(
      own.body.result.task.id,
    )
  })

  it("that adds them (none → bearer) serves its callers' own tasks and still none of another agent's", async () => {
    const server = await startAgents({ planner, writer: openWriter }, { env })
    const { planner: plannerUrl, writer: writerUrl } = server.urls as { planner: string; writer: string }
    const planned = await call(plannerUrl, 'SendMessage', userMessageV1('hello'))
    const plannedId: string = planned.body.result.task.id

    expect(replaceAgent(server.app, 'writer', guardedWriter)).toBe('replaced')
    expect((await call(writerUrl, 'GetTask', { id: plannedId })).status).toBe(401)
    expect((await call(writerUrl, 'GetTask', { id: plannedId }, ALICE)).body.error.code).toBe(-32001)
    expect((await call(writerUrl, 'ListTasks', { pageSize: 50 }, ALICE)).body.result.tasks).toEqual([])

    // Alice's task waits for input; subscribing reads it back without an owner once hers was checked.
    const asked = await call(writerUrl, 'SendMessage', userMessageV1('ask'), ALICE)
    expect(asked.body.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED')
    const id: string = asked.body.result.task.id
    const subscribed = await fetch(`${writerUrl}tasks/${id}:subscribe`, {
      method: 'POST',
      headers: { ...V1, ...ALICE },
    })
    expect(subscribed.status).toBe(200)
    const events = eventReader(subscribed)
    expect((await events.next()).task.status.state).toBe('TASK_STATE_INPUT_REQUIRED')
    expect((await call(writerUrl, 'CancelTask', { id }, ALICE)).body.result.status.state).toBe('TASK_STATE_CANCELED')
    let last: any
    for (let event = await events.next(); event; event = await events.next()) last = event
    expect(last.statusUpdate.status.state).toBe('TASK_STATE_CANCELED')
  })
})
