import assert from 'node:assert/strict'
import type { Task, TaskEvent } from '../../types.js'
import type { TaskStore } from '../task-store.js'

/**
 * Deep equality of what `actual` and `expected` say as JSON: a store may serialise (keys reordered, absent
 * fields left out), and only what a client could read counts. A failure says what was compared, then the diff.
 */
export function assertSameJson(actual: unknown, expected: unknown, what: string): void {
  try {
    assert.deepStrictEqual(asJson(actual), asJson(expected))
  } catch (error) {
    if (error instanceof Error) error.message = `${what}\n${error.message}`
    throw error
  }
}

/** The store's copy of the task equals the one the runtime holds. */
export function assertSameTask(actual: Task | undefined, expected: Task, what: string): asserts actual is Task {
  assert.ok(actual, `${what}: get(${JSON.stringify(expected.id)}) gave undefined`)
  assertSameJson(actual, expected, `${what}: the task read back differs from the task the runtime holds`)
}

/**
 * What the store answers for a task's events, against every event the runtime appended to it:
 * - `events(id)` (the events it keeps) is the newest of them, in order, ending with the last; `undefined` is
 *   allowed only once the task has ended (its log compacted into the task);
 * - `events(id, afterSeq)` is exactly the events after `afterSeq`, or `undefined` when some of them were dropped,
 *   and it can only be `undefined` when the events it keeps do not reach back that far;
 * - `lastSeq`, when implemented, is the number of the last event while the store has the log.
 */
export async function assertEventsKept(
  store: TaskStore,
  taskId: string,
  appended: TaskEvent[],
  ended: boolean,
): Promise<void> {
  const last = appended.at(-1)?.seq ?? 0
  const kept = await store.events(taskId)
  let firstKept = Number.POSITIVE_INFINITY
  if (kept === undefined) {
    assert.ok(
      ended,
      `events(${JSON.stringify(taskId)}) gave undefined for a task that has not ended (only an ended task's log may be compacted)`,
    )
  } else {
    assert.ok(
      kept.length > 0 || appended.length === 0,
      `events(${JSON.stringify(taskId)}) gave no events; it must keep at least the last (seq ${last})`,
    )
    assertSameJson(
      kept,
      appended.slice(appended.length - kept.length),
      `events(${JSON.stringify(taskId)}) is not the newest of the events appended, in order`,
    )
    firstKept = kept[0]?.seq ?? last + 1
  }
  for (let afterSeq = 0; afterSeq <= last; afterSeq++) {
    const after = await store.events(taskId, afterSeq)
    const what = `events(${JSON.stringify(taskId)}, ${afterSeq})`
    if (after === undefined) {
      assert.ok(
        afterSeq < firstKept - 1,
        `${what} gave undefined though events(id) keeps every event after ${afterSeq}`,
      )
      continue
    }
    assertSameJson(
      after,
      appended.filter((event) => event.seq > afterSeq),
      `${what} is not exactly the events after ${afterSeq}, in order`,
    )
  }
  if (store.lastSeq) {
    const lastSeq = await store.lastSeq(taskId)
    if (lastSeq === undefined && kept === undefined) return
    assert.equal(lastSeq, last, `lastSeq(${JSON.stringify(taskId)}) is not the number of the last event appended`)
  }
}

/** `snapshot`, when implemented, gives the task as the runtime holds it and the number of its last event. */
export async function assertSnapshot(store: TaskStore, expected: Task, lastSeq: number): Promise<void> {
  if (!store.snapshot) return
  const snapshot = await store.snapshot(expected.id)
  assert.ok(snapshot, `snapshot(${JSON.stringify(expected.id)}) gave undefined for a task the store has`)
  assertSameTask(snapshot.task, expected, 'snapshot')
  assert.equal(
    snapshot.seq,
    lastSeq,
    `snapshot(${JSON.stringify(expected.id)}).seq is not the number of the task's last event`,
  )
}

function asJson(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value))
}
