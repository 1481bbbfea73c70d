import { agentWorker } from 'a2a-runtime/workers'
import { describe, expect, it, vi } from 'vitest'
import { echoAgent } from './_agents.ts'
import { DurableObjectStorageStandIn } from './_durable-object-storage.ts'

// The Worker and its Durable Object as the Workers runtime calls them; the real platform is covered by
// test/cross-runtime/behaviour.test.ts (wrangler dev).

/** A namespace whose one object is made with `storage`, as the platform would. */
function namespaceWith(storage: DurableObjectStorageStandIn) {
  const { worker, AgentObject } = agentWorker(echoAgent)
  const object = new AgentObject({ storage, blockConcurrencyWhile: (callback) => callback() }, {})
  const asked: string[] = []
  const namespace = {
    idFromName: (name: string) => name,
    get: () => ({
      fetch: (request: Request) => {
        asked.push(new URL(request.url).pathname)
        return object.fetch(request)
      },
    }),
  }
  return { worker, namespace, asked }
}

describe('health checks on Cloudflare Workers', () => {
  it('/healthz is answered by the Worker without waking the Durable Object; /readyz by the object from its storage', async () => {
    const { worker, namespace, asked } = namespaceWith(new DurableObjectStorageStandIn())
    const alive = await worker.fetch(new Request('https://agent.example/healthz'), { AGENT: namespace })
    expect(alive.status).toBe(200)
    expect(await alive.json()).toEqual({ status: 'ok' })
    expect(asked).toEqual([])
    const ready = await worker.fetch(new Request('https://agent.example/readyz'), { AGENT: namespace })
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({ status: 'ready' })
    expect(asked).toEqual(['/readyz'])
  })

  it("/readyz answers 503 when the object's storage fails a read", async () => {
    const storage = new DurableObjectStorageStandIn()
    const { worker, namespace } = namespaceWith(storage)
    storage.list = () => Promise.reject(new Error('storage is unavailable'))
    const logged = vi.spyOn(console, 'warn').mockImplementation(() => {})
    let answer: Response
    try {
      answer = await worker.fetch(new Request('https://agent.example/readyz'), { AGENT: namespace })
      expect(logged.mock.calls.map((call) => String(call[0]))).toEqual([
        expect.stringContaining('the task store is unreachable: storage is unavailable'),
      ])
    } finally {
      logged.mockRestore()
    }
    expect(answer.status).toBe(503)
    // A fixed reason: the storage's own error goes to the log, not to whoever probes.
    expect(await answer.json()).toEqual({ status: 'unavailable', reason: 'the task store is unreachable' })
  })

  it("/readyz answers 503 in the health check's shape when the object does not answer", async () => {
    const { worker } = agentWorker(echoAgent)
    const failing = {
      idFromName: (name: string) => name,
      get: () => ({ fetch: () => Promise.reject(new Error('reset')) }),
    }
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      const answer = await worker.fetch(new Request('https://agent.example/readyz'), { AGENT: failing })
      expect(answer.status).toBe(503)
      expect(await answer.json()).toEqual({
        status: 'unavailable',
        reason: "the agent's Durable Object did not answer",
      })
    } finally {
      logged.mockRestore()
    }
  })
})
