import { agentWorker } from 'a2a-runtime/workers'
import { describe, expect, it, vi } from 'vitest'
import { agent, echoAgent } from './_agents.ts'
import { DurableObjectStorageStandIn } from './_durable-object-storage.ts'

// agentWorker as served by workerd is covered by test/cross-runtime/behaviour.test.ts (wrangler dev); these pin what it
// decides before any request reaches a Durable Object.

describe('agentWorker', () => {
  it('answers a Worker deployed without its Durable Object binding with a JSON-RPC error, and logs the fix for the operator', async () => {
    const { worker } = agentWorker(echoAgent, { binding: 'TASKS' })
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      const response = await worker.fetch(new Request('https://agent.example/', { method: 'POST', body: '{}' }), {
        AGENT: {},
        A2A_API_KEY: 'k',
      })
      expect(response.status).toBe(500)
      expect(await response.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32603, message: 'Internal error: the agent is not configured' },
      })
      expect(logged).toHaveBeenCalledWith(expect.stringContaining('the Durable Object binding TASKS is missing'))
    } finally {
      logged.mockRestore()
    }
  })

  it("refuses A2A_STORE in the Worker's variables when its object starts: tasks are kept in the Durable Object", () => {
    const { AgentObject } = agentWorker(echoAgent)
    const state = {
      storage: new DurableObjectStorageStandIn(),
      blockConcurrencyWhile: <T>(callback: () => Promise<T>) => callback(),
    }
    expect(() => new AgentObject(state, { A2A_STORE: 'file:.tasks' })).toThrow(
      /A2A_STORE does not apply on Cloudflare Workers/,
    )
  })

  it("reads a number in the Worker's variables as a setting (wrangler.jsonc vars may be numbers), refusing a bad one by name", () => {
    const { AgentObject } = agentWorker(echoAgent)
    const state = {
      storage: new DurableObjectStorageStandIn(),
      blockConcurrencyWhile: <T>(callback: () => Promise<T>) => callback(),
    }
    expect(() => new AgentObject(state, { A2A_MAX_RUNNING_BYTES: 1 })).toThrow(/A2A_MAX_RUNNING_BYTES/)
    expect(() => new AgentObject(state, { A2A_MAX_RUNNING_BYTES: 64 * 1024 * 1024 })).not.toThrow()
  })

  it('answers 503 with a JSON-RPC error and Retry-After when the object does not answer (resetting on a deploy, overloaded)', async () => {
    const { worker } = agentWorker(echoAgent)
    const failing = {
      idFromName: (name: string) => name,
      get: () => ({ fetch: () => Promise.reject(new Error('Durable Object reset because its code was updated')) }),
    }
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      const response = await worker.fetch(new Request('https://agent.example/', { method: 'POST', body: '{}' }), {
        AGENT: failing,
      })
      expect(response.status).toBe(503)
      expect(response.headers.get('retry-after')).toBe('1')
      expect(await response.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32603, message: 'The agent is unavailable; retry shortly' },
      })
      expect(logged).toHaveBeenCalledWith("The agent's Durable Object did not answer", expect.any(Error))
    } finally {
      logged.mockRestore()
    }
  })

  it('hands every request to the one object named for the agent, unchanged', async () => {
    const { worker } = agentWorker(echoAgent)
    const seen: Array<{ name: string; url: string }> = []
    const namespace = {
      idFromName: (name: string) => ({ name }),
      get: (id: { name: string }) => ({
        fetch: async (request: Request) => {
          seen.push({ name: id.name, url: request.url })
          return new Response('from the object')
        },
      }),
    }
    const first = await worker.fetch(new Request('https://agent.example/.well-known/agent-card.json'), {
      AGENT: namespace,
    })
    const second = await worker.fetch(new Request('https://agent.example/', { method: 'POST', body: '{}' }), {
      AGENT: namespace,
    })
    expect([await first.text(), await second.text()]).toEqual(['from the object', 'from the object'])
    expect(seen).toEqual([
      { name: 'agent', url: 'https://agent.example/.well-known/agent-card.json' },
      { name: 'agent', url: 'https://agent.example/' },
    ])
  })
})

describe("agentWorker's Durable Object under identity", () => {
  it("keeps each caller's tasks its own, also after the object restarts on the same storage", async () => {
    const protectedEcho = agent(
      (ctx, task) => {
        task.artifact(`Echo: ${ctx.text}`)
        task.complete()
      },
      { card: { authentication: { schemes: ['apiKey'] } } },
    )
    const { AgentObject } = agentWorker(protectedEcho)
    const storage = new DurableObjectStorageStandIn()
    const start = async () => {
      let restored: Promise<unknown> = Promise.resolve()
      const object = new AgentObject(
        {
          storage,
          blockConcurrencyWhile: <T>(callback: () => Promise<T>) => {
            const done = callback()
            restored = done
            return done
          },
        },
        { A2A_API_KEY: 'alice:key-a,bob:key-b' },
      )
      await restored
      return object
    }
    const rpc = async (
      object: { fetch(request: Request): Promise<Response> },
      key: string,
      method: string,
      params: object,
    ) =>
      (
        await object.fetch(
          new Request('https://agent.example/', {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': key, 'a2a-version': '1.0' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
          }),
        )
      ).json()
    const message = { role: 'ROLE_USER', messageId: crypto.randomUUID(), parts: [{ text: 'hi' }] }
    const first = await start()
    const created = await rpc(first, 'key-a', 'SendMessage', { message })
    const taskId = created.result.task.id
    for (const object of [first, await start()]) {
      expect((await rpc(object, 'key-a', 'GetTask', { id: taskId })).result.id).toBe(taskId)
      const bobs = await rpc(object, 'key-b', 'GetTask', { id: taskId })
      const unknown = await rpc(object, 'key-b', 'GetTask', { id: crypto.randomUUID() })
      expect(bobs.error.code).toBe(-32001)
      expect(bobs.error.message.replace(taskId, '<id>')).toBe(unknown.error.message.replace(/[0-9a-f-]{36}/, '<id>'))
      expect((await rpc(object, 'key-b', 'ListTasks', {})).result.totalSize).toBe(0)
      expect((await rpc(object, 'key-a', 'ListTasks', {})).result.totalSize).toBe(1)
    }
  })
})
