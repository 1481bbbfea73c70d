import type { Task } from 'a2a-runtime'
import type { TaskEvent } from 'a2a-runtime/store'
import { createDurableObjectStore } from 'a2a-runtime/workers'
import { describe, expect, it } from 'vitest'
import { DurableObjectStorageStandIn } from './_durable-object-storage.ts'

// What the Durable Object store writes when, beyond the TaskStore contract (store-contract.test.ts): the object
// may stop in the middle of any turn (a deploy, an eviction), and what it reads back must not go behind what
// clients were told.

const at = (ms: number) => new Date(Date.UTC(2026, 10, 26, 0, 0, 0, ms)).toISOString()
const message = (role: 'user' | 'agent', text: string, taskId: string) => ({
  kind: 'message' as const,
  role,
  messageId: `${role}-${text}`,
  parts: [{ kind: 'text' as const, text }],
  taskId,
  contextId: 'ctx',
})

/** A new task with the user's first message, as the engine creates it. */
const submitted = (id: string, text: string, ms = 0): Task => ({
  kind: 'task',
  id,
  contextId: 'ctx',
  status: { state: 'submitted', timestamp: at(ms) },
  history: [message('user', text, id)],
  artifacts: [],
})

function status(task: Task, seq: number, state: Task['status']['state'], final: boolean, text?: string): TaskEvent {
  task.status = { state, timestamp: at(seq), ...(text && { message: message('agent', text, task.id) }) }
  if (text) task.history.push(message('agent', text, task.id))
  return { kind: 'status-update', seq, taskId: task.id, contextId: task.contextId, status: task.status, final }
}

describe('the Durable Object store', () => {
  it('writes a task as a follow-up resumes it: stopped in the middle of that turn, it reads back failed with the follow-up in its history, numbered past the turn', async () => {
    const storage = new DurableObjectStorageStandIn()
    const store = createDurableObjectStore(storage)
    await store.restore()
    const task = submitted('t-1', 'Book a table', 0)
    await store.create(task)
    store.append(task, status(task, 1, 'working', false))
    await store.append(task, status(task, 2, 'input-required', true, 'For how many people?'))
    // The follow-up joins the history and the turn starts: the object stops before the turn settles.
    task.history.push(message('user', 'Four', task.id))
    await store.append(task, status(task, 3, 'working', false))
    store.close()

    const restarted = createDurableObjectStore(storage)
    await restarted.restore()
    const readBack = restarted.get('t-1')!
    expect(readBack.status.state).toBe('failed')
    expect(
      readBack.history
        .map((entry) => entry.parts[0])
        .filter((part) => part?.kind === 'text')
        .map((part) => (part as { text: string }).text),
    ).toEqual(['Book a table', 'For how many people?', 'Four'])
    // The failure is numbered past every event of the turn a client may have seen.
    expect(restarted.lastSeq('t-1')).toBeGreaterThan(3)
    restarted.close()
  })

  it('deletes the pieces a shorter rewrite no longer needs, and every key of a task retention lets go', async () => {
    const storage = new DurableObjectStorageStandIn()
    const store = createDurableObjectStore(storage, { maxTasks: 1 })
    await store.restore()
    const long = submitted('long', 'x'.repeat(200_000), 0)
    await store.create(long)
    const piecesOfLong = storage.keys.filter((key) => key.startsWith('task:long')).length
    expect(piecesOfLong).toBeGreaterThan(5)
    long.history = [message('user', 'short now', 'long')]
    await store.append(long, status(long, 1, 'completed', true))
    expect(storage.keys.filter((key) => key.startsWith('task:long'))).toHaveLength(2)
    // A second settled task past maxTasks: the first goes, from storage too.
    const next = submitted('next', 'hi', 5)
    await store.create(next)
    // Its settle lets the first go (retention), and its write is queued after that deletion.
    await store.append(next, status(next, 1, 'completed', true))
    expect(storage.keys.some((key) => key.startsWith('task:long'))).toBe(false)
    store.close()
  })
})
