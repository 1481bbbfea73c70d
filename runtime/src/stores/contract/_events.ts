import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { assertEventsKept, assertSnapshot } from './_same.js'
import { ScriptedTask, StatusClock, text } from './_scripted-task.js'
import type { SessionCheck, StoreSession } from './_session.js'

/** Checks of the event log a client resumes a broken stream from, and of the numbers that go with it. */
export function eventChecks(): SessionCheck[] {
  return [
    {
      name: 'events gives the events in order, and exactly those after afterSeq (or undefined when some were dropped), while running and once ended',
      check: eventsInOrder,
    },
    { name: 'events, lastSeq and snapshot give undefined for a task never created', check: unknownTask },
    {
      name: 'lastSeq and snapshot, when implemented, give the number of the last event, snapshot with the task as it stands',
      check: lastNumbers,
    },
  ]
}

async function eventsInOrder({ store }: StoreSession): Promise<void> {
  const run = await ScriptedTask.start(store, new StatusClock())
  run.working()
  const answer = run.artifact({ parts: [text('one')], lastChunk: false })
  run.artifact({ artifactId: answer, parts: [text('two')], append: true, lastChunk: false })
  run.working({ message: 'still at it' })
  run.artifact({ artifactId: answer, parts: [text('three')], append: true })
  await run.flush()
  await assertEventsKept(store, run.id, run.events, false)
  await run.complete('done')
  await assertEventsKept(store, run.id, run.events, true)
  assert.deepEqual(
    run.events.map((event) => event.seq),
    [1, 2, 3, 4, 5, 6],
  )
}

async function unknownTask({ store }: StoreSession): Promise<void> {
  // Another task exists, so a store cannot pass by being empty.
  await ScriptedTask.start(store, new StatusClock())
  const unknown = randomUUID()
  assert.equal(await store.events(unknown), undefined, 'events of a task never created')
  assert.equal(await store.events(unknown, 0), undefined, 'events after 0 of a task never created')
  if (store.lastSeq) assert.equal(await store.lastSeq(unknown), undefined, 'lastSeq of a task never created')
  if (store.snapshot) assert.equal(await store.snapshot(unknown), undefined, 'snapshot of a task never created')
}

async function lastNumbers({ store }: StoreSession): Promise<void> {
  const run = await ScriptedTask.start(store, new StatusClock())
  if (store.lastSeq) {
    const none = await store.lastSeq(run.id)
    assert.ok(none === 0 || none === undefined, `lastSeq of a task with no event yet is 0 or undefined (got ${none})`)
  }
  run.working()
  run.artifact({ parts: [text('partial')], lastChunk: false })
  await run.flush()
  if (store.lastSeq) assert.equal(await store.lastSeq(run.id), 2, 'lastSeq while running')
  await assertSnapshot(store, run.task, 2)
  await run.inputRequired('More?')
  if (store.lastSeq) assert.equal(await store.lastSeq(run.id), 3, 'lastSeq while waiting for input')
  await assertSnapshot(store, run.task, 3)
}
