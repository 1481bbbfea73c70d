import { describe, expect, it } from 'vitest'
import { otelTelemetry } from '../../runtime/src/entries/telemetry.ts'
import { userMessageV1 } from './_messages.ts'
import { postJson, startAgents } from './_multi-agent.ts'
import { recordedMetrics } from './_telemetry-metrics.ts'

/**
 * A server of several agents with telemetry on: the running tasks and the budgets are the server's, every agent's
 * counted, observed for the server as a whole, and no longer once it closed.
 */

const meters = recordedMetrics()
const V1 = { 'a2a-version': '1.0' }
const MIB = 1024 * 1024

describe('the metrics of a server of several agents', () => {
  it('count every agent’s running tasks and the server’s budgets, until it closes', async () => {
    const server = await startAgents(undefined, {
      telemetry: otelTelemetry(),
      maxRunningBytes: 64 * MIB,
      maxTaskBytes: 4 * MIB,
    })
    const { planner, writer } = server.urls as { planner: string; writer: string }
    const hold = { ...userMessageV1('wait'), configuration: { returnImmediately: true } }
    const held = await Promise.all(
      [planner, writer].map((url) => postJson(url, { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: hold }, V1)),
    )
    expect(held.map((answer) => answer.body.result.task.status.state)).toEqual([
      'TASK_STATE_WORKING',
      'TASK_STATE_WORKING',
    ])
    await expect.poll(async () => (await meters.point('a2a.server.active_tasks', {}))?.value).toBe(2)
    // Each agent's share of maxRunningBytes, together the server's.
    const limit = await meters.point('a2a.server.budget.limit', { 'a2a.budget.name': 'maxRunningBytes' })
    expect(limit?.value).toBe(64 * MIB)

    const [plannerTask, writerTask] = held.map((answer) => answer.body.result.task.id as string)
    const cancel = (url: string, id: string) =>
      postJson(url, { jsonrpc: '2.0', id: 2, method: 'CancelTask', params: { id } }, V1)
    await cancel(planner, plannerTask!)
    await expect.poll(async () => (await meters.point('a2a.server.active_tasks', {}))?.value).toBe(1)
    await cancel(writer, writerTask!)
    await server.close()
    // Closed, it is no longer observed: the next server's budget is its own alone.
    await startAgents(undefined, { telemetry: otelTelemetry(), maxRunningBytes: 32 * MIB, maxTaskBytes: 4 * MIB })
    const next = await meters.point('a2a.server.budget.limit', { 'a2a.budget.name': 'maxRunningBytes' })
    expect(next?.value).toBe(32 * MIB)
  })
})
