import { afterEach, describe, expect, it } from 'vitest'
import type { RedisConnection } from '../../runtime/src/stores/redis/_connection.ts'
import { followTask } from '../../runtime/src/stores/redis/_follow.ts'
import type { RedisKeys } from '../../runtime/src/stores/redis/_keys.ts'
import type { TaskEvent } from '../../runtime/src/types.ts'

/**
 * How a follower of a task on another instance (the Redis store's) puts the task's log and its live events
 * together, with a stand-in for the connection: the log is a list, a live event a call of the channel's handler.
 * On a Redis Cluster the listening connection may miss events without the store hearing of it (see
 * redis-cluster-resubscribe.test.ts for the real thing); these pin what the follower does about it.
 */

const TASK = 'task-1'
const artifact = (seq: number): TaskEvent => ({
  kind: 'artifact-update',
  seq,
  taskId: TASK,
  contextId: 'ctx-1',
  artifact: { artifactId: `a${seq}`, parts: [{ kind: 'text', text: String(seq) }] },
  append: false,
  lastChunk: true,
})

interface Follower {
  /** The task's log, which `events` reads. */
  log: TaskEvent[]
  /** Sends `event` on the task's channel, as Redis would to a subscribed connection. */
  publish(event: TaskEvent): void
  /** The numbers of the events the follower delivered, in order. */
  seen: number[]
  /** How many times the log was read. */
  reads(): number
  /** From now on every read of the log fails, as with Redis unreachable. */
  failReads(): void
}

const stops: Array<() => void> = []
afterEach(() => {
  for (const stop of stops.splice(0)) stop()
})

function follow(quietReadMs?: number): Follower {
  const handlers = new Set<(message: string) => void>()
  const connection = {
    closed: false,
    listen: (_channel: string, handler: (message: string) => void) => {
      handlers.add(handler)
      return { ready: Promise.resolve(), stop: () => handlers.delete(handler) }
    },
    onReconnect: () => () => {},
  } as unknown as RedisConnection
  const keys = { live: (taskId: string) => `live:${taskId}` } as unknown as RedisKeys
  const log: TaskEvent[] = []
  let reads = 0
  let failing = false
  const events = async (_taskId: string, afterSeq: number) => {
    reads++
    if (failing) throw new Error('Redis is unreachable')
    return log.filter((event) => event.seq > afterSeq)
  }
  const seen: number[] = []
  stops.push(followTask(connection, keys, events, TASK, 0, (event) => seen.push(event.seq), quietReadMs))
  return {
    log,
    publish: (event) => {
      for (const handler of handlers) handler(JSON.stringify(event))
    },
    seen,
    reads: () => reads,
    failReads: () => {
      failing = true
    },
  }
}

describe("a Redis store's follower", () => {
  it('reads the log for the events a live event skips, and delivers them first: none lost, none twice', async () => {
    const follower = follow()
    follower.log.push(artifact(1))
    follower.publish(artifact(1))
    await expect.poll(() => follower.seen).toEqual([1])

    // 2 and 3 were published while the connection heard nothing; 4 comes live.
    follower.log.push(artifact(2), artifact(3), artifact(4))
    follower.publish(artifact(4))
    await expect.poll(() => follower.seen).toEqual([1, 2, 3, 4])
    follower.log.push(artifact(5))
    follower.publish(artifact(5))
    await expect.poll(() => follower.seen).toEqual([1, 2, 3, 4, 5])
  })

  it('reads the log when it has heard nothing for its quiet period: an event no live message brought arrives', async () => {
    const follower = follow(50)
    await expect.poll(() => follower.reads()).toBeGreaterThanOrEqual(1)
    follower.log.push(artifact(1), artifact(2))
    await expect.poll(() => follower.seen).toEqual([1, 2])
  })

  it('reads nothing more than its first read while events come live, without a quiet period', async () => {
    const follower = follow()
    await expect.poll(() => follower.reads()).toBe(1)
    for (const seq of [1, 2, 3]) {
      follower.log.push(artifact(seq))
      follower.publish(artifact(seq))
    }
    await expect.poll(() => follower.seen).toEqual([1, 2, 3])
    expect(follower.reads()).toBe(1)
  })

  it('retries a read that keeps failing in one loop, however many quiet periods pass', async () => {
    const follower = follow(20)
    await expect.poll(() => follower.reads()).toBeGreaterThanOrEqual(1)
    follower.failReads()
    const before = follower.reads()
    // Thirty quiet periods: one loop backs off 100, 200, 300 ms… (five reads at most); one per period, dozens.
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect(follower.reads() - before).toBeGreaterThan(0)
    expect(follower.reads() - before).toBeLessThanOrEqual(5)
  })
})
