import { randomBytes } from 'node:crypto'
import { createRedisStore } from 'a2a-runtime/redis-store'
import { Redis } from 'ioredis'
import { describe, expect, inject, it } from 'vitest'
import { ConfigurationError } from '../../runtime/src/errors.ts'
import type { PushOptions } from '../../runtime/src/push/push-options.ts'
import { openConfig, readPushConfigKey, sealConfig } from '../../runtime/src/stores/_sealed-configs.ts'
import { agent } from './_agents.ts'
import { nodeServer } from './_transports.ts'
import { startReceiver } from './_webhook.ts'

/**
 * Push configs sealed at rest: with a key, what a shared store keeps of a webhook (its URL, token and credentials)
 * is AES-256-GCM ciphertext that tells nothing of it, a changed value is refused, and a sealed value without the
 * right key is a one-line ConfigurationError; configs kept as plain JSON (before a key was set) are still read.
 */

const KEY = randomBytes(32)
const OTHER_KEY = randomBytes(32)
const TOKEN = 'tok-7f3a9c41d2e8b6'
const CREDENTIALS = 'cred-5e1b7a2f9d0c48'
const URL_PATH = 'https://hooks.example.net/a2a/receiver-91c2'

const config = JSON.stringify({
  id: 'hook-1',
  taskId: 'task-1',
  url: URL_PATH,
  token: TOKEN,
  authentication: { schemes: ['Bearer'], credentials: CREDENTIALS },
  dialect: 'a2a-1.0',
})

/** Every piece of `secret` of `length` characters: a stored value holding any of them gives part of it away. */
const pieces = (secret: string, length = 6) =>
  Array.from({ length: secret.length - length + 1 }, (_, at) => secret.slice(at, at + length))

/** What `open` throws, as the store's caller sees it. */
function refusal(open: () => unknown): Error {
  try {
    open()
  } catch (error) {
    return error as Error
  }
  throw new Error('opened')
}

describe('push configs sealed at rest', () => {
  it('seals a config with the key and opens it back; each seal under a fresh IV', () => {
    const stored = sealConfig(config, KEY)
    expect(stored).toMatch(/^sealed:v1:[A-Za-z0-9+/]+={0,2}$/)
    expect(openConfig(stored, KEY)).toBe(config)
    // The same config sealed twice is two different values: the IV is random per value.
    expect(sealConfig(config, KEY)).not.toBe(stored)
  })

  it('keeps no part of the webhook URL, its token or its credentials in what it stores', () => {
    const stored = sealConfig(config, KEY)
    for (const secret of [TOKEN, CREDENTIALS, URL_PATH, 'hooks.example.net'])
      for (const piece of pieces(secret)) expect(stored).not.toContain(piece)
  })

  it('refuses a sealed value that was changed, with a one-line ConfigurationError', () => {
    const stored = sealConfig(config, KEY)
    const body = Buffer.from(stored.slice('sealed:v1:'.length), 'base64')
    // One bit of the ciphertext (past the 12-byte IV), then one of the tag (the last 16 bytes).
    for (const at of [20, body.length - 1]) {
      const changed = Buffer.from(body)
      changed[at]! ^= 1
      const error = refusal(() => openConfig(`sealed:v1:${changed.toString('base64')}`, KEY))
      expect(error).toBeInstanceOf(ConfigurationError)
      expect(error.message).toBe(
        'A push config in the store could not be opened: A2A_PUSH_CONFIG_KEY (pushConfigKey) is not the key it was sealed with, or the stored value was altered',
      )
    }
    expect(refusal(() => openConfig('sealed:v1:AAAA', KEY))).toBeInstanceOf(ConfigurationError)
  })

  it('refuses a sealed value under another key, or with no key, saying which variable to set', () => {
    const stored = sealConfig(config, KEY)
    expect(refusal(() => openConfig(stored, OTHER_KEY)).message).toContain('is not the key it was sealed with')
    const missing = refusal(() => openConfig(stored, undefined))
    expect(missing).toBeInstanceOf(ConfigurationError)
    expect(missing.message).toBe(
      'A push config in the store is sealed, and no key is set to open it: set A2A_PUSH_CONFIG_KEY (pushConfigKey) to the key it was sealed with',
    )
    const newer = refusal(() => openConfig(stored.replace('sealed:v1:', 'sealed:v9:'), KEY))
    expect(newer.message).toContain('sealed with a scheme this runtime does not know ("v9")')
  })

  it('reads plain configs (stored before a key was set) with or without a key, and stores plain without one', () => {
    expect(openConfig(config, KEY)).toBe(config)
    expect(openConfig(config, undefined)).toBe(config)
    expect(sealConfig(config, undefined)).toBe(config)
  })
})

