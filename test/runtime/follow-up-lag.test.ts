import { type A2AServer, type Agent, serveAgent } from 'a2a-runtime'
import { createPostgresStore } from 'a2a-runtime/postgres-store'
import { afterEach, expect, inject, it } from 'vitest'
import { rpc } from '../_rpc.ts'
import { agent } from './_agents.ts'
import { captureLogger } from './_logger.ts'
import { eventReader } from './_sse.ts'

// The instance running a task streams each event as it hands it to the shared store: a client can hear a question
// (input-required) before the store holds it, and answer it at once through another instance. That instance must
// take the answer as the follow-up it is, not refuse it as sent to a task still working elsewhere.

const PAD = 'x'.repeat(2048)
const url = inject('postgresUrl')
const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function instance(served: Agent, schema: string): Promise<A2AServer> {
  const server = await serveAgent(served, {
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
    logger: captureLogger(),
    store: createPostgresStore({ url, schema, leaseMs: 10_000 }),
    shutdownTimeoutMs: 500,
  })
  cleanups.push(() => server.close())
  return server
}

const message = (text: string, taskId?: string) => ({
  message: {
    role: 'user',
    messageId: `m-${Math.random()}`,
    parts: [{ kind: 'text', text }],
    ...(taskId && { taskId }),
  },
})

it('takes, on B, the answer to a question A streamed before its store write landed (2,000 chunks ahead of it)', {
  timeout: 60_000,
}, async () => {
  const schema = `lag_${Math.random().toString(36).slice(2, 10)}`
  const chatty = agent((ctx, task) => {
    if (ctx.history.length > 1) return task.complete('thanks')
    for (let i = 0; i < 2000; i++) task.artifact(`chunk ${i} ${PAD}`, { artifactId: 'draft', append: i > 0 })
    task.inputRequired('which one?')
  })
  const [a, b] = [await instance(chatty, schema), await instance(chatty, schema)]
  const stream = await fetch(a.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/stream', params: message('draft it') }),
  })
  const reader = eventReader(stream)
  let taskId: string | undefined
  for (;;) {
    const event = await reader.next()
    expect(event, 'the stream ended before the question').toBeDefined()
    // The platform's stream: a result first (the task), then notifications (`params`) for its updates.
    const update = event.result ?? event.params
    taskId ??= update.taskId ?? update.id
    if (update.status?.state === 'input-required') break
  }
  // Answered the moment it is heard, through the other instance.
  const { body } = await rpc(b.url, 'message/send', message('the first', taskId))
  expect(body.error, JSON.stringify(body.error)).toBeUndefined()
  expect(body.result.status.state).toBe('completed')
  await reader.cancel()
})

it('still refuses, on B, a follow-up to a task that works on A and asks nothing, naming why', async () => {
  const schema = `lag_${Math.random().toString(36).slice(2, 10)}`
  let finish = () => {}
  const busy = agent(async (_ctx, task) => {
    task.working('thinking')
    await new Promise<void>((resolve) => {
      finish = resolve
    })
    task.complete('done')
  })
  const [a, b] = [await instance(busy, schema), await instance(busy, schema)]
  const { body: started } = await rpc(a.url, 'message/send', {
    ...message('think'),
    configuration: { blocking: false },
  })
  const taskId = started.result.id
  const { body } = await rpc(b.url, 'message/send', message('and now?', taskId))
  expect(body.error).toMatchObject({
    code: -32602,
    message: expect.stringMatching(/still working on another instance/),
  })
  finish()
})
