import { randomUUID } from 'node:crypto'
import { Role, TaskState } from '@a2a-js/sdk'
import {
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client'
import type { Principal } from 'a2a-runtime'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type OidcIssuer, startOidcIssuer, TEST_AUDIENCE, tampered } from '../_oidc-issuer.ts'
import { agent } from './_agents.ts'
import { transports } from './_transports.ts'

/**
 * Callers proven by JWTs of an OpenID Connect issuer (a real one on loopback, its keys made here): every bad token
 * is a 401 that leaks nothing, each subject sees only its own tasks on every store, the agent reads who called, the
 * card declares the scheme, and the official SDK client works with a JWT.
 */

let issuer: OidcIssuer
beforeAll(async () => {
  issuer = await startOidcIssuer()
})
afterAll(() => issuer?.stop())

const principals: Array<Principal | undefined> = []
const oidcAgent = agent(
  (ctx, task) => {
    principals.push(ctx.principal)
    if (ctx.text === 'ask' && ctx.history.length === 1) return task.inputRequired('Which one?')
    task.artifact(`Hello, ${ctx.principal?.subject}`)
    task.complete()
  },
  { card: { authentication: { schemes: ['oidc'] } }, cancel: (_ctx, task) => task.cancel() },
)

const env = () => ({ A2A_OIDC_ISSUER: issuer.url, A2A_OIDC_AUDIENCE: TEST_AUDIENCE })
const bearer = (token: string) => ({ authorization: `Bearer ${token}`, 'a2a-version': '1.0' })
const message = (text: string, taskId?: string) => ({
  message: { role: 'ROLE_USER', messageId: randomUUID(), parts: [{ text }], ...(taskId && { taskId }) },
})

describe.each(transports)('OpenID Connect callers ($name)', (transport) => {
  // Key rotation (an unknown kid fetches the keys again, at most once per cooldown) is pinned by
  // oidc-verifier.test.ts, where the cooldown can be short.
  it('every bad token is a 401 with the Bearer challenge, nothing of a task in it, and the agent never runs', async () => {
    const target = await transport.start(oidcAgent, { env: env() })
    const now = Math.floor(Date.now() / 1000)
    const good = await issuer.mint({ sub: 'alice' })
    const created = await target.rpc('SendMessage', message('ask'), { headers: bearer(good) })
    const taskId: string = created.body.result.task.id
    const bad: Record<string, string> = {
      expired: await issuer.mint({ sub: 'alice', iat: now - 600, exp: now - 120 }),
      'not yet valid': await issuer.mint({ sub: 'alice', nbf: now + 600 }),
      'another audience': await issuer.mint({ sub: 'alice', aud: 'https://another-agent.test' }),
      'another issuer': await issuer.mint({ sub: 'alice', iss: 'https://issuer.example' }),
      'a key the issuer never published': await issuer.mint({ sub: 'alice' }, { unpublished: true }),
      'alg none': issuer.unsignedToken({ sub: 'alice' }),
      'HS256 keyed with the public key': await issuer.hmacWithPublicKey('pem', { sub: 'alice' }),
      'a tampered payload': tampered(good, { iss: issuer.url, sub: 'bob', aud: TEST_AUDIENCE, exp: now + 300 }),
      'not a JWT': 'opaque-token',
    }
    const before = principals.length
    for (const [what, token] of Object.entries(bad)) {
      for (const [method, params] of [
        ['GetTask', { id: taskId }],
        ['SendMessage', message('more', taskId)],
        ['ListTasks', {}],
      ] as const) {
        const reply = await target.rpc(method, params, { headers: bearer(token) })
        expect(reply.status, `${what}, ${method}`).toBe(401)
        expect(reply.headers.get('www-authenticate'), what).toBe('Bearer')
        expect(Object.keys(reply.body).sort(), what).toEqual(['error', 'id', 'jsonrpc'])
        expect(JSON.stringify(reply.body), what).not.toContain(taskId)
        expect(JSON.stringify(reply.body), what).not.toContain(token.split('.')[1] ?? token)
      }
    }
    expect(principals.length).toBe(before)
    const missing = await target.rpc('ListTasks', {}, { headers: { 'a2a-version': '1.0' } })
    expect(missing.status).toBe(401)
    expect(missing.body.error.message).toBe('Unauthorized: send Authorization: Bearer <token>')
  })

  it('each subject sees only its own tasks, and the agent reads its subject, issuer, scopes and claims', async () => {
    const target = await transport.start(oidcAgent, { env: env() })
    const alice = bearer(await issuer.mint({ sub: 'alice', scope: 'tasks:read tasks:write', team: 'blue' }))
    const bob = bearer(await issuer.mint({ sub: 'bob' }))
    principals.length = 0
    const alices = (await target.rpc('SendMessage', message('ask'), { headers: alice })).body.result.task
    expect(principals[0]).toMatchObject({
      id: `${issuer.url} alice`,
      scheme: 'oidc',
      subject: 'alice',
      issuer: issuer.url,
      scopes: ['tasks:read', 'tasks:write'],
      claims: { sub: 'alice', team: 'blue', aud: TEST_AUDIENCE },
    })
    const unknown = randomUUID()
    for (const [method, params] of [
      ['GetTask', (id: string) => ({ id })],
      ['CancelTask', (id: string) => ({ id })],
      ['SendMessage', (id: string) => message('more', id)],
    ] as const) {
      const foreign = await target.rpc(method, params(alices.id), { headers: bob, id: 1 })
      const none = await target.rpc(method, params(unknown), { headers: bob, id: 1 })
      expect(JSON.stringify(foreign.body).replaceAll(alices.id, '<id>'), method).toBe(
        JSON.stringify(none.body).replaceAll(unknown, '<id>'),
      )
      expect(foreign.body.error.code, method).toBe(-32001)
    }
    const listed = await target.rpc('ListTasks', {}, { headers: bob })
    expect(listed.body.result.tasks.map((task: { id: string }) => task.id)).not.toContain(alices.id)
    const own = await target.rpc('ListTasks', {}, { headers: alice })
    expect(own.body.result.tasks.map((task: { id: string }) => task.id)).toContain(alices.id)
    // Alice's task waited for her all along: nothing Bob sent moved it.
    const continued = await target.rpc('SendMessage', message('the blue one', alices.id), { headers: alice })
    expect(continued.body.result.task.status.state).toBe('TASK_STATE_COMPLETED')
  })
})

