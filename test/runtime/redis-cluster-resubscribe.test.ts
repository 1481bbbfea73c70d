import { createRedisStore } from 'a2a-runtime/redis-store'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ScriptedTask, StatusClock, text } from '../../runtime/src/stores/contract/_scripted-task.ts'
import type { RedisTaskStore } from '../../runtime/src/stores/redis/store.ts'
import { type RedisCluster, startRedisCluster } from './_redis-cluster.ts'

/**
 * On a Redis Cluster, an instance's listening connection is ioredis's to manage: when it drops (a node restarted or
 * failed, a network blip, Redis cutting a subscriber whose output backed up), ioredis picks a node and subscribes
 * again, and tells the store nothing. What is published in between is lost to that connection: a follower must still
 * get it, late rather than never (a stream waiting for its task's last event would otherwise wait for good).
 */

let cluster: RedisCluster
let admins: Redis[] = []
const cleanups: Array<() => unknown> = []

beforeAll(async () => {
  cluster = await startRedisCluster()
  admins = cluster.nodes.map(({ host, port }) => new Redis({ host, port }))
}, 90_000)
afterAll(async () => {
  for (const admin of admins) admin.disconnect()
  await cluster?.stop()
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/**
 * Every node cuts its subscribers' connections, as a node that restarted would, and refuses SUBSCRIBE until
 * `allowSubscribe()`: ioredis subscribes its new connection once and gives up when that fails, so the events
 * published from then on find no connection of the follower's subscribed, whenever they are published.
 */
async function cutSubscribers(): Promise<void> {
  await Promise.all(admins.map((admin) => admin.call('ACL', 'SETUSER', 'default', '-subscribe')))
  await Promise.all(admins.map((admin) => admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub')))
}

async function allowSubscribe(): Promise<void> {
  await Promise.all(admins.map((admin) => admin.call('ACL', 'SETUSER', 'default', '+subscribe')))
}

describe('a follower on a Redis Cluster whose listening connection dropped', () => {
  it('gets the events published while it had no subscribed connection: none skipped, the task followed to its end', async () => {
    const prefix = `cluster-cut-${Math.random().toString(36).slice(2, 10)}:`
    const options = { url: cluster.url, cluster: true, prefix }
    const writer: RedisTaskStore = createRedisStore(options)
    const follower: RedisTaskStore = createRedisStore(options)
    cleanups.push(
      () => writer.close(),
      () => follower.close(),
    )
    const run = await ScriptedTask.start(writer, new StatusClock())
    const seen: number[] = []
    cleanups.push(follower.cluster.follow(run.id, 0, (event) => seen.push(event.seq)))
    run.working()
    await run.flush()
    await expect.poll(() => seen, { timeout: 10_000 }).toEqual([1])

    await cutSubscribers()
    cleanups.push(allowSubscribe)
    run.artifact({ parts: [text('while the subscriber moved')] })
    await run.complete()
    await expect.poll(() => seen, { timeout: 10_000 }).toEqual([1, 2, 3])
  })
})
