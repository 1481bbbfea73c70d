import { TaskNotCancelableError, TaskTerminalError } from 'a2a-runtime'
import { describe, expect, it } from 'vitest'
import { agent, deferred, gatedAgent } from './_agents.ts'
import { userMessage } from './_messages.ts'
import { eventReader, readEvents } from './_sse.ts'
import { transports } from './_transports.ts'

const streamRequest = (params: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id: 'stream', method: 'message/stream', params })

describe.each(transports)('task lifecycle ($name)', (transport) => {
  describe('every task ends terminal', () => {
    it('fails a task whose agent returns without ending it, says why, and logs a warning naming the agent', async () => {
      const forgetful = agent((_ctx, task) => {
        task.artifact('half an answer')
      })
      const target = await transport.start(forgetful)
      const task = (await target.rpc('message/send', userMessage('x'))).body.result
      expect(task.status.state).toBe('failed')
      expect(task.status.message.parts[0].text).toMatch(/returned without completing/)
      expect(target.logger.text('warn')).toMatch(/Agent "Test Agent" returned without ending task/)
      expect((await target.rpc('tasks/get', { id: task.id })).body.result.status.state).toBe('failed')
    })

    it('fails a task whose agent throws, keeps the error out of the reply, and logs it', async () => {
      const broken = agent(async (_ctx, task) => {
        task.working()
        throw new Error('database password is hunter2')
      })
      const target = await transport.start(broken)
      const reply = await target.rpc('message/send', userMessage('x'))
      expect(reply.body.result.status.state).toBe('failed')
      expect(JSON.stringify(reply.body)).not.toContain('hunter2')
      expect(reply.body.result.status.message.parts[0].text).toMatch(/internal error/)
      expect(target.logger.text('error')).toMatch(/Agent "Test Agent" threw while running task .* hunter2/)
    })

    it('ends the stream of a throwing agent with a failed status', async () => {
      const broken = agent(() => {
        throw new Error('sync boom')
      })
      const target = await transport.start(broken)
      const { events } = await readEvents(await target.post(streamRequest(userMessage('x'))))
      expect(events.map((e) => e.params.status?.state)).toEqual(['working', 'failed'])
    })

    it('refuses to move a terminal task: a second complete() throws TaskTerminalError and the task stays completed', async () => {
      const caught = deferred<unknown>()
      const twice = agent((_ctx, task) => {
        task.artifact('answer')
        task.complete()
        try {
          task.fail('changed my mind')
        } catch (error) {
          caught.resolve(error)
        }
      })
      const target = await transport.start(twice)
      const task = (await target.rpc('message/send', userMessage('x'))).body.result
      expect(await caught.promise).toBeInstanceOf(TaskTerminalError)
      expect(task.status.state).toBe('completed')
      expect((await target.rpc('tasks/get', { id: task.id })).body.result.status.state).toBe('completed')
    })

    it('warns, naming the agent, when a task completes with its answer only in the status message', async () => {
      const statusOnly = agent((_ctx, task) => task.complete('the answer is 42'))
      const target = await transport.start(statusOnly)
      const task = (await target.rpc('message/send', userMessage('x'))).body.result
      expect(task.status.state).toBe('completed')
      expect(target.logger.text('warn')).toMatch(/Agent "Test Agent" completed task .* only in the status message/)
    })

    it('does not warn when the answer is in an artifact', async () => {
      const good = agent((_ctx, task) => {
        task.artifact('42')
        task.complete('done')
      })
      const target = await transport.start(good)
      await target.rpc('message/send', userMessage('x'))
      expect(target.logger.text('warn')).toBe('')
    })

    it('accepts data and parts artifacts as well as text', async () => {
      const mixed = agent((_ctx, task) => {
        task.artifact({ temperature: 21 }, { name: 'weather' })
        task.artifact([
          { kind: 'text', text: 'a' },
          { kind: 'data', data: { b: 1 } },
        ])
        task.complete()
      })
      const target = await transport.start(mixed)
      const task = (await target.rpc('message/send', userMessage('x'))).body.result
      expect(task.artifacts[0]).toMatchObject({ name: 'weather', parts: [{ kind: 'data', data: { temperature: 21 } }] })
      expect(task.artifacts[1].parts).toEqual([
        { kind: 'text', text: 'a' },
        { kind: 'data', data: { b: 1 } },
      ])
    })
  })

  describe('tasks/cancel', () => {
    it("cancels a running task through the agent's cancel: the signal fires and the stream ends canceled", async () => {
      const gated = gatedAgent({ cancelable: true })
      const target = await transport.start(gated.agent)
      const response = await target.post(streamRequest(userMessage('long job')))
      const events = eventReader(response)
      const taskId = await gated.started
      const reply = await target.rpc('tasks/cancel', { id: taskId }, { id: 'c1' })
      expect(reply.body.id).toBe('c1')
      expect(reply.body.result).toMatchObject({ id: taskId, status: { state: 'canceled' } })
      expect(gated.seen.cancelCalls).toBe(1)

      const states: string[] = []
      for (let event = await events.next(); event; event = await events.next()) {
        if (event.method === 'tasks/statusUpdate') states.push(event.params.status.state)
      }
      expect(states.at(-1)).toBe('canceled')
      await expect.poll(() => gated.seen.aborted).toBe(true)
      // The agent's late artifact() and complete() after the abort are ignored: the task stays canceled.
      const stored = (await target.rpc('tasks/get', { id: taskId })).body.result
      expect(stored.status.state).toBe('canceled')
      expect(stored.artifacts).toEqual([])
    })

    it('answers TaskNotCancelable (-32002) when the agent has no cancel, and the task runs on to completion', async () => {
      const gated = gatedAgent({ cancelable: false })
      const target = await transport.start(gated.agent)
      const sent = target.rpc('message/send', userMessage('x'))
      const taskId = await gated.started
      const reply = await target.rpc('tasks/cancel', { id: taskId }, { id: 'c2' })
      expect(reply.body).toMatchObject({ id: 'c2', error: { code: -32002 } })
      expect(reply.body.error.message).toMatch(/does not support/)
      expect(gated.seen.aborted).toBe(false)
      gated.release()
      expect((await sent).body.result.status.state).toBe('completed')
    })

    it('answers -32002 when the agent refuses with TaskNotCancelableError, and the task is unchanged', async () => {
      const release = deferred()
      const stubborn = agent(
        async (_ctx, task) => {
          task.working('busy')
          await release.promise
          task.artifact('done')
          task.complete()
        },
        {
          cancel: () => {
            throw new TaskNotCancelableError('Too late to stop the rocket')
          },
        },
      )
      const target = await transport.start(stubborn)
      const task = (await target.rpc('message/send', { ...userMessage('x'), configuration: { blocking: false } })).body
        .result
      const reply = await target.rpc('tasks/cancel', { id: task.id })
      expect(reply.body.error).toEqual({ code: -32002, message: 'Too late to stop the rocket' })
      expect((await target.rpc('tasks/get', { id: task.id })).body.result.status.state).toBe('working')
      release.resolve()
      await expect
        .poll(async () => (await target.rpc('tasks/get', { id: task.id })).body.result.status.state)
        .toBe('completed')
    })

    it.each(['completed', 'failed', 'canceled'] as const)(
      'answers -32002 for a %s task and leaves it unchanged',
      async (end) => {
        const ender = agent(
          (_ctx, task) => {
            task.artifact('result')
            if (end === 'completed') task.complete()
            else if (end === 'failed') task.fail('could not')
            else task.cancel()
          },
          { cancel: () => {} },
        )
        const target = await transport.start(ender)
        const task = (await target.rpc('message/send', userMessage('x'))).body.result
        expect(task.status.state).toBe(end)
        const reply = await target.rpc('tasks/cancel', { id: task.id }, { id: 'late' })
        expect(reply.body).toMatchObject({ id: 'late', error: { code: -32002 } })
        expect(reply.body.error.message).toContain(end)
        expect((await target.rpc('tasks/get', { id: task.id })).body.result).toEqual(task)
      },
    )

    it('answers an unknown task with -32602 "Task not found"', async () => {
      const target = await transport.start(gatedAgent().agent)
      const reply = await target.rpc('tasks/cancel', { id: 'ghost' })
      expect(reply.body.error).toEqual({ code: -32602, message: 'Task not found' })
    })

    it('cancels a task that waits for input', async () => {
      const asker = agent((_ctx, task) => task.inputRequired('Which city?'), { cancel: () => {} })
      const target = await transport.start(asker)
      const task = (await target.rpc('message/send', userMessage('weather'))).body.result
      expect(task.status.state).toBe('input-required')
      const reply = await target.rpc('tasks/cancel', { id: task.id })
      expect(reply.body.result.status.state).toBe('canceled')
    })
  })

  describe('input-required and follow-up turns', () => {
    const weatherAgent = () =>
      agent((ctx, task) => {
        if (ctx.history.length === 1) {
          task.inputRequired('Which city?')
          return
        }
        const said = ctx.history.map(
          (m) => `${m.role}:${m.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('')}`,
        )
        task.artifact(`Sunny in ${ctx.text} (${said.join(' | ')})`)
        task.complete()
      })

    it('returns the task waiting for input, then resumes it when a message names it, with the whole history', async () => {
      const target = await transport.start(weatherAgent())
      const first = (await target.rpc('message/send', userMessage('weather please'))).body.result
      expect(first.status.state).toBe('input-required')
      expect(first.status.message).toMatchObject({ role: 'agent', parts: [{ kind: 'text', text: 'Which city?' }] })

      const second = (await target.rpc('message/send', userMessage('Paris', { taskId: first.id }))).body.result
      expect(second.id).toBe(first.id)
      expect(second.contextId).toBe(first.contextId)
      expect(second.status.state).toBe('completed')
      expect(second.artifacts[0].parts[0].text).toBe(
        'Sunny in Paris (user:weather please | agent:Which city? | user:Paris)',
      )
      expect(second.history).toHaveLength(3)
    })

    it('accepts the task id in params.id and the same contextId', async () => {
      const target = await transport.start(weatherAgent())
      const first = (await target.rpc('message/send', userMessage('weather'))).body.result
      const second = (
        await target.rpc('message/send', { ...userMessage('Oslo', { contextId: first.contextId }), id: first.id })
      ).body.result
      expect(second.status.state).toBe('completed')
      expect(second.artifacts[0].parts[0].text).toMatch(/^Sunny in Oslo/)
    })

    it('refuses a follow-up whose contextId belongs to another conversation', async () => {
      const target = await transport.start(weatherAgent())
      const first = (await target.rpc('message/send', userMessage('weather'))).body.result
      const reply = await target.rpc('message/send', {
        ...userMessage('Rome', { taskId: first.id }),
        metadata: { contextId: 'other' },
      })
      expect(reply.body.error.code).toBe(-32602)
      expect(reply.body.error.message).toMatch(/contextId/)
      expect((await target.rpc('tasks/get', { id: first.id })).body.result.status.state).toBe('input-required')
    })

    it('streams a follow-up turn from working to completed, and the first turn ends at input-required', async () => {
      const target = await transport.start(weatherAgent())
      const firstTurn = await readEvents(await target.post(streamRequest(userMessage('weather'))))
      expect(firstTurn.events.map((e) => e.params.status?.state)).toEqual(['working', 'input-required'])
      const taskId = firstTurn.events[0].params.taskId
      const secondTurn = await readEvents(await target.post(streamRequest(userMessage('Lima', { taskId }))))
      const summary = secondTurn.events.map((e) => e.params.status?.state ?? 'artifact')
      expect(summary).toEqual(['working', 'artifact', 'completed'])
      expect(new Set(secondTurn.events.map((e) => e.params.taskId))).toEqual(new Set([taskId]))
    })

    it('refuses a message to a completed task with -32602 and to an unknown task with "Task not found"', async () => {
      const target = await transport.start(agent((_ctx, task) => task.complete()))
      const done = (await target.rpc('message/send', userMessage('x'))).body.result
      const again = await target.rpc('message/send', userMessage('more', { taskId: done.id }))
      expect(again.body.error.code).toBe(-32602)
      expect(again.body.error.message).toMatch(/completed/)
      const unknown = await target.rpc('message/send', userMessage('more', { taskId: 'nope' }))
      expect(unknown.body.error).toEqual({ code: -32602, message: 'Task not found' })
    })
  })
})
