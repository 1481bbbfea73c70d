import { createServer, connect as netConnect, type Server, type Socket } from 'node:net'
import { type A2AServer, type Agent, serveAgent, TaskNotCancelableError } from 'a2a-runtime'
import { createRedisStore } from 'a2a-runtime/redis-store'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { rpc } from '../_rpc.ts'
import { agent, deferred, gatedAgent } from './_agents.ts'
import { captureLogger } from './_logger.ts'
import { type RedisServer, startRedis } from './_redis.ts'

// Redis delivers a published message at most once, to the connections subscribed at that moment: an instance whose
// listening connection is still connecting (it has just started) or reconnecting misses a cancel forwarded then.

let redis: RedisServer
const cleanups: Array<() => unknown> = []

beforeAll(async () => {
  redis = await startRedis()
})
afterAll(async () => {
  await redis?.stop()
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/**
 * A TCP proxy to Redis that holds back what a connection sends from its first SUBSCRIBE on, until `release()`:
 * the instance behind it runs tasks while its listening connection is not subscribed yet, as on a loaded machine
 * where that second connection comes up late.
 */
async function subscribeHoldingProxy(redisPort: number) {
  const held: Array<() => void> = []
  let holding = true
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = netConnect(redisPort, '127.0.0.1')
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => sockets.delete(socket))
    }
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
    upstream.pipe(client)
    let stuck: Buffer[] | undefined
    client.on('data', (chunk: Buffer) => {
      if (stuck) return void stuck.push(chunk)
      // A command's name is a bulk string of its own in the protocol: `$9\r\nsubscribe\r\n`.
      if (holding && /\r\nsubscribe\r\n/i.test(chunk.toString('latin1'))) {
        stuck = [chunk]
        held.push(() => {
          for (const part of stuck ?? []) upstream.write(part)
          stuck = undefined
        })
        return
      }
      upstream.write(chunk)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `redis://127.0.0.1:${port}/0`,
    /** Connections whose SUBSCRIBE waits here. */
    held: () => held.length,
    release() {
      holding = false
      for (const flush of held.splice(0)) flush()
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

const freshPrefix = () => `cancel-${Math.random().toString(36).slice(2, 10)}:`
const sendGo = (server: A2AServer) =>
  call(server, 'message/send', {
    message: { role: 'user', messageId: `m-${Math.random()}`, parts: [{ kind: 'text', text: 'go' }] },
    configuration: { blocking: false },
  })

/** Hears what is published on the channels matching `pattern` (as the instances would), from now on. */
async function watch(pattern: string): Promise<{ first: Promise<string> }> {
  const watcher = new Redis(redis.url)
  cleanups.push(() => watcher.disconnect())
  const first = new Promise<string>((resolve) =>
    watcher.once('pmessage', (_pattern, _channel, message: string) => resolve(message)),
  )
  await watcher.psubscribe(pattern)
  return { first }
}

async function instance(served: Agent, url: string, prefix: string): Promise<A2AServer> {
  const store = createRedisStore({ url, prefix })
  const logger = captureLogger()
  const server = await serveAgent(served, {
    port: 0,
    hostname: '127.0.0.1',
    handleSignals: false,
    logger,
    store,
    shutdownTimeoutMs: 500,
  })
  cleanups.push(() => server.close())
  return server
}

const call = async (server: { url: string }, method: string, params: unknown) =>
  (await rpc(server.url, method, params)).body

it('cancels, from B, a task running on A whose listening connection subscribed only after B had first asked', async () => {
  const proxy = await subscribeHoldingProxy(redis.port)
  cleanups.push(() => proxy.close())
  const prefix = freshPrefix()
  const gated = gatedAgent()
  const a = await instance(gated.agent, proxy.url, prefix)
  const b = await instance(gated.agent, redis.url, prefix)
  const asked = await watch(`${prefix}cancel`)
  const sent = (await sendGo(a)).result
  await gated.started
  expect(proxy.held(), "A's listening connection, its SUBSCRIBE held back").toBe(1)

  const canceling = call(b, 'tasks/cancel', { id: sent.id })
  expect(JSON.parse(await asked.first)).toMatchObject({ taskId: sent.id })
  // Published while A was not subscribed: that message is lost to A. A listens from now on.
  proxy.release()
  const canceled = await canceling
  const expected = { result: { id: sent.id, status: { state: 'canceled' } } }
  expect(canceled, 'what B answered the cancel').toMatchObject(expected)
  expect(gated.seen.cancelCalls).toBe(1)
  expect((await call(a, 'tasks/get', { id: sent.id })).result.status.state).toBe('canceled')
})

it("answers, on B, A's refusal to cancel that was published before B's listening connection had subscribed", async () => {
  const proxy = await subscribeHoldingProxy(redis.port)
  cleanups.push(() => proxy.close())
  const prefix = freshPrefix()
  const started = deferred()
  const finish = deferred()
  let refusals = 0
  const stubborn = agent(
    async (_ctx, task) => {
      task.working('busy')
      started.resolve()
      await finish.promise
      task.complete()
    },
    {
      cancel: () => {
        refusals++
        throw new TaskNotCancelableError('Task cannot be canceled: it is committing a payment')
      },
    },
  )
  cleanups.push(() => finish.resolve())
  const a = await instance(stubborn, redis.url, prefix)
  const b = await instance(stubborn, proxy.url, prefix)
  const answered = await watch(`${prefix}reply:*`)
  const sent = (await sendGo(a)).result
  await started.promise

  const canceling = call(b, 'tasks/cancel', { id: sent.id })
  expect(JSON.parse(await answered.first)).toMatchObject({ error: { code: -32002 } })
  // A's answer went out while B was not subscribed: lost to B. B listens from now on.
  proxy.release()
  expect(await canceling, 'what B answered the cancel').toMatchObject({
    error: { code: -32002, message: 'Task cannot be canceled: it is committing a payment' },
  })
  // One cancel, one refusal: A answered B's repeated request without running the hook again.
  expect(refusals).toBe(1)
  expect((await call(b, 'tasks/get', { id: sent.id })).result.status.state).toBe('working')
})
