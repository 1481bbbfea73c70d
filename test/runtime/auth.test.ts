import { createA2AApp } from 'a2a-runtime'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { AuthScheme } from '../../runtime/src/types.ts'
import { agent } from './_agents.ts'
import { type Target, transports } from './_transports.ts'

const ENV_NAMES = ['A2A_BEARER_TOKEN', 'A2A_API_KEY'] as const

const TOKEN = 'tok-3f9a1c7e5b'
const KEY = 'key-8d2b6e0a4f'

const protectedAgent = (schemes: string[]) =>
  agent(
    (ctx, task) => {
      task.artifact(`Echo: ${ctx.text}`)
      task.complete()
    },
    { card: { authentication: { schemes: schemes as AuthScheme[] } } },
  )

const bearerAgent = protectedAgent(['bearer'])
const apiKeyAgent = protectedAgent(['apiKey'])
const bothAgent = protectedAgent(['bearer', 'apiKey'])
const openAgent = agent((ctx, task) => {
  task.artifact(`Echo: ${ctx.text}`)
  task.complete()
})

const sendParams = (text: string) => ({
  message: { kind: 'message', role: 'user', messageId: `m-${Math.random()}`, parts: [{ kind: 'text', text }] },
})

/** `message/send` with the given headers; returns the raw response so the test can read status, headers and text. */
const send = (target: Target, headers: Record<string, string> = {}, text = 'hello') =>
  target.post(
    JSON.stringify({ jsonrpc: '2.0', id: 'auth-1', method: 'message/send', params: sendParams(text) }),
    headers,
  )

async function expectAccepted(response: Response) {
  expect(response.status).toBe(200)
  const body = await response.json()
  expect(body).toMatchObject({ jsonrpc: '2.0', id: 'auth-1', result: { kind: 'task', status: { state: 'completed' } } })
}

/** A 401 with a JSON-RPC error body (code -32000, no result); returns the raw text. */
async function expectUnauthorized(response: Response): Promise<string> {
  expect(response.status).toBe(401)
  expect(response.headers.get('content-type')).toMatch(/^application\/json\b/)
  const text = await response.text()
  const body = JSON.parse(text)
  expect(Object.keys(body).sort()).toEqual(['error', 'id', 'jsonrpc'])
  expect(body.jsonrpc).toBe('2.0')
  expect(body.error).toEqual({ code: -32000, message: expect.any(String) })
  return text
}

