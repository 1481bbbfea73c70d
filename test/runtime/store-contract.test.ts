import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createMemoryStore } from 'a2a-runtime'
import { createFileStore } from 'a2a-runtime/file-store'
import { createRedisStore } from 'a2a-runtime/redis-store'
import { type TaskStore, taskStoreContract } from 'a2a-runtime/store'
import { createDurableObjectStore } from 'a2a-runtime/workers'
import { afterAll, beforeAll, describe, it } from 'vitest'
import type { DurableObjectTaskStore } from '../../runtime/src/stores/durable-object.ts'
import { DurableObjectStorageStandIn } from './_durable-object-storage.ts'
import { type RedisServer, startRedis } from './_redis.ts'
import { type RedisCluster, startRedisCluster } from './_redis-cluster.ts'

// The checks that load a store (hundreds of writes) get room on a loaded machine; none waits on the clock.
const CHECK_TIMEOUT_MS = 60_000

describe('the memory store keeps the TaskStore contract', () => {
  for (const check of taskStoreContract({ open: () => createMemoryStore() }))
    it(check.name, check.run, CHECK_TIMEOUT_MS)
})

describe('the file store keeps the TaskStore contract', () => {
  const dirs: string[] = []
  const dirOf = new WeakMap<TaskStore, string>()
  const openAt = (dir: string) => {
    const store = createFileStore({ dir })
    dirOf.set(store, dir)
    return store
  }
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })
  const open = () => {
    const dir = mkdtempSync(join(tmpdir(), 'a2a-store-contract-'))
    dirs.push(dir)
    return openAt(dir)
  }
  // A restart: one process per directory, so the first store closes before the second reads the files.
  const reopen = async (store: TaskStore) => {
    await store.close?.()
    return openAt(dirOf.get(store)!)
  }
  for (const check of taskStoreContract({ open, reopen })) it(check.name, check.run, CHECK_TIMEOUT_MS)
})

describe('the Durable Object store keeps the TaskStore contract', () => {
  const storageOf = new WeakMap<TaskStore, DurableObjectStorageStandIn>()
  const openOn = async (storage: DurableObjectStorageStandIn) => {
    const store: DurableObjectTaskStore = createDurableObjectStore(storage)
    storageOf.set(store, storage)
    await store.restore()
    return store
  }
  // The object moved or restarted: a new instance reads the same storage.
  const reopen = async (store: TaskStore) => {
    await store.close?.()
    return openOn(storageOf.get(store)!)
  }
  for (const check of taskStoreContract({ open: () => openOn(new DurableObjectStorageStandIn()), reopen }))
    it(check.name, check.run, CHECK_TIMEOUT_MS)
})

describe.each([
  { target: 'a single Redis', cluster: false },
  { target: 'a Redis Cluster of 3 masters', cluster: true },
])('the Redis store on $target keeps the TaskStore contract', ({ cluster }) => {
  let redis: RedisServer | RedisCluster
  beforeAll(async () => {
    redis = cluster ? await startRedisCluster() : await startRedis()
  }, 120_000)
  afterAll(async () => {
    await redis?.stop()
  })
  const prefixOf = new WeakMap<TaskStore, string>()
  const openAt = (prefix: string) => {
    const store = createRedisStore({ url: redis.url, prefix, cluster })
    prefixOf.set(store, prefix)
    return store
  }
  // Each check on keys of its own, in the one server.
  const open = () => openAt(`contract-${Math.random().toString(36).slice(2, 10)}:`)
  // An instance restarting: it stops, and a new one reads the same keys.
  const reopen = async (store: TaskStore) => {
    await store.close?.()
    return openAt(prefixOf.get(store)!)
  }
  for (const check of taskStoreContract({ open, reopen })) it(check.name, check.run, CHECK_TIMEOUT_MS)
})
