import { metrics } from '@opentelemetry/api'
import { describe, expect, it } from 'vitest'
import { otelTelemetry } from '../../runtime/src/entries/telemetry.ts'
import { rpc } from '../_rpc.ts'
import { agent, deferred } from './_agents.ts'
import { userMessage, userMessageV1 } from './_messages.ts'
import { eventReader } from './_sse.ts'
import { served } from './_telemetry.ts'
import { recordedMetrics } from './_telemetry-metrics.ts'

// The runtime's OpenTelemetry metrics, read through an in-memory MetricReader after a scripted workload over real
// HTTP: requests by method, dialect, binding and outcome; tasks by final state; input waits; running tasks and open
// streams while they last; the budgets and their refusals.

const meters = recordedMetrics()

/** `ask` waits for input, `hold` runs until the test lets it go, `fail` throws, anything else completes. */
function scriptedAgent(gate = deferred()) {
  return agent(async (ctx, task) => {
    if (ctx.text === 'ask') return task.inputRequired('Which colour?')
    if (ctx.text === 'hold') {
      task.working('on it')
      await gate.promise
    }
    if (ctx.text === 'fail') throw new Error('the agent broke')
    task.artifact(`Echo: ${ctx.text}`)
    task.complete()
  })
}

const V1 = { 'content-type': 'application/json', 'a2a-version': '1.0' }

