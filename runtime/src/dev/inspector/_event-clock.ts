import type { EventTimes } from './wire.js'

/** Event times all tasks may hold together (a number each); past it, the tasks least recently changed go first. */
const MAX_TIMES = 500_000

/**
 * When each task of the dev store was created and each of its events arrived, by the event's number (`seq`), so
 * the inspector can replay a task's timeline at the times it happened: the wire dates only status changes. Kept
 * beside the store and bounded in count; a task forgotten (or an event past the bound) has no time to give.
 */
export class EventClock {
  /** In the order of their latest change: the bound drops from the front. */
  readonly #tasks = new Map<string, EventTimes>()
  #count = 0

  created(taskId: string, at = Date.now()): void {
    this.#forget(taskId)
    this.#tasks.set(taskId, { createdAt: at, firstSeq: 1, at: [], lastSeq: 0 })
  }

  appended(taskId: string, seq: number, at = Date.now()): void {
    let times = this.#tasks.get(taskId)
    if (times) this.#tasks.delete(taskId)
    else times = { firstSeq: seq, at: [], lastSeq: seq - 1 }
    this.#tasks.set(taskId, times)
    times.lastSeq = Math.max(times.lastSeq, seq)
    // Only the next event in order gets a time: after a gap (past the bound) the rest stay unknown.
    if (seq !== times.firstSeq + times.at.length) return
    times.at.push(at)
    this.#count++
    for (const id of this.#tasks.keys()) {
      if (this.#count <= MAX_TIMES) return
      if (id !== taskId) this.#forget(id)
    }
    // This task alone holds the bound: its later events go unrecorded.
    times.at.pop()
    this.#count--
  }

  /** The task's times, or undefined when the clock never saw it or has forgotten it. */
  timesOf(taskId: string): EventTimes | undefined {
    return this.#tasks.get(taskId)
  }

  #forget(taskId: string): void {
    const times = this.#tasks.get(taskId)
    if (!times) return
    this.#count -= times.at.length
    this.#tasks.delete(taskId)
  }
}