describe('readPushConfigKey', () => {
  const base64 = KEY.toString('base64')

  it('reads A2A_PUSH_CONFIG_KEY as base64 of 32 bytes; the option wins; none set is none', () => {
    expect(Buffer.from(readPushConfigKey(undefined, { A2A_PUSH_CONFIG_KEY: base64 })!)).toEqual(KEY)
    expect(Buffer.from(readPushConfigKey(OTHER_KEY.toString('base64'), { A2A_PUSH_CONFIG_KEY: base64 })!)).toEqual(
      OTHER_KEY,
    )
    expect(Buffer.from(readPushConfigKey(new Uint8Array(OTHER_KEY), {})!)).toEqual(OTHER_KEY)
    expect(readPushConfigKey(undefined, {})).toBeUndefined()
    expect(readPushConfigKey(undefined, { A2A_PUSH_CONFIG_KEY: ' ' })).toBeUndefined()
  })

  it('refuses a key of another length or not in base64 in one line naming the variable, never the key', () => {
    const short = randomBytes(16).toString('base64')
    const wrong = refusal(() => readPushConfigKey(undefined, { A2A_PUSH_CONFIG_KEY: short }))
    expect(wrong).toBeInstanceOf(ConfigurationError)
    expect(wrong.message).toBe(
      'pushConfigKey (A2A_PUSH_CONFIG_KEY) must be 32 bytes in base64 (openssl rand -base64 32); got 16 bytes once decoded',
    )
    expect(wrong.message).not.toContain(short)
    const notBase64 = refusal(() => readPushConfigKey('not a key!', {}))
    expect(notBase64.message).toBe(
      'pushConfigKey (A2A_PUSH_CONFIG_KEY) must be 32 bytes in base64 (openssl rand -base64 32); it is not base64',
    )
    expect(refusal(() => readPushConfigKey(new Uint8Array(31), {})).message).toContain('got 31 bytes')
  })
})

describe('push configs sealed in Redis', () => {
  const LOOPBACK: PushOptions = { allow: ['127.0.0.1'], allowHttp: true, retryDelayMs: 10, timeoutMs: 10_000 }
  const V1 = { 'a2a-version': '1.0' }
  const v1Message = (text: string, extra: object = {}) => ({
    message: { role: 'ROLE_USER', messageId: `m-${Math.random()}`, parts: [{ text }], ...extra },
  })
  /** Asks for input on the first turn, completes on the second. */
  const twoTurns = agent(
    (ctx, task) => {
      if (ctx.history.filter((m) => m.role === 'user').length < 2) task.inputRequired('Which one?')
      else task.complete()
    },
    { card: { capabilities: { pushNotifications: true } } },
  )

  it("keeps a webhook's URL, token and credentials out of Redis's bytes, and still delivers with them", async () => {
    const url = inject('redisUrl')
    if (!url)
      throw new Error('redis-server is not installed (Debian: apt-get install redis-server; .ci/run installs it)')
    const prefix = `sealed-${Math.random().toString(36).slice(2, 10)}:`
    const receiver = await startReceiver()
    const store = createRedisStore({ url, prefix, env: { A2A_PUSH_CONFIG_KEY: KEY.toString('base64') } })
    const target = await nodeServer.start(twoTurns, { store, push: LOOPBACK })
    const raw = new Redis(url)
    try {
      const taskId = (await target.rpc('SendMessage', v1Message('start'), { headers: V1 })).body.result.task.id
      const webhook = {
        url: receiver.url,
        token: TOKEN,
        authentication: { scheme: 'Bearer', credentials: CREDENTIALS },
      }
      const created = (await target.rpc('CreateTaskPushNotificationConfig', { taskId, ...webhook }, { headers: V1 }))
        .body.result
      expect(created).toMatchObject({ taskId, url: receiver.url, token: TOKEN })

      const stored = Object.values(await raw.hgetall(`${prefix}{${taskId}}:push`))
      expect(stored).toHaveLength(1)
      expect(stored[0]).toMatch(/^sealed:v1:/)
      const hook = new URL(receiver.url)
      for (const secret of [TOKEN, CREDENTIALS, hook.pathname, `${hook.hostname}:${hook.port}`])
        for (const piece of pieces(secret, Math.min(6, secret.length))) expect(stored[0]).not.toContain(piece)

      // Read back and used as it was given: the follow-up's notifications carry the token and credentials.
      const read = await target.rpc('GetTaskPushNotificationConfig', { taskId, id: created.id }, { headers: V1 })
      expect(read.body.result).toEqual(created)
      await target.rpc('SendMessage', v1Message('blue', { taskId }), { headers: V1 })
      await expect.poll(() => receiver.delivered.at(-1)?.body.statusUpdate?.status.state).toBe('TASK_STATE_COMPLETED')
      expect(receiver.delivered.at(-1)!.headers['x-a2a-notification-token']).toBe(TOKEN)
      expect(receiver.delivered.at(-1)!.headers.authorization).toBe(`Bearer ${CREDENTIALS}`)

      // Another instance without the key cannot read it, and says why; a config stored plain (no key) is read by
      // one with the key.
      const keyless = createRedisStore({ url, prefix, env: {} })
      try {
        await expect(keyless.pushConfigs.list(taskId)).rejects.toThrow(
          'A push config in the store is sealed, and no key is set to open it',
        )
        await raw.hdel(`${prefix}{${taskId}}:push`, created.id)
        await keyless.pushConfigs.save({
          id: 'plain',
          taskId,
          url: receiver.url,
          token: 'plain-token',
          dialect: 'a2a-1.0',
        })
        expect(JSON.parse((await raw.hget(`${prefix}{${taskId}}:push`, 'plain'))!).token).toBe('plain-token')
        expect(await store.pushConfigs.list(taskId)).toEqual([
          { id: 'plain', taskId, url: receiver.url, token: 'plain-token', dialect: 'a2a-1.0' },
        ])
      } finally {
        await keyless.close()
      }
    } finally {
      raw.disconnect()
      await target.close()
    }
  })
})
