import { type Outgoing, sendParams } from './dialects'
import { type Artifact, type Dialect, type Part, textOf, type Update } from './model'
import { call, stream, type WireEvent } from './rpc'
import { card, contextId, type Exchange, exchanges, type Timeline, timelines } from './state'

/** Raw text all timelines may hold together; the oldest task's timeline goes first past it. */
const MAX_TIMELINE_CHARS = 8 * 1024 * 1024

let nextKey = 1

/** A message id; randomUUID exists only on secure pages, and a dev server may be reached by a listed host name. */
const messageId = (): string =>
  crypto.randomUUID?.() ?? Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('')
const controllers = new Map<number, AbortController>()

function patch(key: number, change: (exchange: Exchange) => Exchange): void {
  exchanges.update((list) => list.map((exchange) => (exchange.key === key ? change(exchange) : exchange)))
}

const current = (key: number) => exchanges.value.find((exchange) => exchange.key === key)!

/** Appends a chunk's parts to an artifact: consecutive texts join, so Markdown renders whole. */
function appendParts(parts: Part[], more: Part[]): Part[] {
  const out = [...parts]
  for (const part of more) {
    const last = out[out.length - 1]
    if (part.kind === 'text' && last?.kind === 'text') out[out.length - 1] = { kind: 'text', text: last.text + part.text }
    else out.push(part)
  }
  return out
}

function withArtifact(artifacts: Artifact[], artifact: Artifact, append: boolean): Artifact[] {
  const at = artifacts.findIndex((known) => known.artifactId === artifact.artifactId)
  if (at < 0) return [...artifacts, artifact]
  const next = [...artifacts]
  next[at] = append ? { ...artifacts[at]!, parts: appendParts(artifacts[at]!.parts, artifact.parts) } : artifact
  return next
}

const summaryOfParts = (parts: Part[]) => textOf(parts) || (parts[0]?.kind === 'data' ? JSON.stringify(parts[0].data).slice(0, 200) : '')

/** What an update does to the exchange it answers. */
function applied(exchange: Exchange, update: Update): Exchange {
  switch (update.kind) {
    case 'status': {
      const next: Exchange = { ...exchange, taskId: update.taskId || exchange.taskId, contextId: update.contextId || exchange.contextId, state: update.state }
      const said = update.message ? summaryOfParts(update.message.parts) : ''
      if (update.state === 'working' && said) next.progress = [...exchange.progress, said]
      if (update.state === 'input-required' || update.state === 'auth-required') next.question = said || 'The agent needs more input.'
      else if (update.message && (update.state === 'failed' || update.state === 'rejected')) next.error = said
      else if (update.message && update.state !== 'working') next.reply = update.message
      return next
    }
    case 'artifact':
      return { ...exchange, taskId: update.taskId || exchange.taskId, artifacts: withArtifact(exchange.artifacts, update.artifact, update.append) }
    case 'task': {
      const { task } = update
      const next: Exchange = { ...exchange, taskId: task.id, contextId: task.contextId, state: task.state, artifacts: task.artifacts }
      const said = task.statusMessage ? summaryOfParts(task.statusMessage.parts) : ''
      if (task.state === 'input-required') next.question = said || 'The agent needs more input.'
      else if (task.state === 'failed' || task.state === 'rejected') next.error = said || `The task ${task.state}`
      else if (task.statusMessage && task.state !== 'working') next.reply = task.statusMessage
      return next
    }
    case 'message':
      return { ...exchange, reply: update.message, contextId: update.message.contextId ?? exchange.contextId, state: 'replied' }
    case 'error':
      return { ...exchange, error: `${update.code ? `${update.code}: ` : ''}${update.message}` }
  }
}

