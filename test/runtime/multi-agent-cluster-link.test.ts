import { createPostgresStore } from 'a2a-runtime/postgres-store'
import { describe, expect, inject, it, onTestFinished } from 'vitest'
import { agentStore, sharedClusterLink } from '../../runtime/src/multi/_agent-store.ts'
import type { ClusterLink, TaskStore } from '../../runtime/src/stores/task-store.ts'

/**
 * The agents of one server share their store's cluster link (forwarded cancels and lost leases go to every agent's
 * engine): every other member of the store's link reaches the engines as the store made it, its flags (which turn
 * the store's features on: `claimsOnCreate`, `createJoinsFirstEvents`) and any a store adds later.
 */

/** A link with every member, one of them a flag no release has yet, recording what it is asked. */
function recordingLink() {
  const calls: string[] = []
  const link = {
    claimsOnCreate: true,
    createJoinsFirstEvents: true,
    aFlagOfLater: 'kept',
    async claim(taskId: string) {
      calls.push(`claim ${taskId}`)
      return true
    },
    async release(taskId: string) {
      calls.push(`release ${taskId}`)
    },
    follow(taskId: string) {
      calls.push(`follow ${taskId}`)
      return () => {}
    },
    async cancel(taskId: string): Promise<undefined> {
      calls.push(`cancel ${taskId}`)
      return undefined
    },
    onCancel: () => {},
    onLost: () => {},
  }
  return { link, calls }
}

const memoryLikeStore = (cluster: ClusterLink): TaskStore => ({
  get: () => ({ id: 't', contextId: 'c', kind: 'task', status: { state: 'working' } }) as never,
  create: () => {},
  append: () => {},
  events: () => undefined,
  list: () => ({ tasks: [], total: 0 }),
  cluster,
  keepsOwners: true,
})

describe("the agents' shared cluster link", () => {
  it("forwards every member of the store's link but the two it hands to every engine", async () => {
    const { link, calls } = recordingLink()
    const shared = sharedClusterLink(link as ClusterLink)!
    // Each agent's view of the store wraps it once more (its cancels ask the agent's own view first).
    const view = agentStore(memoryLikeStore(shared), 'planner', () => false, shared).cluster!
    for (const forwarded of [shared, view]) {
      for (const key of Object.keys(link) as Array<keyof typeof link>) {
        expect(key in forwarded, key).toBe(true)
        if (typeof link[key] !== 'function') expect((forwarded as any)[key], key).toBe(link[key])
      }
      expect(await forwarded.claim('t1')).toBe(true)
      await forwarded.release('t1')
      forwarded.follow('t1', 0, () => {})()
      expect(await forwarded.cancel('t1')).toBeUndefined()
    }
    const once = ['claim t1', 'release t1', 'follow t1', 'cancel t1']
    expect(calls).toEqual([...once, ...once])
  })

  it('forwards a link whose methods live on its class, with their own `this`', async () => {
    class Link {
      readonly claimsOnCreate = true
      #held = new Set<string>()
      async claim(taskId: string) {
        this.#held.add(taskId)
        return true
      }
      async release(taskId: string) {
        this.#held.delete(taskId)
      }
      follow() {
        return () => {}
      }
      async cancel(): Promise<undefined> {
        return undefined
      }
      onCancel() {}
      onLost() {}
    }
    const shared = sharedClusterLink(new Link())!
    expect(shared.claimsOnCreate).toBe(true)
    expect(await shared.claim('t1')).toBe(true)
    await shared.release('t1')
  })

  it('keeps the PostgreSQL store’s flags: its create takes the lease and joins the first events', async () => {
    const store = createPostgresStore({
      url: inject('postgresUrl'),
      schema: `link_${Math.random().toString(36).slice(2, 10)}`,
    })
    onTestFinished(() => store.close?.())
    const shared = sharedClusterLink(store.cluster)!
    expect(shared.claimsOnCreate).toBe(true)
    expect(shared.createJoinsFirstEvents).toBe(true)
  })
})
