import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { agent } from './_agents.ts'
import { eventReader } from './_sse.ts'
import { nodeServer } from './_transports.ts'

/**
 * In-task authorization (A2A §7.6): the agent asks for an authorization with `task.authorization()`, the task waits in
 * auth-required while the agent obtains it out of band, then goes on by itself; clients follow it meanwhile.
 */

const V1 = { 'a2a-version': '1.0' }
const send = (text: string, taskId?: string) => ({
  message: { role: 'ROLE_USER', messageId: randomUUID(), parts: [{ text }], ...(taskId && { taskId }) },
})

/** An approval obtained out of band: the test grants it (or not) when it wants. */
function approvals() {
  const waiting: Array<{ grant: (who: string) => void; signal: AbortSignal }> = []
  return {
    waiting,
    until: (signal: AbortSignal) =>
      new Promise<string>((resolve, reject) => {
        waiting.push({ grant: resolve, signal })
        signal.addEventListener('abort', () => reject(signal.reason), { once: true })
      }),
  }
}

describe('task.authorization(): authorization obtained out of band', () => {
  it('the task waits in auth-required with the message, follow-ups are refused, and it goes on once granted', async () => {
    const approval = approvals()
    const target = await nodeServer.start(
      agent(async (_ctx, task) => {
        const approver = await task.authorization(
          'Approve the transfer at https://approve.example/t/42',
          approval.until,
        )
        task.artifact(`Transferred, approved by ${approver}`)
        task.complete()
      }),
    )
    const sent = await target.rpc('SendMessage', send('transfer 100'), { headers: V1 })
    const task = sent.body.result.task
    expect(task.status.state).toBe('TASK_STATE_AUTH_REQUIRED')
    expect(task.status.message.parts[0].text).toBe('Approve the transfer at https://approve.example/t/42')

    const stream = await target.fetch('/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...V1 },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'SubscribeToTask', params: { id: task.id } }),
    })
    const events = eventReader(stream)
    expect((await events.next()).result.task.status.state).toBe('TASK_STATE_AUTH_REQUIRED')

    const followUp = await target.rpc('SendMessage', send('here is my token', task.id), { headers: V1 })
    expect(followUp.body.error.code).toBe(-32602)
    expect(followUp.body.error.message).toContain('waits for an authorization the agent obtains out of band')

    approval.waiting[0]!.grant('the treasurer')
    const states: string[] = []
    for (let event = await events.next(); event; event = await events.next()) {
      const update = event.result.statusUpdate ?? event.result.artifactUpdate
      states.push(event.result.statusUpdate ? update.status.state : 'artifact')
    }
    expect(states).toEqual(['TASK_STATE_WORKING', 'artifact', 'TASK_STATE_COMPLETED'])
    const done = await target.rpc('GetTask', { id: task.id }, { headers: V1 })
    expect(done.body.result.artifacts[0].parts[0].text).toBe('Transferred, approved by the treasurer')
  })

  it('a cancel while it waits fires the signal the wait was given, and the task ends canceled', async () => {
    const approval = approvals()
    const target = await nodeServer.start(
      agent(
        async (_ctx, task) => {
          await task.authorization('Approve at https://approve.example/t/43', approval.until)
          task.complete()
        },
        { cancel: (_ctx, task) => task.cancel() },
      ),
    )
    const task = (await target.rpc('SendMessage', send('transfer'), { headers: V1 })).body.result.task
    const canceled = await target.rpc('CancelTask', { id: task.id }, { headers: V1 })
    expect(canceled.body.result.status.state).toBe('TASK_STATE_CANCELED')
    expect(approval.waiting[0]!.signal.aborted).toBe(true)
    await expect
      .poll(async () => (await target.rpc('GetTask', { id: task.id }, { headers: V1 })).body.result.status.state)
      .toBe('TASK_STATE_CANCELED')
  })
})
