import { Cluster, type ClusterOptions, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RedisCluster, startRedisCluster } from './_redis-cluster.ts'

// The harness itself: a real 3-master Redis Cluster, and what a store built on ioredis's Cluster client can rely on.

let cluster: RedisCluster
let startMs = 0
const clients: Array<{ disconnect(): void }> = []

beforeAll(async () => {
  const started = performance.now()
  cluster = await startRedisCluster()
  startMs = performance.now() - started
  console.log(`Redis Cluster of ${cluster.nodes.length} masters started in ${Math.round(startMs)} ms`)
})
afterAll(async () => {
  for (const client of clients.splice(0)) client.disconnect()
  await cluster?.stop()
})

function clusterClient(options: ClusterOptions = {}): Cluster {
  const client = new Cluster([cluster.nodes[0]!], options)
  clients.push(client)
  return client
}
function nodeClient(i: number): Redis {
  const client = new Redis({ host: cluster.nodes[i]!.host, port: cluster.nodes[i]!.port })
  client.on('error', () => {}) // it reconnects, refused, to a node the last test kills
  clients.push(client)
  return client
}

describe('a local Redis Cluster of 3 masters', () => {
  it('is up with every slot assigned and served by all three nodes', { timeout: 60_000 }, async () => {
    expect(cluster.url).toBe(`redis://127.0.0.1:${cluster.nodes[0]!.port}`)
    const client = clusterClient()
    const info = String(await client.cluster('INFO'))
    expect(info).toContain('cluster_state:ok')
    expect(info).toContain('cluster_slots_assigned:16384')
    expect(info).toContain('cluster_known_nodes:3')

    // Keys spread over the slots, so over the three masters; each read back through the client that routed it.
    const keys = Array.from({ length: 30 }, (_, i) => `a2a:harness:${i}`)
    for (const key of keys) await client.set(key, key)
    expect(await Promise.all(keys.map((key) => client.get(key)))).toEqual(keys)
    const slots = new Set(await Promise.all(keys.map((key) => client.cluster('KEYSLOT', key))))
    expect(slots.size).toBeGreaterThan(10)
    const perNode = await Promise.all(cluster.nodes.map((_, i) => nodeClient(i).dbsize()))
    expect(perNode.every((count) => count > 0)).toBe(true)
    expect(perNode.reduce((sum, count) => sum + count, 0)).toBe(keys.length)
  })

  it('runs a script on keys sharing a hash tag and refuses one on keys of two slots (CROSSSLOT)', {
    timeout: 60_000,
  }, async () => {
    const client = clusterClient()
    const [task, events] = ['a2a:{task-1}:task', 'a2a:{task-1}:events']
    expect(await client.cluster('KEYSLOT', task)).toBe(await client.cluster('KEYSLOT', events))
    const script = `redis.call('SET', KEYS[1], ARGV[1]); redis.call('RPUSH', KEYS[2], ARGV[2]); return {redis.call('GET', KEYS[1]), redis.call('LLEN', KEYS[2])}`
    expect(await client.eval(script, 2, task, events, 'working', 'event-1')).toEqual(['working', 1])
    expect(await client.eval(script, 2, task, events, 'completed', 'event-2')).toEqual(['completed', 2])
    expect(await client.lrange(events, 0, -1)).toEqual(['event-1', 'event-2'])

    const other = 'a2a:{task-2}:events'
    expect(await client.cluster('KEYSLOT', other)).not.toBe(await client.cluster('KEYSLOT', task))
    await expect(client.eval(script, 2, task, other, 'x', 'y')).rejects.toThrow(/^CROSSSLOT/)
    expect(await client.exists(other)).toBe(0)
    expect(await client.get(task)).toBe('completed')
  })

  it('delivers a PUBLISH made on any node to a subscriber through the Cluster client', {
    timeout: 60_000,
  }, async () => {
    const subscriber = clusterClient()
    const received: string[] = []
    subscriber.on('message', (channel: string, message: string) => received.push(`${channel} ${message}`))
    await subscriber.subscribe('a2a:harness:wake')
    // Plain pub/sub is broadcast over the cluster bus: it reaches the subscriber whichever node it connected to.
    for (const [i] of cluster.nodes.entries()) await nodeClient(i).publish('a2a:harness:wake', `from node ${i}`)
    await expect.poll(() => received.sort()).toEqual(cluster.nodes.map((_, i) => `a2a:harness:wake from node ${i}`))
  })

  it('delivers an SPUBLISH to an SSUBSCRIBE through the Cluster client (shardedSubscribers: true)', {
    timeout: 60_000,
  }, async () => {
    // Sharded pub/sub stays in the shard that owns the channel's slot. With `shardedSubscribers: true` ioredis keeps a
    // subscriber connection per master and sends SSUBSCRIBE to the owner of the channel's slot.
    const subscriber = clusterClient({ shardedSubscribers: true })
    const publisher = clusterClient()
    const received: string[] = []
    subscriber.on('smessage', (channel: string, message: string) => received.push(`${channel} ${message}`))
    const channels = ['a2a:{task-1}:wake', 'a2a:{task-2}:wake', 'a2a:{task-3}:wake']
    const ranges = await publisher.cluster('SLOTS')
    const owner = async (channel: string) => {
      const slot = await publisher.cluster('KEYSLOT', channel)
      return ranges.find(([first, last]) => first <= slot && slot <= last)![2]![1]
    }
    expect(new Set(await Promise.all(channels.map(owner))).size).toBe(3) // one channel on each master
    for (const channel of channels) await subscriber.ssubscribe(channel)
    for (const channel of channels) expect(await publisher.spublish(channel, 'done')).toBe(1)
    await expect.poll(() => received.sort()).toEqual(channels.map((channel) => `${channel} done`).sort())
    // One SSUBSCRIBE with channels of two slots is refused by ioredis itself, before it reaches a node.
    await expect(subscriber.ssubscribe(channels[0]!, channels[1]!)).rejects.toThrow(/CROSSSLOT/)
  })

  // Last: it leaves the cluster without its third master.
  it('fails a command on the slots of a killed node (killNode) once the client has retried, not hanging', {
    timeout: 60_000,
  }, async () => {
    const client = clusterClient()
    client.on('node error', () => {}) // one per refused reconnect to the dead node
    const key = 'a2a:{task-3}:task' // slot 13321, the third master's
    await client.set(key, 'before')
    await cluster.killNode(2)
    const started = performance.now()
    // ioredis retries on "Connection is closed." every 100 ms, refreshing the slots, then gives up (maxRedirections
    // 16).
    await expect(client.set(key, 'after')).rejects.toThrow(
      /Too many Cluster redirections|Connection is closed|CLUSTERDOWN/,
    )
    console.log(`a command on the killed node's slots failed after ${Math.round(performance.now() - started)} ms`)
  })
})
