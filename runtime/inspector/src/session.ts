import { type Outgoing, sendParams } from './dialects'
import { fetchEventTimes, replayedAt } from './event-times'
import { applied } from './exchange'
import { type Dialect, TERMINAL_STATES, type Update } from './model'
import { call, now, stream, type WireEvent } from './rpc'
import { announcement, card, contextId, type Exchange, exchanges } from './state'
import { record } from './timeline'

/** How often a task sent without streaming is read again until it settles. */
const POLL_MS = 500

let nextKey = 1
/** Bumped by "New context": a send begun before it must not bring its context back. */
let generation = 0
const controllers = new Map<number, AbortController>()

/** A message id; randomUUID exists only on secure pages, and a dev server may be reached by a listed host name. */
const messageId = (): string =>
  crypto.randomUUID?.() ??
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('')

/** The exchange, while the page still shows it ("New context" clears them). */
const current = (key: number): Exchange | undefined => exchanges.value.find((exchange) => exchange.key === key)

function patch(key: number, change: (exchange: Exchange) => Exchange): void {
  if (current(key))
    exchanges.update((list) => list.map((exchange) => (exchange.key === key ? change(exchange) : exchange)))
}

const settled = (state: string) =>
  TERMINAL_STATES.has(state) || state === 'input-required' || state === 'auth-required' || state === 'replied'

function announce(before: Exchange, after: Exchange): void {
  if (before.state === after.state && before.error === after.error) return
  if (after.error) announcement.set(`Error: ${after.error}`)
  else if (after.state === 'input-required') announcement.set(`The agent asks: ${after.question}`)
  else if (settled(after.state)) announcement.set(`Task ${after.state}`)
}

/**
 * Applies each wire event to the exchange and records it on its task's timeline (held back until the task's id
 * is known). The context is taken as soon as an update names it, so a message sent while an answer still streams
 * continues the same context.
 */
function follower(key: number, dialect: Dialect, sentIn: number) {
  const pending: WireEvent[] = []
  return (event: WireEvent) => {
    const before = current(key)
    if (!before) return
    let exchange = before
    for (const update of event.updates) exchange = applied(exchange, update)
    patch(key, () => exchange)
    announce(before, exchange)
    if (exchange.contextId && generation === sentIn && contextId.value !== exchange.contextId)
      contextId.set(exchange.contextId)
    if (!exchange.taskId) {
      pending.push(event)
      return
    }
    for (const earlier of pending.splice(0)) record(exchange.taskId, dialect, earlier, earlier.at)
    record(exchange.taskId, dialect, event, event.at)
  }
}

const streams = () => (card.value?.capabilities as { streaming?: boolean } | undefined)?.streaming === true
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Reads the task until it settles: after a stream that ended early (broken, or closed before a final status), and
 * for a send without streaming, which answers at once (`blocking: false`) so the task can be followed and canceled.
 */
async function followByReading(
  key: number,
  dialect: Dialect,
  onWire: (event: WireEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  for (
    let exchange = current(key);
    exchange?.taskId && !settled(exchange.state) && !signal.aborted;
    exchange = current(key)
  ) {
    await call(dialect, 'get', { id: exchange.taskId, historyLength: 0 }, onWire)
    const now = current(key)
    if (!now || settled(now.state) || now.error) return
    await delay(POLL_MS)
  }
}

/**
 * Sends a message (streamed when the card allows) and follows its answer. Resolves with whether the agent took
 * it (its first answer was no error), once that is known: the composer keeps what was typed until then.
 */
export function send(dialect: Dialect, outgoing: Outgoing): Promise<boolean> {
  const key = nextKey++
  const exchange: Exchange = {
    key,
    dialect,
    sent: outgoing.parts,
    state: 'sending',
    progress: [],
    artifacts: [],
    running: true,
  }
  if (outgoing.skillId) exchange.skillId = outgoing.skillId
  if (outgoing.taskId) {
    exchange.taskId = outgoing.taskId
    exchange.followUp = true
  }
  if (outgoing.contextId) exchange.contextId = outgoing.contextId
  exchanges.update((list) => [...list, exchange])
  let accepted: (taken: boolean) => void = () => {}
  const taken = new Promise<boolean>((resolve) => (accepted = resolve))
  const apply = follower(key, dialect, generation)
  const onWire = (event: WireEvent) => {
    apply(event)
    if (event.direction !== 'request') accepted(!event.updates.some((update: Update) => update.kind === 'error'))
  }
  const controller = new AbortController()
  controllers.set(key, controller)
  const streamed = streams()
  const params = sendParams(dialect, outgoing, messageId(), { blocking: streamed })
  void (async () => {
    try {
      if (streamed) await stream(dialect, params, onWire, controller.signal)
      else {
        const updates = await call(dialect, 'send', params, onWire)
        if (!updates.length)
          onWire({
            at: now(),
            direction: 'response',
            raw: '',
            updates: [{ kind: 'error', code: 0, message: 'The answer was not understood' }],
          })
      }
      await followByReading(key, dialect, onWire, controller.signal)
    } finally {
      accepted(false)
      controllers.delete(key)
      patch(key, (known) => ({ ...known, running: false }))
    }
  })()
  return taken.then((ok) => {
    // The question is answered once the agent has taken the answer; a refused one leaves the question open.
    if (ok && outgoing.taskId) {
      exchanges.update((list) =>
        list.map((known) =>
          known.taskId === outgoing.taskId && known.key !== key ? { ...known, answered: true } : known,
        ),
      )
    }
    return ok
  })
}

/** Asks the agent to cancel the exchange's task; the answer (and the stream, if any) reports the canceled state. */
export async function cancel(key: number): Promise<void> {
  const exchange = current(key)
  if (!exchange?.taskId) return
  await call(exchange.dialect, 'cancel', { id: exchange.taskId }, follower(key, exchange.dialect, generation))
}

/**
 * The events the agent keeps of a task the page did not send (another client's), on its timeline: a resubscription
 * from the first event (`Last-Event-ID: 0`) in the chosen dialect, followed while the task runs. They arrive all at
 * once: each is placed at the time it happened (`replayedAt`), its offset counted from the task's creation.
 */
export async function replay(taskId: string, dialect: Dialect): Promise<void> {
  const known = await fetchEventTimes(taskId)
  const replayOf = known?.createdAt === undefined ? {} : { createdAt: known.createdAt }
  const controller = new AbortController()
  await stream(
    dialect,
    { id: taskId },
    (event) => record(taskId, dialect, event, replayedAt(event, known), replayOf),
    controller.signal,
    {
      operation: 'subscribe',
      lastEventId: 0,
    },
  )
}

/** A new conversation: the next message starts a new context. */
export function newContext(): void {
  generation++
  // The page stops reading the old streams; their tasks run on (the task list still shows them).
  for (const controller of controllers.values()) controller.abort()
  contextId.set(undefined)
  exchanges.set([])
}