function describeUpdate(update: Update): string {
  switch (update.kind) {
    case 'status':
      return `state → ${update.state}${update.message ? `: ${summaryOfParts(update.message.parts).slice(0, 120)}` : ''}${update.final ? ' (final)' : ''}`
    case 'artifact':
      return `artifact ${update.artifact.name ?? update.artifact.artifactId.slice(0, 8)}${update.append ? ' chunk' : ''}${update.lastChunk ? ' (last chunk)' : ''}: ${JSON.stringify(summaryOfParts(update.artifact.parts).slice(0, 120))}`
    case 'task':
      return `task ${update.task.id.slice(0, 8)} ${update.task.state}`
    case 'message':
      return `message: ${summaryOfParts(update.message.parts).slice(0, 120)}`
    case 'error':
      return `error ${update.code}: ${update.message}`
  }
}

/** Records a wire event on the task's timeline (kept on the side until the task's id is known). */
function recorder(key: number, dialect: Dialect) {
  const started = performance.now()
  const pending: WireEvent[] = []
  const record = (taskId: string, event: WireEvent) => {
    const entry = { t: 0, direction: event.direction, raw: event.raw, summary: event.updates.map(describeUpdate) }
    timelines.update((map) => {
      const next = new Map(map)
      const known = next.get(taskId)
      const timeline: Timeline = known ? { ...known, entries: [...known.entries] } : { taskId, dialect, t0: started, entries: [], chars: 0 }
      timeline.entries.push({ ...entry, t: started + event.t - timeline.t0 })
      timeline.chars += event.raw.length
      next.delete(taskId)
      next.set(taskId, timeline)
      let total = 0
      for (const kept of next.values()) total += kept.chars
      for (const [id, kept] of next) {
        if (total <= MAX_TIMELINE_CHARS || id === taskId) break
        total -= kept.chars
        next.delete(id)
      }
      return next
    })
  }
  return (event: WireEvent) => {
    let exchange = current(key)
    for (const update of event.updates) exchange = applied(exchange, update)
    patch(key, () => exchange)
    if (!exchange.taskId) {
      pending.push(event)
      return
    }
    for (const earlier of pending.splice(0)) record(exchange.taskId, earlier)
    record(exchange.taskId, event)
  }
}

const streams = () => (card.value?.capabilities as { streaming?: boolean } | undefined)?.streaming === true

/** Sends a message (streamed when the card allows) and follows its answer. */
export async function send(dialect: Dialect, outgoing: Outgoing): Promise<void> {
  const key = nextKey++
  const exchange: Exchange = { key, dialect, sent: outgoing.parts, state: 'sending', progress: [], artifacts: [], running: true }
  if (outgoing.skillId) exchange.skillId = outgoing.skillId
  if (outgoing.taskId) exchange.taskId = outgoing.taskId
  if (outgoing.contextId) exchange.contextId = outgoing.contextId
  // A follow-up answers the exchange that asked.
  if (outgoing.taskId) exchanges.update((list) => list.map((known) => (known.taskId === outgoing.taskId ? { ...known, answered: true } : known)))
  exchanges.update((list) => [...list, exchange])
  const onWire = recorder(key, dialect)
  const params = sendParams(dialect, outgoing, messageId())
  const controller = new AbortController()
  controllers.set(key, controller)
  try {
    if (streams()) await stream(dialect, params, onWire, controller.signal)
    else {
      const updates = await call(dialect, 'send', params, onWire)
      if (!updates.length) onWire({ t: 0, direction: 'response', raw: '', updates: [{ kind: 'error', code: 0, message: 'The answer was not understood' }] })
    }
  } finally {
    controllers.delete(key)
    patch(key, (known) => ({ ...known, running: false }))
    const done = current(key)
    if (done.contextId) contextId.set(done.contextId)
  }
}

/** Asks the agent to cancel the exchange's task; the stream (or the answer) reports the canceled state. */
export async function cancel(key: number): Promise<void> {
  const exchange = current(key)
  if (!exchange.taskId) return
  // The answer (the canceled task) updates the exchange; a stream then brings the canceled status too.
  await call(exchange.dialect, 'cancel', { id: exchange.taskId }, recorder(key, exchange.dialect))
}

/** A new conversation: the next message starts a new context. */
export function newContext(): void {
  // The page stops reading the old streams; their tasks run on (the task list still shows them).
  for (const controller of controllers.values()) controller.abort()
  contextId.set(undefined)
  exchanges.set([])
}
