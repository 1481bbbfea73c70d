import { createDurableObjectStore } from 'a2a-runtime/workers'
import { describe, expect, it } from 'vitest'
import { DurableObjectStorageStandIn } from './_durable-object-storage.ts'
import { captureLogger } from './_logger.ts'
import { expectOwnTasks, type OwnedTasks, ownedTask, status, submitted } from './_owned-tasks.ts'

// The Durable Object store keeps each task's owner (the `Principal.id` of the caller that created it) in storage:
// each caller sees only its own tasks through get and list, after the object starts again too, and a task stored
// before owners were kept reads back unowned.

/** The object started again on its storage, as the Worker does: a new store, restored before it serves. */
async function restarted(storage: DurableObjectStorageStandIn, logger = captureLogger()) {
  const store = createDurableObjectStore(storage, { logger })
  await store.restore()
  return store
}

/** A task's stored value as the store writes it: its JSON in one piece, and the header that counts the pieces. */
function storedTask(id: string, snapshot: unknown): Record<string, unknown> {
  return { [`task:${id}:000000`]: JSON.stringify(snapshot), [`task:${id}`]: { pieces: 1 } }
}

describe('the Durable Object store keeps each task with its owner', () => {
  it('answers get and list with the caller’s own tasks only, before and after the object starts again; an unowned task is nobody’s', async () => {
    const storage = new DurableObjectStorageStandIn()
    const store = await restarted(storage)
    const tasks: OwnedTasks = {
      alice: [await ownedTask(store, 'a-1', 'alice', 1), await ownedTask(store, 'a-2', 'alice', 2, 'input-required')],
      bob: [await ownedTask(store, 'b-1', 'bob', 3)],
      unowned: [await ownedTask(store, 'u-1', undefined, 4)],
    }
    await expectOwnTasks(store, tasks)
    // One short field in what is stored, none for an unowned task.
    const stored = await storage.list<string>({ prefix: 'task:' })
    expect(JSON.parse(stored.get('task:a-1:000000')!).owner).toBe('alice')
    expect(stored.get('task:u-1:000000')).not.toContain('"owner"')
    store.close()

    const again = await restarted(storage)
    await expectOwnTasks(again, tasks)
    again.close()
  })

  it('keeps the owner of a task that was running when the object stopped: failed, still its owner’s, and after the next start too', async () => {
    const storage = new DurableObjectStorageStandIn()
    const store = await restarted(storage)
    const task = submitted('running', 0)
    await store.create(task, 'bob')
    store.append(task, status(task, 1, 'working', false))
    store.close()

    for (let start = 1; start <= 2; start++) {
      const logger = captureLogger()
      const again = await restarted(storage, logger)
      expect(again.get('running', 'bob')?.status.state, `start ${start}`).toBe('failed')
      expect(again.get('running', 'alice'), `start ${start}`).toBeUndefined()
      expect(again.list({ owner: 'bob', limit: 10 }).total, `start ${start}`).toBe(1)
      // The first start failed it and saved the failure; the second reads that back.
      expect(logger.text('warn').includes('when the object stopped'), `start ${start}`).toBe(start === 1)
      again.close()
    }
  })

  it('reads a task stored before owners were kept (no owner field) back unowned: nobody’s, and there to a read without an owner', async () => {
    const storage = new DurableObjectStorageStandIn()
    const task = submitted('old-1', 0)
    task.status = { state: 'completed', timestamp: task.status.timestamp }
    await storage.put(storedTask('old-1', { task, events: null, keptAfter: 0, settledAt: Date.now() }))
    const logger = captureLogger()
    const store = await restarted(storage, logger)
    expect(logger.text('warn')).toBe('')
    expect(store.get('old-1')?.status.state).toBe('completed')
    expect(store.get('old-1', 'alice')).toBeUndefined()
    expect(store.list({ owner: 'alice', limit: 10 })).toEqual({ tasks: [], total: 0 })
    expect(store.list({ limit: 10 }).tasks.map((kept) => kept.id)).toEqual(['old-1'])
    store.close()
  })

  it('deletes, with a warning, a stored task whose owner is not a string, rather than read it back unowned', async () => {
    const storage = new DurableObjectStorageStandIn()
    const task = submitted('odd-1', 0)
    task.status = { state: 'completed', timestamp: task.status.timestamp }
    await storage.put(storedTask('odd-1', { task, events: null, keptAfter: 0, settledAt: Date.now(), owner: 7 }))
    const logger = captureLogger()
    const store = await restarted(storage, logger)
    expect(store.get('odd-1')).toBeUndefined()
    expect(logger.text('warn')).toContain('Task store: task odd-1 could not be read back from storage; it is deleted')
    await expect.poll(() => storage.keys).toEqual([])
    store.close()
  })
})