describe('metrics of the A2A operations and tasks', () => {
  it('counts requests by method, dialect, binding and outcome in a duration histogram', async () => {
    const server = await served(scriptedAgent(), { telemetry: otelTelemetry() })
    await rpc(server.url, 'message/send', userMessage('one'))
    await rpc(server.url, 'message/send', userMessage('two'))
    const missing = await rpc(server.url, 'tasks/get', { id: 'no-such-task' })
    const v1 = await fetch(`${server.url}message:send`, {
      method: 'POST',
      headers: V1,
      body: JSON.stringify(userMessageV1('three')),
    })
    expect(v1.status).toBe(200)
    await (await fetch(`${server.url}tasks/no-such-task`, { headers: V1 })).text()

    const duration = 'a2a.server.request.duration'
    expect(await meters.count(duration, { 'a2a.method.name': 'SendMessage', 'a2a.protocol.binding': 'JSONRPC' })).toBe(
      2,
    )
    expect(
      await meters.count(duration, {
        'a2a.method.name': 'GetTask',
        'a2a.protocol.binding': 'JSONRPC',
        'error.type': String(missing.body.error.code),
      }),
    ).toBe(1)
    const rest = { 'a2a.protocol.binding': 'HTTP+JSON', 'a2a.protocol.version': '1.0' }
    expect(await meters.count(duration, { 'a2a.method.name': 'SendMessage', ...rest })).toBe(1)
    expect(await meters.count(duration, { 'a2a.method.name': 'GetTask', ...rest, 'error.type': '404' })).toBe(1)
    const [point] = await meters.points(duration, {
      'a2a.method.name': 'SendMessage',
      'a2a.protocol.binding': 'JSONRPC',
    })
    expect(point!.value.sum).toBeGreaterThan(0)
  })

  it('measures task durations by final state and how long tasks waited for input', async () => {
    const server = await served(scriptedAgent(), { telemetry: otelTelemetry() })
    await rpc(server.url, 'message/send', userMessage('done'))
    await rpc(server.url, 'message/send', userMessage('fail'))
    const asked = (await rpc(server.url, 'message/send', userMessage('ask'))).body.result
    expect(asked.status.state).toBe('input-required')
    // The caller takes a moment to answer: the wait is at least that long.
    await new Promise((resolve) => setTimeout(resolve, 120))
    const answered = await rpc(server.url, 'message/send', userMessage('blue', { taskId: asked.id }))
    expect(answered.body.result.status.state).toBe('completed')

    const tasks = 'a2a.server.task.duration'
    expect(await meters.count(tasks, { 'a2a.task.state': 'TASK_STATE_COMPLETED' })).toBe(2)
    expect(await meters.count(tasks, { 'a2a.task.state': 'TASK_STATE_FAILED' })).toBe(1)
    const [completed] = await meters.points(tasks, { 'a2a.task.state': 'TASK_STATE_COMPLETED' })
    // The asked task's duration covers its wait.
    expect(completed!.value.max).toBeGreaterThanOrEqual(0.1)
    const [wait] = await meters.points('a2a.server.task.input_wait.duration')
    expect(wait!.value.count).toBe(1)
    expect(wait!.value.sum).toBeGreaterThanOrEqual(0.1)
  })

  it('observes running tasks, open streams and the budgets while they are held, and counts refusals by budget', async () => {
    const gate = deferred()
    const server = await served(scriptedAgent(gate), { telemetry: otelTelemetry(), maxStreams: 1 })
    const stream = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/stream', params: userMessage('hold') }),
    })
    const events = eventReader(stream)
    await events.next()
    const refused = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'message/stream', params: userMessage('hold') }),
    })
    expect(refused.status).toBe(503)
    await refused.text()

    expect((await meters.point('a2a.server.active_tasks', {}))?.value).toBe(1)
    expect((await meters.point('a2a.server.active_streams', {}))?.value).toBe(1)
    const running = await meters.point('a2a.server.budget.usage', { 'a2a.budget.name': 'maxRunningBytes' })
    expect(running?.value).toBeGreaterThan(0)
    for (const name of ['maxRunningBytes', 'maxBodyBytesInFlight', 'maxPendingResponseBytes'])
      expect((await meters.point('a2a.server.budget.limit', { 'a2a.budget.name': name }))?.value).toBeGreaterThan(0)
    const refusals = async (name: string) =>
      (await meters.point('a2a.server.budget.refusals', { 'a2a.budget.name': name }))?.value
    expect(await refusals('maxStreams')).toBe(1)
    for (const name of [
      'maxRunningTasks',
      'maxRunningBytes',
      'maxBodyBytesInFlight',
      'maxPendingResponseBytes',
      'maxStreamBacklogBytes',
    ])
      expect(await refusals(name)).toBe(0)

    gate.resolve()
    while (await events.next());
    await expect.poll(async () => (await meters.point('a2a.server.active_streams', {}))?.value).toBe(0)
    // The run lets its task go once the agent returns, a moment after the stream's final event.
    await expect.poll(async () => (await meters.point('a2a.server.active_tasks', {}))?.value).toBe(0)
    await expect
      .poll(
        async () => (await meters.point('a2a.server.budget.usage', { 'a2a.budget.name': 'maxRunningBytes' }))?.value,
      )
      .toBe(0)
    // The stream's operation lasted until its stream ended; the refused one failed.
    const streams = { 'a2a.method.name': 'SendStreamingMessage', 'a2a.protocol.binding': 'JSONRPC' }
    expect(await meters.count('a2a.server.request.duration', streams)).toBe(1)
    const refusedPoints = (await meters.points('a2a.server.request.duration', streams)).filter(
      (point) => point.attributes['error.type'] !== undefined,
    )
    expect(refusedPoints.map((point) => point.value.count)).toEqual([1])
  })

  it('records nothing while no MeterProvider is registered, and measures from the moment one is', async () => {
    const server = await served(scriptedAgent(), { telemetry: otelTelemetry() })
    metrics.disable()
    await rpc(server.url, 'message/send', userMessage('unseen'))
    meters.register()
    await rpc(server.url, 'message/send', userMessage('counted'))
    const sends = { 'a2a.method.name': 'SendMessage', 'a2a.protocol.binding': 'JSONRPC' }
    expect(await meters.count('a2a.server.request.duration', sends)).toBe(1)
    expect(await meters.count('a2a.server.task.duration', { 'a2a.task.state': 'TASK_STATE_COMPLETED' })).toBe(1)
    expect((await meters.point('a2a.server.active_tasks', {}))?.value).toBe(0)
  })
})
