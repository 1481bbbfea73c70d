import { isTerminal } from '../../core/_lifecycle.js'
import type { TaskEvent } from '../../types.js'
import type { RedisConnection } from './_connection.js'
import type { RedisKeys } from './_keys.js'

/**
 * Follows a task that runs on any instance: its live events from the task's channel, after the ones its log
 * holds past `afterSeq`, each once and in order, until the task ends or the function returned is called.
 * `events` reads the log (the store's `events`). A live event whose number skips some is held while the log is
 * read for those. With `quietReadMs`, a follower that has heard nothing live for that long reads the log as well
 * (see `RedisConnection.hearsEveryReconnect`).
 */
export function followTask(
  connection: RedisConnection,
  keys: RedisKeys,
  events: (taskId: string, afterSeq: number) => Promise<TaskEvent[] | undefined>,
  taskId: string,
  afterSeq: number,
  onEvent: (event: TaskEvent) => void,
  quietReadMs?: number,
): () => void {
  let delivered = afterSeq
  let ended = false
  /** When the channel last brought an event, or the log was last read (`performance.now()`). */
  let heard = performance.now()
  // Live events wait here while the log is being read, so they cannot overtake the ones it holds.
  let waiting: TaskEvent[] | undefined = []
  const deliver = (event: TaskEvent) => {
    if (ended || event.seq <= delivered) return
    delivered = event.seq
    onEvent(event)
    // A turn that waits for input is not the end: a follow-up (sent to any instance) starts the next one.
    if (event.kind === 'status-update' && isTerminal(event.status.state)) stop()
  }
  const channel = connection.listen(keys.live(taskId), (message) => {
    heard = performance.now()
    const event = JSON.parse(message) as TaskEvent
    if (waiting) waiting.push(event)
    else if (event.seq > delivered + 1) {
      // Events came before it that this connection never heard (published while it was not subscribed): they are
      // read from the log first, and this one waits for them.
      waiting = [event]
      void catchUp()
    } else deliver(event)
  })
  // Reads the log after the subscription is confirmed (so nothing falls between the two), delivers it,
  // then what arrived live meanwhile; `delivered` drops what both carry. Run again each time the listening
  // connection is back (told before any live event on it is read, so from then on they wait), and retried while
  // Redis is unreachable. Catch-ups may overlap (the connection dropped again during one): only the last to end
  // lets the live events through, since an earlier one's read may miss what a later one reads.
  let attempt = 0
  let catchingUp = 0
  const catchUp = async (subscribed?: Promise<boolean>): Promise<void> => {
    waiting ??= []
    catchingUp++
    let read = false
    try {
      // Not subscribed again: the connection is being made again, and its catch-up comes with it.
      if (subscribed && !(await subscribed)) return
      await channel.ready
      for (const event of (await events(taskId, delivered)) ?? []) deliver(event)
      heard = performance.now()
      attempt = 0
      read = true
    } catch {
      if (!ended && !connection.closed) setTimeout(() => void catchUp(), Math.min(100 * ++attempt, 1000)).unref()
    } finally {
      catchingUp--
    }
    if (!read || catchingUp > 0) return
    const held = waiting ?? []
    waiting = undefined
    for (const event of held) deliver(event)
  }
  const stopResyncing = connection.onReconnect((subscribed) => void catchUp(subscribed))
  // Checked twice a period, so a quiet follower reads within one and a half. Not while a catch-up is under way or
  // waits to be retried (`waiting` is set until one has read the log): that one reads, and only that one.
  const quietReads =
    quietReadMs === undefined
      ? undefined
      : setInterval(() => {
          if (!waiting && !connection.closed && performance.now() - heard >= quietReadMs) void catchUp()
        }, quietReadMs / 2)
  quietReads?.unref()
  const stop = () => {
    ended = true
    channel.stop()
    stopResyncing()
    clearInterval(quietReads)
  }
  void catchUp()
  return stop
}
