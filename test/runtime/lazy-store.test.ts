import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createA2AApp, serveAgent } from 'a2a-runtime'
import { type TaskStore, taskStoreContract } from 'a2a-runtime/store'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { ConfigurationError } from '../../runtime/src/errors.ts'
import { lazyStoreFromSetting } from '../../runtime/src/stores/_lazy-store.ts'
import { storeFromSetting } from '../../runtime/src/stores/from-setting.ts'
import { echoAgent } from './_agents.ts'
import { userMessage } from './_messages.ts'
import { type RedisServer, startRedis } from './_redis.ts'

// An app made from A2A_STORE loads the module of the store it names only (stores/_lazy-store.ts), in the store's
// ready(): the stand-in it gets at once must be that store to everything that uses it. The contract through the
// setting, the members callers test for, the errors of a bad setting (at once) and of a store that cannot be made.

const CHECK_TIMEOUT_MS = 60_000
const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-lazy-store-'))
  dirs.push(dir)
  return dir
}
const freshName = () => Math.random().toString(36).slice(2, 10)

/** Each kind's setting, a fresh place per call: a directory, a Redis key prefix, a PostgreSQL schema. */
const settings: Record<'file' | 'redis' | 'postgres', () => string> = {
  file: () => `file:${freshDir()}`,
  redis: () => `${redis.url}?prefix=${encodeURIComponent(`lazy-${freshName()}:`)}`,
  postgres: () => {
    const url = new URL(inject('postgresUrl'))
    url.searchParams.set('schema', `lazy_${freshName()}`)
    return url.href
  },
}

let redis: RedisServer
beforeAll(async () => {
  redis = await startRedis()
}, 120_000)
afterAll(async () => {
  await redis?.stop()
})

describe.each(['file', 'redis', 'postgres'] as const)('the %s store through A2A_STORE', (kind) => {
  // A restart opens the same setting again: the same directory, key prefix or schema.
  const settingOf = new WeakMap<TaskStore, string>()
  const openAt = (setting: string) => {
    const store = lazyStoreFromSetting(setting, { env: {} })
    settingOf.set(store, setting)
    return store
  }
  const reopen = async (store: TaskStore) => {
    await store.close?.()
    return openAt(settingOf.get(store)!)
  }
  describe('keeps the TaskStore contract', () => {
    for (const check of taskStoreContract({ open: () => openAt(settings[kind]()), reopen }))
      it(check.name, check.run, CHECK_TIMEOUT_MS)
  })

  it('shows, before its module loads, the members and cluster flags of the store it stands for', async () => {
    const shape = (store: TaskStore) => ({
      lastSeq: typeof store.lastSeq,
      snapshot: typeof store.snapshot,
      reachable: typeof store.reachable,
      keepsOwners: store.keepsOwners,
      pushConfigs: store.pushConfigs && Object.keys(store.pushConfigs).sort(),
      cluster: store.cluster && {
        claimsOnCreate: store.cluster.claimsOnCreate ?? false,
        createJoinsFirstEvents: store.cluster.createJoinsFirstEvents ?? false,
      },
    })
    const lazy = lazyStoreFromSetting(settings[kind](), { env: {} })
    const made = storeFromSetting(settings[kind](), { env: {} })
    try {
      expect(shape(lazy)).toEqual(shape(made))
    } finally {
      await Promise.all([lazy.close?.(), made.close?.()])
    }
  })
})

describe('an app made from A2A_STORE', () => {
  it('refuses a malformed setting at once, naming it, before any store loads', () => {
    expect(() => createA2AApp(echoAgent, { store: 'redis://127.0.0.1:1?bogus=1' })).toThrow(
      'A2A_STORE: unknown option "bogus" (prefix, leaseMs, ttlMs, maxTasks, cluster)',
    )
    expect(() => createA2AApp(echoAgent, { store: 'postgres://[' })).toThrow(/is not a valid postgres:\/\/ URL/)
    expect(() => createA2AApp(echoAgent, { store: 'file:' })).toThrow('A2A_STORE: "file:" needs a directory')
  })

  it('serves without ready(): its first request waits for the store to load', async () => {
    const app = createA2AApp(echoAgent, { store: `file:${freshDir()}`, logger: quiet })
    try {
      const call = async (method: string, params: unknown) => {
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
        const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body }
        return (await (await app.fetch(new Request('http://localhost/', init))).json()).result
      }
      const task = await call('message/send', userMessage('hi'))
      expect(task.status.state).toBe('completed')
      expect((await call('tasks/get', { id: task.id })).id).toBe(task.id)
    } finally {
      await app.close()
    }
  })

  it("answers, once made, the made store's own members (the file store's size, bytes and directory)", async () => {
    const dir = freshDir()
    const app = createA2AApp(echoAgent, { store: `file:${dir}`, logger: quiet })
    try {
      await app.store.ready?.()
      const store = app.store as TaskStore & { size?: number; bytes?: number; dir?: string }
      expect([store.size, store.bytes, store.dir]).toEqual([0, 0, dir])
      expect('sweep' in store).toBe(true)
    } finally {
      await app.close()
    }
  })

  it('closed before its store was ever made, makes none for a later call (its directory stays untouched)', async () => {
    const dir = join(freshDir(), 'tasks')
    const store = lazyStoreFromSetting(`file:${dir}`, { env: {} })
    await store.close?.()
    await expect(Promise.resolve().then(() => store.get('t-1'))).rejects.toThrow('The task store is closed')
    expect(existsSync(dir)).toBe(false)
  })

  it('stops serveAgent in one line naming A2A_STORE when its store cannot be made (a file in its way)', async () => {
    const dir = freshDir()
    writeFileSync(join(dir, 'taken'), '')
    const start = serveAgent(echoAgent, {
      store: `file:${join(dir, 'taken', 'tasks')}`,
      port: 0,
      hostname: '127.0.0.1',
      handleSignals: false,
      logger: quiet,
    })
    await expect(start).rejects.toThrow(ConfigurationError)
    await expect(start).rejects.toThrow(/^A2A_STORE: ENOTDIR: not a directory, mkdir '.*tasks[/\\]log'$/)
  })

  it('answers requests 503 saying why when its store cannot be made and the app was never made ready', async () => {
    const dir = freshDir()
    writeFileSync(join(dir, 'taken'), '')
    const errors: unknown[] = []
    const logger = { ...quiet, error: (...args: unknown[]) => errors.push(args) }
    const app = createA2AApp(echoAgent, { store: `file:${join(dir, 'taken', 'tasks')}`, logger })
    try {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: userMessage('hi') })
      const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body }
      for (let i = 0; i < 2; i++) {
        const response = await app.fetch(new Request('http://localhost/', init))
        expect(response.status).toBe(503)
        const { error } = (await response.json()) as { error: { message: string } }
        expect(error.message).toMatch(/^A2A_STORE: ENOTDIR: not a directory/)
      }
      await expect(app.store.ready?.()).rejects.toThrow(ConfigurationError)
      expect(errors).toEqual([])
    } finally {
      await app.close()
    }
  })
})

const quiet = { debug() {}, info() {}, warn() {}, error() {} }