const allHeaders = (response: Response) => [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n')

describe.each(transports)('authentication ($name)', (transport) => {
  // Each test decides the environment; whatever the shell had is put back afterwards.
  const saved: Partial<Record<(typeof ENV_NAMES)[number], string>> = {}
  beforeEach(() => {
    for (const name of ENV_NAMES) {
      saved[name] = process.env[name]
      delete process.env[name]
    }
  })
  afterEach(() => {
    for (const name of ENV_NAMES) {
      if (saved[name] === undefined) delete process.env[name]
      else process.env[name] = saved[name]
    }
  })

  describe('bearer', () => {
    it('refuses a request without a credential with 401, a JSON-RPC error and WWW-Authenticate: Bearer', async () => {
      const target = await transport.start(bearerAgent, { auth: { bearerTokens: [TOKEN] } })
      const response = await send(target)
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer\b/)
      const text = await expectUnauthorized(response)
      expect(text).toMatch(/Authorization/)
    })

    it('refuses a wrong token with 401 and never shows the presented secret', async () => {
      const target = await transport.start(bearerAgent, { auth: { bearerTokens: [TOKEN] } })
      const wrong = 'wrong-SECRET-token-51c2'
      const response = await send(target, { authorization: `Bearer ${wrong}` })
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer\b/)
      const headers = allHeaders(response)
      const text = await expectUnauthorized(response)
      expect(text).not.toContain(wrong)
      expect(text).not.toContain('SECRET')
      expect(text).not.toContain(TOKEN)
      expect(headers).not.toContain(wrong)
      expect(headers).not.toContain(TOKEN)
    })

    it('refuses an Authorization header of another scheme, or Bearer without a token', async () => {
      const target = await transport.start(bearerAgent, { auth: { bearerTokens: [TOKEN] } })
      await expectUnauthorized(
        await send(target, { authorization: `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}` }),
      )
      await expectUnauthorized(await send(target, { authorization: TOKEN }))
      await expectUnauthorized(await send(target, { authorization: 'Bearer' }))
      await expectUnauthorized(await send(target, { authorization: `Bearer ${TOKEN}x` }))
    })

    it('does not take the token from X-API-Key when only bearer is declared', async () => {
      const target = await transport.start(bearerAgent, { auth: { bearerTokens: [TOKEN] } })
      await expectUnauthorized(await send(target, { 'x-api-key': TOKEN }))
    })

    it('accepts the right token with 200', async () => {
      const target = await transport.start(bearerAgent, { auth: { bearerTokens: [TOKEN] } })
      await expectAccepted(await send(target, { authorization: `Bearer ${TOKEN}` }))
    })

    it('accepts every configured token', async () => {
      const target = await transport.start(bearerAgent, { auth: { bearerTokens: ['first-token', 'second-token'] } })
      await expectAccepted(await send(target, { authorization: 'Bearer first-token' }))
      await expectAccepted(await send(target, { authorization: 'Bearer second-token' }))
      await expectUnauthorized(await send(target, { authorization: 'Bearer third-token' }))
    })
  })

  describe('apiKey', () => {
    it('refuses a request without a key with 401 and a JSON-RPC error naming X-API-Key', async () => {
      const target = await transport.start(apiKeyAgent, { auth: { apiKeys: [KEY] } })
      const text = await expectUnauthorized(await send(target))
      expect(text).toMatch(/X-API-Key/i)
    })

    it('refuses a wrong key with 401 and never shows the presented secret', async () => {
      const target = await transport.start(apiKeyAgent, { auth: { apiKeys: [KEY] } })
      const wrong = 'wrong-SECRET-key-77e0'
      const response = await send(target, { 'x-api-key': wrong })
      const headers = allHeaders(response)
      const text = await expectUnauthorized(response)
      expect(text).not.toContain(wrong)
      expect(text).not.toContain('SECRET')
      expect(text).not.toContain(KEY)
      expect(headers).not.toContain(wrong)
      expect(headers).not.toContain(KEY)
    })

    it('does not take the key from Authorization: Bearer when only apiKey is declared', async () => {
      const target = await transport.start(apiKeyAgent, { auth: { apiKeys: [KEY] } })
      await expectUnauthorized(await send(target, { authorization: `Bearer ${KEY}` }))
    })

    it('accepts the right key with 200', async () => {
      const target = await transport.start(apiKeyAgent, { auth: { apiKeys: [KEY] } })
      await expectAccepted(await send(target, { 'x-api-key': KEY }))
    })
  })

  describe('both schemes declared', () => {
    it('accepts either credential, and refuses none or wrong ones with 401 and WWW-Authenticate', async () => {
      const target = await transport.start(bothAgent, { auth: { bearerTokens: [TOKEN], apiKeys: [KEY] } })
      await expectAccepted(await send(target, { authorization: `Bearer ${TOKEN}` }))
      await expectAccepted(await send(target, { 'x-api-key': KEY }))
      const missing = await send(target)
      expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer\b/)
      await expectUnauthorized(missing)
      await expectUnauthorized(await send(target, { authorization: `Bearer ${KEY}` }))
      await expectUnauthorized(await send(target, { 'x-api-key': TOKEN }))
      await expectUnauthorized(await send(target, { authorization: 'Bearer nope', 'x-api-key': 'nope' }))
    })
  })

  describe('what the check covers', () => {
    it('keeps the agent card public and shows authentication.schemes on it', async () => {
      const target = await transport.start(bothAgent, { auth: { bearerTokens: [TOKEN], apiKeys: [KEY] } })
      const response = await target.fetch('/.well-known/agent.json')
      expect(response.status).toBe(200)
      const card = await response.json()
      expect(card.authentication).toEqual({ schemes: ['bearer', 'apiKey'] })
      expect(JSON.stringify(card)).not.toContain(TOKEN)
      expect(JSON.stringify(card)).not.toContain(KEY)
    })

    it('shows a single declared scheme on the card as declared', async () => {
      const target = await transport.start(apiKeyAgent, { auth: { apiKeys: [KEY] } })
      const card = await (await target.fetch('/.well-known/agent.json')).json()
      expect(card.authentication).toEqual({ schemes: ['apiKey'] })
    })

    it('protects every method and POST /jsonrpc, before the body is read', async () => {
      const target = await transport.start(bearerAgent, { auth: { bearerTokens: [TOKEN] } })
      const task = (
        await target.rpc('message/send', sendParams('mine'), { headers: { authorization: `Bearer ${TOKEN}` } })
      ).body.result
      expect(task.status.state).toBe('completed')
      for (const [method, params] of [
        ['tasks/get', { id: task.id }],
        ['tasks/cancel', { id: task.id }],
        ['message/stream', sendParams('x')],
        ['no/such/method', {}],
      ] as const) {
        const reply = await target.rpc(method, params)
        expect(reply.status, method).toBe(401)
        expect(reply.body.error.code, method).toBe(-32000)
        expect(reply.body).not.toHaveProperty('result')
      }
      const alias = await target.rpc('message/send', sendParams('x'), { path: '/jsonrpc' })
      expect(alias.status).toBe(401)
      expect(alias.body.error.code).toBe(-32000)
      // An anonymous client learns nothing about the body's shape.
      await expectUnauthorized(await target.post('{not json'))
      await expectUnauthorized(await target.post('{}', { 'content-type': 'text/plain' }))
    })
  })

  describe('credentials from the environment', () => {
    it('reads A2A_BEARER_TOKEN as a comma-separated list when the auth option is absent', async () => {
      process.env.A2A_BEARER_TOKEN = 'env-token-one, env-token-two'
      const target = await transport.start(bearerAgent)
      await expectAccepted(await send(target, { authorization: 'Bearer env-token-one' }))
      await expectAccepted(await send(target, { authorization: 'Bearer env-token-two' }))
      await expectUnauthorized(await send(target, { authorization: 'Bearer env-token-one, env-token-two' }))
      await expectUnauthorized(await send(target))
    })

    it('reads A2A_API_KEY as a comma-separated list when the auth option is absent', async () => {
      process.env.A2A_API_KEY = 'env-key-one,env-key-two'
      const target = await transport.start(apiKeyAgent)
      await expectAccepted(await send(target, { 'x-api-key': 'env-key-one' }))
      await expectAccepted(await send(target, { 'x-api-key': 'env-key-two' }))
      await expectUnauthorized(await send(target, { 'x-api-key': 'env-key-three' }))
    })

    it('serves both schemes from both variables', async () => {
      process.env.A2A_BEARER_TOKEN = 'env-token'
      process.env.A2A_API_KEY = 'env-key'
      const target = await transport.start(bothAgent)
      await expectAccepted(await send(target, { authorization: 'Bearer env-token' }))
      await expectAccepted(await send(target, { 'x-api-key': 'env-key' }))
      await expectUnauthorized(await send(target))
    })

    it('uses the auth option instead of the environment when both are given', async () => {
      process.env.A2A_BEARER_TOKEN = 'env-token'
      const target = await transport.start(bearerAgent, { auth: { bearerTokens: ['option-token'] } })
      await expectAccepted(await send(target, { authorization: 'Bearer option-token' }))
      await expectUnauthorized(await send(target, { authorization: 'Bearer env-token' }))
    })

    it('does not protect an agent whose card declares no scheme, even with a token in the environment, and warns', async () => {
      process.env.A2A_BEARER_TOKEN = 'env-token'
      const target = await transport.start(openAgent)
      await expectAccepted(await send(target))
      expect(target.logger.text('warn')).toContain('A2A_BEARER_TOKEN')
      const card = await (await target.fetch('/.well-known/agent.json')).json()
      expect(card).not.toHaveProperty('authentication')
    })
  })

  describe('start-up refusals', () => {
    it.each([
      ['bearer', 'A2A_BEARER_TOKEN'],
      ['apiKey', 'A2A_API_KEY'],
    ])('refuses to start when the card declares %s and no credential is configured, naming %s', async (scheme, env) => {
      await expect(transport.start(protectedAgent([scheme]))).rejects.toThrow(env)
    })

    it('refuses to start when the credential variable holds only separators and spaces', async () => {
      process.env.A2A_BEARER_TOKEN = ' , ,'
      await expect(transport.start(bearerAgent)).rejects.toThrow('A2A_BEARER_TOKEN')
    })

    it('refuses to start when the auth option gives an empty list for a declared scheme', async () => {
      await expect(transport.start(apiKeyAgent, { auth: { apiKeys: [] } })).rejects.toThrow('A2A_API_KEY')
    })

    it('refuses to start when only one of two declared schemes has a credential, naming the missing one', async () => {
      process.env.A2A_BEARER_TOKEN = 'env-token'
      await expect(transport.start(bothAgent)).rejects.toThrow('A2A_API_KEY')
    })

    it.each([
      { declared: 'bearer', scheme: 'apiKey' },
      { declared: 'apiKey', scheme: 'bearer' },
    ])(
      'refuses to start when the auth option configures $scheme but the card declares only $declared, naming $scheme',
      async ({ declared, scheme }) => {
        // The declared scheme has its credential; the only fault is the undeclared one.
        await expect(
          transport.start(protectedAgent([declared]), { auth: { bearerTokens: [TOKEN], apiKeys: [KEY] } }),
        ).rejects.toThrow(`"${scheme}"`)
      },
    )

    it('refuses to start when the auth option configures a scheme on a card without authentication', async () => {
      await expect(transport.start(openAgent, { auth: { bearerTokens: [TOKEN] } })).rejects.toThrow('"bearer"')
    })

    it.each(['oauth2', 'basic', 'Bearer'])(
      'refuses to start when the card names the unknown scheme %s',
      async (scheme) => {
        process.env.A2A_BEARER_TOKEN = 'env-token'
        await expect(transport.start(protectedAgent([scheme]))).rejects.toThrow(`"${scheme}"`)
      },
    )

    it('refuses an empty list of schemes', async () => {
      await expect(transport.start(protectedAgent([]))).rejects.toThrow('authentication.schemes')
    })
  })
})

describe('createA2AApp start-up refusals', () => {
  const saved = { ...process.env }
  afterEach(() => {
    for (const name of ENV_NAMES) {
      if (saved[name] === undefined) delete process.env[name]
      else process.env[name] = saved[name]
    }
  })

  it('throws synchronously, naming the variable, the option scheme or the unknown scheme', () => {
    for (const name of ENV_NAMES) delete process.env[name]
    expect(() => createA2AApp(bearerAgent)).toThrow('A2A_BEARER_TOKEN')
    expect(() => createA2AApp(apiKeyAgent)).toThrow('A2A_API_KEY')
    expect(() => createA2AApp(bearerAgent, { auth: { bearerTokens: [TOKEN], apiKeys: [KEY] } })).toThrow('"apiKey"')
    expect(() => createA2AApp(protectedAgent(['oauth2']), { auth: { bearerTokens: [TOKEN] } })).toThrow('oauth2')
  })
})
