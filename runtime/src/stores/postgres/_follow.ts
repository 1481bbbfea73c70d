import { isTerminal } from '../../core/_lifecycle.js'
import type { TaskEvent } from '../../types.js'
import type { PgListener } from './_listener.js'
import { noop } from './_pg.js'

/**
 * Most bytes of an event sent along with its notification. PostgreSQL refuses a payload of 8000 bytes or more;
 * past this a notification says only which event was written, and followers read it from the events table.
 */
const INLINE_EVENT_BYTES = 7000

/**
 * The payload of the notification of an event written: `<seq>:<id length>:<task id>` then the event's JSON when it
 * is small enough (see INLINE_EVENT_BYTES). Parsed by every instance for every event: only the task id is read
 * before it is known that someone here follows the task.
 */
export function notification(taskId: string, seq: number, eventJson: string): string {
  const head = `${seq}:${taskId.length}:${taskId}`
  return Buffer.byteLength(eventJson) <= INLINE_EVENT_BYTES ? head + eventJson : head
}

interface Heard {
  seq: number
  /** Absent when it was too large to send along. */
  event?: TaskEvent
}

type Listener = (heard: Heard) => void

/**
 * A task's events after a number, as its table holds them: `keptAfter` says the events up to it may be missing (one
 * could not be written, and a later one was written whole); undefined: the task is gone.
 */
export interface LogRead {
  keptAfter: number
  events: TaskEvent[]
}

/**
 * The followers of tasks on this instance, fed by the notifications of the schema's events channel: each follows
 * a task that runs on any instance, its live events after the ones its table holds past `afterSeq`, each once and
 * in order, until the task ends or the function returned is called. `events` reads the table (the store's `events`).
 */
export class Followers {
  readonly #listener: PgListener
  readonly #events: (taskId: string, afterSeq: number) => Promise<LogRead | undefined>
  readonly #byTask = new Map<string, Set<Listener>>()
  readonly #closed: () => boolean
  readonly #register: (taskId: string, followers: 1 | -1) => Promise<unknown>

  /**
   * `register` counts a follower in or out of the task's row: its events are notified only while it has some (see
   * a2a_append). A follower is counted in before it reads the table, so no event falls between the two.
   */
  constructor(
    listener: PgListener,
    events: (taskId: string, afterSeq: number) => Promise<LogRead | undefined>,
    closed: () => boolean,
    register: (taskId: string, followers: 1 | -1) => Promise<unknown>,
  ) {
    this.#listener = listener
    this.#events = events
    this.#closed = closed
    this.#register = register
  }

  /** A notification of the events channel. */
  heard(payload: string): void {
    const first = payload.indexOf(':')
    const second = payload.indexOf(':', first + 1)
    const length = Number(payload.slice(first + 1, second))
    const taskId = payload.slice(second + 1, second + 1 + length)
    const listeners = this.#byTask.get(taskId)
    if (!listeners) return
    const json = payload.slice(second + 1 + length)
    const heard: Heard = { seq: Number(payload.slice(0, first)), ...(json && { event: JSON.parse(json) as TaskEvent }) }
    for (const listener of listeners) listener(heard)
  }

  follow(taskId: string, afterSeq: number, onEvent: (event: TaskEvent) => void): () => void {
    let delivered = afterSeq
    let ended = false
    // Live events wait here while the table is being read, so they cannot overtake the ones it holds.
    let waiting: Heard[] | undefined = []
    let reading = false
    let readAgain = false
    const deliver = (event: TaskEvent) => {
      if (ended || event.seq <= delivered) return
      delivered = event.seq
      onEvent(event)
      // A turn that waits for input is not the end: a follow-up (sent to any instance) starts the next one.
      if (event.kind === 'status-update' && isTerminal(event.status.state)) stop()
    }
    const live: Listener = (heard) => {
      if (waiting) return void waiting.push(heard)
      if (heard.seq <= delivered) return
      // The next event, sent along: delivered now. One too large to send along, or after a gap (a notification
      // lost while the connection was down): read from the table.
      if (heard.event && heard.seq === delivered + 1) deliver(heard.event)
      else void catchUp()
    }
    let attempt = 0
    let registered = false
    // Reads the table once the listener listens (so nothing falls between the two), delivers it, then what arrived
    // live meanwhile; `delivered` drops what both carry. Run again after a reconnect, and retried while the
    // database is unreachable.
    const catchUp = async (): Promise<void> => {
      if (reading) {
        readAgain = true
        return
      }
      reading = true
      waiting ??= []
      try {
        await this.#listener.ready
        if (!registered) {
          await this.#register(taskId, 1)
          registered = true
          // Stopped while it was being counted in: counted out again.
          if (ended) void this.#register(taskId, -1).catch(noop)
        }
        const log = await this.#events(taskId, delivered)
        attempt = 0
        // The events up to keptAfter will never be in the table (one could not be written, a later one was written
        // whole): what follows it is all there is to deliver, else the follower would wait for the next number forever.
        if (log) delivered = Math.max(delivered, log.keptAfter)
        for (const event of log?.events ?? []) deliver(event)
      } catch {
        reading = false
        if (!ended && !this.#closed()) setTimeout(() => void catchUp(), Math.min(100 * ++attempt, 1000)).unref()
        return
      }
      reading = false
      const held = waiting ?? []
      waiting = undefined
      let gap = false
      for (const heard of held) {
        if (heard.seq <= delivered) continue
        if (heard.event && heard.seq === delivered + 1) deliver(heard.event)
        else gap = true
      }
      if ((gap || readAgain) && !ended) {
        readAgain = false
        void catchUp()
      }
    }
    const listeners = this.#byTask.get(taskId) ?? new Set<Listener>()
    this.#byTask.set(taskId, listeners)
    listeners.add(live)
    const stopResyncing = this.#listener.onReconnect(() => void catchUp())
    const stop = () => {
      if (ended) return
      ended = true
      if (registered) void this.#register(taskId, -1).catch(noop)
      stopResyncing()
      const current = this.#byTask.get(taskId)
      current?.delete(live)
      if (current?.size === 0) this.#byTask.delete(taskId)
    }
    void catchUp()
    return stop
  }
}
