import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client'
import { defineAgent } from 'a2a-runtime'
import { describe, expect, it } from 'vitest'
import { createAgentsApp } from '../../runtime/src/multi/agents-app.ts'
import { v1Message, v1Text } from '../_sdk-v1.ts'
import { userMessageV1 } from './_messages.ts'
import { planner, postJson, startAgents, writer } from './_multi-agent.ts'

/**
 * Two agents served by one process at /planner and /writer over a real port: their cards and addresses, the list at
 * the root, each agent's own credentials, the official SDK client finding each from its card URL, and a shutdown
 * that drains both.
 */

const V1 = { 'a2a-version': '1.0' }
const card = async (url: string, headers: Record<string, string> = {}) => (await fetch(url, { headers })).json()

describe('several agents in one server', () => {
  it('gives each agent its cards at its path, with its address and its tenant in the v1.0 interfaces', async () => {
    const server = await startAgents()
    const { url } = server
    const v1 = await card(`${url}planner/.well-known/agent-card.json`, V1)
    expect(v1.name).toBe('Planner')
    expect(v1.supportedInterfaces).toEqual([
      { url: `${url}planner/`, protocolBinding: 'JSONRPC', tenant: 'planner', protocolVersion: '1.0' },
      { url: `${url}planner`, protocolBinding: 'HTTP+JSON', tenant: 'planner', protocolVersion: '1.0' },
      { url: `${url}planner/v0.3`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ])
    const v03 = await card(`${url}writer/.well-known/agent-card.json`)
    expect(v03).toMatchObject({ name: 'Writer', url: `${url}writer/v0.3`, protocolVersion: '0.3.0' })
    const platform = await card(`${url}writer/.well-known/agent.json`)
    expect(platform).toMatchObject({ name: 'Writer', url: `${url}writer/` })
    expect(server.urls).toEqual({ planner: `${url}planner/`, writer: `${url}writer/` })
  })

  it('lists the agents at /.well-known/agents.json; the root card paths answer 404 pointing there', async () => {
    const { url } = await startAgents()
    const directory = await fetch(`${url}.well-known/agents.json`)
    expect(directory.status).toBe(200)
    expect(await directory.json()).toEqual({
      agents: [
        {
          name: 'planner',
          cardName: 'Planner',
          description: 'Plans',
          url: `${url}planner/`,
          card: `${url}planner/.well-known/agent-card.json`,
        },
        {
          name: 'writer',
          cardName: 'Writer',
          description: 'Writes',
          url: `${url}writer/`,
          card: `${url}writer/.well-known/agent-card.json`,
        },
      ],
    })
    for (const path of ['.well-known/agent-card.json', '.well-known/agent.json']) {
      const root = await fetch(`${url}${path}`)
      expect(root.status).toBe(404)
      expect(root.headers.get('link')).toBe('</.well-known/agents.json>; rel="index"')
      expect((await root.json()).error.message).toMatch(/several agents.*\/\.well-known\/agents\.json/)
    }
    // Neither JSON-RPC at the root nor an agent that does not exist.
    expect((await postJson(url, { jsonrpc: '2.0', id: 1, method: 'message/send', params: {} })).status).toBe(404)
    expect((await postJson(`${url}nobody`, { jsonrpc: '2.0', id: 1, method: 'message/send', params: {} })).status).toBe(
      404,
    )
    expect((await fetch(`${url}healthz`)).status).toBe(200)
  })

  it('checks each agent’s own credentials, and keeps each caller’s tasks apart inside an agent', async () => {
    const guarded = defineAgent({
      card: { name: 'Guarded', description: 'Needs a token', authentication: { schemes: ['bearer'] } },
      execute: (ctx, task) => {
        task.artifact(`Hello ${ctx.principal?.subject}`)
        task.complete()
      },
    })
    const server = await startAgents(
      { planner, writer: { agent: guarded, auth: { bearerTokens: ['alice:a-secret', 'bob:b-secret'] } } },
      { env: {} },
    )
    const { planner: open, writer: closed } = server.urls as { planner: string; writer: string }
    const send = (url: string, headers: Record<string, string> = {}) =>
      postJson(
        url,
        { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: userMessageV1('hi') },
        { ...V1, ...headers },
      )
    expect((await send(open)).body.result.task.status.state).toBe('TASK_STATE_COMPLETED')
    const refused = await send(closed)
    expect(refused.status).toBe(401)
    const alice = { authorization: 'Bearer a-secret' }
    const sent = await send(closed, alice)
    expect(sent.body.result.task.artifacts[0].parts[0].text).toBe('Hello alice')
    const id = sent.body.result.task.id
    const get = (headers: Record<string, string>) =>
      postJson(closed, { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } }, { ...V1, ...headers })
    expect((await get(alice)).body.result.id).toBe(id)
    expect((await get({ authorization: 'Bearer b-secret' })).body.error.code).toBe(-32001)
    // The open agent's callers see nothing of the guarded one's tasks.
    const fromOpen = await postJson(open, { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } }, V1)
    expect(fromOpen.body.error.code).toBe(-32001)
    // The cards: each declares its own schemes.
    expect((await card(`${closed}.well-known/agent-card.json`, V1)).securitySchemes).toEqual({
      bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } },
    })
    expect((await card(`${open}.well-known/agent-card.json`, V1)).securitySchemes).toBeUndefined()
  })

  it.each([
    ['JSON-RPC', new JsonRpcTransportFactory()],
    ['HTTP+JSON', new RestTransportFactory()],
  ])(
    'the official SDK client discovers each agent from its card URL and talks to it over %s',
    async (_name, transport) => {
      const { urls } = await startAgents()
      const factory = new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [transport] }),
      )
      const plannerClient = await factory.createFromUrl(urls.planner!)
      const writerClient = await factory.createFromUrl(urls.writer!)
      const sent: any = await plannerClient.sendMessage(v1Message('plan a trip'))
      expect(v1Text(sent)).toBe('Echo: plan a trip')
      // The client sends the card's tenant with each request: the planner answers its own task, the writer does not.
      const got: any = await plannerClient.getTask({ tenant: '', id: sent.id, historyLength: 0 })
      expect(got.id).toBe(sent.id)
      await expect(writerClient.getTask({ tenant: '', id: sent.id, historyLength: 0 })).rejects.toThrow(/not found/i)
      const written: any = await writerClient.sendMessage(v1Message('write it'))
      expect(v1Text(written)).toBe('Echo: write it')
    },
  )

  it('drains every agent’s running tasks on close, readiness going false first', async () => {
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    const slow = defineAgent({
      card: { name: 'Slow', description: 'Finishes when told' },
      async execute(_ctx, task) {
        await held
        task.artifact('done')
        task.complete()
      },
    })
    const server = await startAgents({ planner, slow })
    const started = await postJson(
      server.urls.slow!,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { ...userMessageV1('go'), configuration: { returnImmediately: true } },
      },
      V1,
    )
    const id = started.body.result.task.id
    const closed = server.close()
    await expect.poll(async () => (await fetch(`${server.url}readyz`)).status).toBe(503)
    // A new task is refused while the running one drains.
    expect(
      (
        await postJson(
          server.urls.planner!,
          { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: userMessageV1('late') },
          V1,
        )
      ).status,
    ).toBe(503)
    release()
    await closed
    expect(await server.app.store.get(id)).toMatchObject({ status: { state: 'completed' } })
  })

  it('refuses a name that is no path segment, naming it, and a store that keeps no owners', () => {
    expect(() => createAgentsApp({ 'two words': planner })).toThrow(/^agents: "two words" cannot be an agent's name/)
    expect(() => createAgentsApp({ healthz: planner })).toThrow(/^agents: "healthz" cannot be an agent's name/)
    expect(() => createAgentsApp({})).toThrow('agents must name at least one agent')
    // An array's indexes would be the paths (/0, /1).
    expect(() => createAgentsApp([planner, writer] as never)).toThrow(
      /^agents must be an object of agents by name, not an array/,
    )
    expect(() => createAgentsApp({ planner: { agent: {} as never } })).toThrow(
      'agents.planner must be an agent (defineAgent) or { agent, auth }',
    )
    const ownerless = {
      get: () => undefined,
      create: () => {},
      append: () => {},
      events: () => undefined,
      list: () => ({ tasks: [], total: 0 }),
    }
    expect(() => createAgentsApp({ planner, writer }, { store: ownerless })).toThrow(/does not keep owners/)
  })
})
