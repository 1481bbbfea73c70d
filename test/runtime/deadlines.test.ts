import { defineAgent } from 'a2a-runtime'
import { describe, expect, it } from 'vitest'
import { agent, deferred } from './_agents.ts'
import { userMessage } from './_messages.ts'
import { readEvents } from './_sse.ts'
import { transports } from './_transports.ts'

describe.each(transports)('task deadlines ($name)', (transport) => {
  it('fails a turn that runs past timeoutMs with the reason, fires ctx.signal, and refuses the late moves', async () => {
    const seen = { aborted: false, lateMove: '' }
    const stuck = agent(
      async (ctx, task) => {
        task.working('thinking')
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }))
        seen.aborted = true
        try {
          task.complete('too late')
        } catch (error) {
          seen.lateMove = (error as Error).name
        }
      },
      { timeoutMs: 150 },
    )
    const target = await transport.start(stuck)
    const started = Date.now()
    const task = (await target.rpc('message/send', userMessage('x'))).body.result
    expect(Date.now() - started).toBeGreaterThanOrEqual(140)
    expect(task.status.state).toBe('failed')
    expect(task.status.message.parts[0].text).toBe('The task took longer than its limit of 150 ms')
    await expect.poll(() => seen.lateMove).toBe('TaskTerminalError')
    expect(seen.aborted).toBe(true)
    expect((await target.rpc('tasks/get', { id: task.id })).body.result.status.state).toBe('failed')
    expect(target.logger.text('warn')).toMatch(/passed its time limit \(150 ms\); it is failed/)
  })

  it('takes an agent stopped by the refused move after its deadline as no fault: no error logged', async () => {
    const moved = deferred()
    const late = agent(
      async (ctx, task) => {
        task.working('thinking')
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }))
        try {
          task.artifact('too late') // throws TaskTerminalError, out of execute
        } finally {
          moved.resolve()
        }
      },
      { timeoutMs: 100 },
    )
    const target = await transport.start(late)
    const task = (await target.rpc('message/send', userMessage('x'))).body.result
    expect(task.status.state).toBe('failed')
    await moved.promise
    await expect
      .poll(() => target.logger.text('debug'))
      .toMatch(/stopped on a refused move after task .* had ended \(failed\)/)
    expect(target.logger.text('error')).toBe('')
  })

  it('still logs an agent that moves its own ended task as an error', async () => {
    const twice = agent(async (_ctx, task) => {
      task.complete('done')
      task.artifact('after the end') // the agent's own bug: it ended the task itself
    })
    const target = await transport.start(twice)
    expect((await target.rpc('message/send', userMessage('x'))).body.result.status.state).toBe('completed')
    await expect.poll(() => target.logger.text('error')).toMatch(/threw after task .* had ended \(completed\)/)
  })

  it('ends the stream of a timed-out task with the failed status', async () => {
    // The agent never returns: the shutdown after the test need not wait the default grace for it.
    const target = await transport.start(
      agent(() => new Promise(() => {}), { timeoutMs: 100 }),
      { shutdownTimeoutMs: 50 },
    )
    const response = await target.post(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/stream', params: userMessage('x') }),
    )
    const { events } = await readEvents(response)
    expect(events.at(-1).params).toMatchObject({ final: true, status: { state: 'failed' } })
  })

  it('leaves a turn that ends in time alone: no failure arrives later', async () => {
    // "quick" ends at once; "stuck" waits for its deadline. Started after the quick turn, the stuck one is
    // failed after the quick one's deadline would have passed: by then a wrong failure would have arrived.
    const twoKinds = agent(
      async (ctx, task) => {
        if (ctx.text === 'quick') {
          task.artifact('done')
          return task.complete()
        }
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }))
      },
      { timeoutMs: 300 },
    )
    const target = await transport.start(twoKinds)
    const task = (await target.rpc('message/send', userMessage('quick'))).body.result
    expect(task.status.state).toBe('completed')
    const stuck = (await target.rpc('message/send', userMessage('stuck'))).body.result
    expect(stuck.status.state).toBe('failed')
    expect((await target.rpc('tasks/get', { id: task.id })).body.result.status.state).toBe('completed')
    expect(target.logger.text('warn')).toMatch(new RegExp(`task ${stuck.id} passed its time limit`))
    expect(target.logger.text('warn')).not.toContain(task.id)
  })
})

describe('defineAgent timeoutMs', () => {
  it.each([0, -1, 1.5, Number.NaN, 2 ** 31, '100'])('refuses %j, naming the field', (timeoutMs) => {
    expect(() =>
      defineAgent({ card: { name: 'T', description: 'd' }, execute: () => {}, timeoutMs: timeoutMs as number }),
    ).toThrow(/`timeoutMs` must be a whole number of milliseconds/)
  })
})