describe('required scopes', () => {
  it('a token without a required scope is 403 with the insufficient_scope challenge, naming the scope', async () => {
    const target = await transports[1]!.start(oidcAgent, { env: { ...env(), A2A_OIDC_SCOPES: 'tasks:write' } })
    const reading = await issuer.mint({ sub: 'erin', scope: 'tasks:read' })
    const refused = await target.rpc('SendMessage', message('hi'), { headers: bearer(reading) })
    expect(refused.status).toBe(403)
    expect(refused.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope"')
    expect(refused.body.error.message).toContain('tasks:write')
    const writing = await issuer.mint({ sub: 'erin', scope: 'tasks:read tasks:write' })
    expect((await target.rpc('SendMessage', message('hi'), { headers: bearer(writing) })).status).toBe(200)
  })
})

describe('the card of an agent whose callers are OpenID Connect subjects', () => {
  it("declares the scheme with the issuer's discovery URL, in the v1.0 and v0.3 shapes", async () => {
    const target = await transports[1]!.start(oidcAgent, { env: env() })
    const v1 = await (await target.fetch('/.well-known/agent-card.json', { headers: { 'a2a-version': '1.0' } })).json()
    const discovery = `${issuer.url}/.well-known/openid-configuration`
    expect(v1.securitySchemes).toEqual({ oidc: { openIdConnectSecurityScheme: { openIdConnectUrl: discovery } } })
    expect(v1.securityRequirements).toEqual([{ schemes: { oidc: { list: [] } } }])
    const v03 = await (await target.fetch('/.well-known/agent-card.json')).json()
    expect(v03.securitySchemes).toEqual({ oidc: { type: 'openIdConnect', openIdConnectUrl: discovery } })
    expect(v03.security).toEqual([{ oidc: [] }])
    const platform = await (await target.fetch('/.well-known/agent.json')).json()
    expect(platform.authentication).toEqual({ schemes: ['oidc'] })
    expect(JSON.stringify(platform)).not.toContain('openIdConnectUrl')
  })

  it('stops start-up when the card declares oidc and no issuer is set', async () => {
    await expect(transports[0]!.start(oidcAgent, { env: {} })).rejects.toThrow(
      'The agent card declares the "oidc" authentication scheme but no issuer is configured: set A2A_OIDC_ISSUER (or the auth.oidc.issuer option)',
    )
  })
})

describe('@a2a-js/sdk 1.x with a JWT', () => {
  it('discovers the card, sends and reads its task with the token its fetch adds', async () => {
    const target = await transports[1]!.start(oidcAgent, { env: env() })
    const token = await issuer.mint({ sub: 'dave' })
    const fetchImpl = createAuthenticatingFetchWithRetry(fetch, {
      headers: async () => ({ authorization: `Bearer ${token}` }),
      shouldRetryWithHeaders: async () => undefined,
    })
    const client = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
      }),
    ).createFromUrl(target.url)
    const sent: any = await client.sendMessage({
      tenant: '',
      metadata: {},
      configuration: undefined,
      message: {
        messageId: randomUUID(),
        role: Role.ROLE_USER,
        parts: [
          { content: { $case: 'text', value: 'hi' }, metadata: undefined, filename: '', mediaType: 'text/plain' },
        ],
        taskId: '',
        contextId: '',
        extensions: [],
        metadata: {},
        referenceTaskIds: [],
      },
    } as any)
    expect(sent.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(sent.artifacts[0].parts[0].content.value).toBe('Hello, dave')
    const got: any = await client.getTask({ tenant: '', id: sent.id, historyLength: 0 } as any)
    expect(got.id).toBe(sent.id)
  })
})
