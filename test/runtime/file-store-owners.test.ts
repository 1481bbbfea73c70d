import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createFileStore } from 'a2a-runtime/file-store'
import { afterEach, describe, expect, it } from 'vitest'
import { captureLogger } from './_logger.ts'
import { expectOwnTasks, type OwnedTasks, ownedTask, settle, status, submitted } from './_owned-tasks.ts'
import { recordsOf, segmentsOf, writeSegment } from './_task-log-files.ts'

// The file store keeps each task's owner (the `Principal.id` of the caller that created it) in its log: each caller
// sees only its own tasks through get and list, after a restart too, after the log was compacted, and a log written
// before owners were kept reads back unowned. The same after a SIGKILL: file-store.test.ts.

type FileTaskStore = ReturnType<typeof createFileStore>

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-file-owners-test-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function open(dir: string, options: Omit<Parameters<typeof createFileStore>[0], 'dir'> = {}): FileTaskStore {
  const store = createFileStore({ dir, ...options })
  cleanups.push(() => store.close())
  return store
}

/** Alice's two tasks and Bob's one in one context, and one created without an owner, each settled. */
async function twoOwners(store: FileTaskStore): Promise<OwnedTasks> {
  const tasks: OwnedTasks = {
    alice: [await ownedTask(store, 'a-1', 'alice', 1), await ownedTask(store, 'a-2', 'alice', 2, 'input-required')],
    bob: [await ownedTask(store, 'b-1', 'bob', 3)],
    unowned: [await ownedTask(store, 'u-1', undefined, 4)],
  }
  return tasks
}

describe('the file store keeps each task with its owner', () => {
  it('answers get and list with the caller’s own tasks only, before and after a restart; an unowned task is nobody’s', async () => {
    const dir = tempDir()
    const store = open(dir)
    const tasks = await twoOwners(store)
    await expectOwnTasks(store, tasks)
    await store.close()

    const reopened = open(dir)
    await expectOwnTasks(reopened, tasks)
    expect(reopened.get('a-2', 'alice')?.status.state).toBe('input-required')
  })

  it('writes the owner into the record that creates the task, one short field, none for an unowned task', async () => {
    const dir = tempDir()
    const store = open(dir)
    await twoOwners(store)
    const [created] = recordsOf(dir, 'a-1')
    expect(created).toMatchObject({ kind: 'snapshot', n: 1 })
    expect(JSON.parse(created!.text).snapshot.owner).toBe('alice')
    for (const record of recordsOf(dir, 'u-1')) expect(record.text).not.toContain('"owner"')
  })

  it('keeps the owner when compaction writes the task again: a task running while its first segment is compacted away is still its owner’s after a restart', async () => {
    const dir = tempDir()
    const options = { maxTasks: 16, segmentBytes: 16 * 1024 }
    const store = open(dir, options)
    const held = submitted('held', 0)
    await store.create(held, 'alice')
    store.append(held, status(held, 1, 'working', false))
    const firstSegment = segmentsOf(dir)[0]
    // Unowned tasks through a small store: its oldest segments are compacted, the running task moved out of them.
    for (let i = 0; i < 200 && segmentsOf(dir).includes(firstSegment!); i++)
      await ownedTask(store, `filler-${i}`, undefined, i + 1, 'completed', 'x'.repeat(400))
    expect(segmentsOf(dir)).not.toContain(firstSegment)
    await settle(store, held, 2)
    await store.close()

    const reopened = open(dir, options)
    expect(reopened.get('held', 'alice')?.status.state).toBe('completed')
    expect(reopened.get('held', 'bob')).toBeUndefined()
    expect(reopened.list({ owner: 'alice', limit: 10 }).tasks.map((task) => task.id)).toEqual(['held'])
    // The only snapshot of it left is the one compaction wrote.
    expect(recordsOf(dir, 'held').filter((record) => record.kind === 'snapshot')).toHaveLength(1)
  })

  it('keeps the restart within a smaller budget with owners in the log: the newest tasks, each still its owner’s, the others dropped with a warning', async () => {
    const dir = tempDir()
    const store = open(dir)
    const owners = ['alice', 'bob']
    for (let i = 0; i < 40; i++) await ownedTask(store, `t-${i}`, owners[i % 2], i * 10, 'completed', 'x'.repeat(2000))
    const perTask = store.bytes / 40
    await store.close()

    const logger = captureLogger()
    const maxBytes = Math.floor(perTask * 12)
    const reopened = open(dir, { maxTasks: 10, maxBytes, logger })
    expect(reopened.size).toBe(10)
    expect(reopened.bytes).toBeLessThanOrEqual(maxBytes)
    expect(logger.text('warn')).toMatch(/^Task store: 30 tasks of the log \(\d+ bytes\) did not fit/)
    for (const owner of owners) {
      const own = reopened.list({ owner, limit: 50 }).tasks.map((task) => task.id)
      const newest = Array.from({ length: 5 }, (_, k) => `t-${38 + owners.indexOf(owner) - 2 * k}`)
      expect(own, owner).toEqual(newest)
    }
  })

  it('reads a log written before owners were kept (no owner field) back unowned: nobody’s, and every task to a read without an owner', () => {
    const dir = tempDir()
    const task = submitted('old-1', 0)
    task.status = { state: 'completed', timestamp: task.status.timestamp }
    const snapshot = { task, events: null, keptAfter: 0, settledAt: Date.now() }
    writeSegment(dir, [{ t: 'old-1', n: 1, snapshot }])
    const logger = captureLogger()
    const store = open(dir, { logger })
    expect(logger.text('warn')).toBe('')
    expect(store.get('old-1')?.status.state).toBe('completed')
    expect(store.get('old-1', 'alice')).toBeUndefined()
    expect(store.list({ owner: 'alice', limit: 10 })).toEqual({ tasks: [], total: 0 })
    expect(store.list({ limit: 10 }).tasks.map((task) => task.id)).toEqual(['old-1'])
  })

  it('reads a snapshot whose owner is not a string as damaged, not as an unowned task', () => {
    const dir = tempDir()
    const task = submitted('odd-1', 0)
    task.status = { state: 'completed', timestamp: task.status.timestamp }
    const snapshot = { task, events: null, keptAfter: 0, settledAt: Date.now(), owner: { id: 'alice' } }
    const whole = submitted('whole-1', 1)
    // A whole record after it: the damage is not a crash's cut tail, which the store passes over quietly.
    writeSegment(dir, [
      { t: 'odd-1', n: 1, snapshot },
      { t: 'whole-1', n: 1, snapshot: { ...snapshot, task: whole, owner: 'bob' } },
    ])
    const logger = captureLogger()
    const store = open(dir, { logger })
    expect(store.get('odd-1')).toBeUndefined()
    expect(store.get('whole-1', 'bob')?.id).toBe('whole-1')
    expect(logger.text('warn')).toMatch(/is damaged at line 2 \(a record of task odd-1\)/)
  })
})
