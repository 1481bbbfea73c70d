import { describe, expect, it } from 'vitest'
import { userMessageV1 } from './_messages.ts'
import { postJson, startAgents } from './_multi-agent.ts'

/**
 * A v1.0 JSON-RPC request carries a `tenant` (the card's interfaces give each agent's): one sent to an agent but
 * naming another is refused, naming `params.tenant`, never answered by the agent it reached as if it were the other.
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
    const typed = await call(writer, 'ListTasks', { tenant: 3 })
    expect(typed.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/params\.tenant.*string/) })
  })
})
