import { describe, expect, it } from 'vitest'
import { userMessageV1 } from './_messages.ts'
import { postJson, startAgents } from './_multi-agent.ts'

/**
 * A v1.0 request carries a `tenant` (the card's interfaces give each agent's): one sent to an agent but naming
 * another is refused, naming `params.tenant` in JSON-RPC and `tenant` in HTTP+JSON (body or query), never answered by
 * the agent it reached as if it were the other.
 */

const V1 = { 'a2a-version': '1.0' }
const call = (url: string, method: string, params: unknown) =>
  postJson(url, { jsonrpc: '2.0', id: 7, method, params }, V1)

describe('a JSON-RPC tenant naming another agent', () => {
  it('is refused at the agent it reached, at POST /<name> and /<name>/v0.3; its own tenant or none is served', async () => {
    const { urls } = await startAgents()
    const { planner, writer } = urls as { planner: string; writer: string }
    const own = await call(planner, 'SendMessage', { ...userMessageV1('hello'), tenant: 'planner' })
    expect(own.body.result.task.status.state).toBe('TASK_STATE_COMPLETED')
    const id: string = own.body.result.task.id
    expect((await call(planner, 'GetTask', { id })).body.result.id).toBe(id)

    for (const url of [writer, `${writer}v0.3`]) {
      const crossed = await call(url, 'GetTask', { id, tenant: 'planner' })
      expect(crossed.body.error.code).toBe(-32602)
      expect(crossed.body.error.message).toMatch(/params\.tenant.*"planner".*not this agent's.*"writer"/)
      expect(crossed.body.id).toBe(7)
    }
    // A send naming another tenant runs nothing: the writer has no task.
    const sent = await call(writer, 'SendMessage', { ...userMessageV1('hi'), tenant: 'planner' })
    expect(sent.body.error.code).toBe(-32602)
    expect((await call(writer, 'ListTasks', { pageSize: 10 })).body.result.totalSize).toBe(0)
    // null is the field left unset (ProtoJSON): served.
    expect((await call(writer, 'ListTasks', { tenant: null })).body.result.totalSize).toBe(0)
    const typed = await call(writer, 'ListTasks', { tenant: 3 })
    expect(typed.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/params\.tenant.*string/) })
  })

  it('is refused over HTTP+JSON with 400 naming `tenant`, in the body or the query; its own is served', async () => {
    const { urls } = await startAgents()
    const { planner, writer } = urls as { planner: string; writer: string }
    const post = (url: string, body: unknown) =>
      fetch(url, { method: 'POST', headers: { ...V1, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const own = await post(`${planner}message:send`, { ...userMessageV1('hello'), tenant: 'planner' })
    expect(own.status).toBe(200)
    const id: string = (await own.json()).task.id

    const refusals = [
      await post(`${writer}message:send`, { ...userMessageV1('hi'), tenant: 'planner' }),
      // The path names the agent's own tenant; the body another.
      await post(`${writer}writer/message:send`, { ...userMessageV1('hi'), tenant: 'planner' }),
      await post(`${writer}tasks/${id}:cancel`, { tenant: 'planner' }),
      await fetch(`${writer}tasks/${id}?tenant=planner`, { headers: V1 }),
    ]
    for (const refused of refusals) {
      expect(refused.status, refused.url).toBe(400)
      const { error } = await refused.json()
      expect(error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' })
      expect(error.message).toMatch(/^`tenant` "planner" is not this agent's: this is "writer"/)
    }
    // The path names the agent's own tenant and the query another: refused, not answered by the path's.
    const crossedQuery = await fetch(`${writer}writer/tasks/${id}?tenant=planner`, { headers: V1 })
    expect(crossedQuery.status).toBe(400)
    expect((await crossedQuery.json()).error.message).toMatch(
      /^`tenant` "planner" differs from the path's tenant "writer"/,
    )
    // The refused send ran nothing; the planner's task was not canceled.
    expect((await call(writer, 'ListTasks', { pageSize: 10 })).body.result.totalSize).toBe(0)
    const kept = await fetch(`${planner}tasks/${id}`, { headers: V1 })
    expect((await kept.json()).status.state).toBe('TASK_STATE_COMPLETED')
    expect((await post(`${writer}message:send`, { ...userMessageV1('mine'), tenant: 'writer' })).status).toBe(200)
  })
})
