import { dialectHeaders } from './dialects'
import type { Dialect } from './model'
import {
  card,
  connected,
  deliveries,
  type LoadState,
  load,
  type PushDelivery,
  pushUrl,
  refusedDeliveries,
  reloads,
  type TaskLine,
  tasks,
} from './state'

/** The most deliveries the page keeps (the server keeps its own, bounded in bytes). */
const MAX_DELIVERIES = 200

const CARD_PATHS: Record<Dialect, string> = {
  platform: '/.well-known/agent.json',
  'a2a-1.0': '/.well-known/agent-card.json',
  'a2a-0.3': '/.well-known/agent-card.json',
}

/** The card as served to a client of `dialect`. */
export async function fetchCard(dialect: Dialect): Promise<Record<string, unknown> | { error: string }> {
  try {
    const response = await fetch(CARD_PATHS[dialect], { headers: dialectHeaders(dialect), cache: 'no-store' })
    const json = await response.json()
    return response.ok ? json : { error: json?.error?.message ?? `HTTP ${response.status}` }
  } catch (error) {
    return { error: (error as Error).message }
  }
}

/** The platform card, which the chat reads for streaming, skills and push. */
async function refreshCard(): Promise<void> {
  const served = await fetchCard('platform')
  if (!('error' in served)) card.set(served)
}

function upsertTask(line: TaskLine): void {
  tasks.update((map) => new Map(map).set(line.id, line))
}

/**
 * The agent's tasks, newest first, from the dev store (no credentials needed, and there while the agent does not load).
 */
async function loadTasks(): Promise<void> {
  try {
    const { tasks: lines } = (await (await fetch('/__a2a/api/tasks', { cache: 'no-store' })).json()) as {
      tasks: TaskLine[]
    }
    tasks.update((map) => {
      const next = new Map(map)
      for (const line of lines) if (!next.has(line.id)) next.set(line.id, line)
      return next
    })
  } catch {
    // the dev server is gone: the channel reconnects and asks again
  }
}

async function loadDeliveries(): Promise<void> {
  try {
    const { deliveries: kept } = (await (await fetch('/__a2a/api/push', { cache: 'no-store' })).json()) as {
      deliveries: PushDelivery[]
    }
    deliveries.set(kept.slice(-MAX_DELIVERIES))
  } catch {
    // as above
  }
}

/** Listens to the dev server: loads and reloads, task states, push deliveries. EventSource reconnects by itself. */
export function connect(): void {
  const events = new EventSource('/__a2a/events')
  events.addEventListener('open', () => connected.set('open'))
  events.addEventListener('error', () => connected.set('lost'))
  events.addEventListener('hello', (event) => {
    const hello = JSON.parse((event as MessageEvent).data) as { load?: LoadState; pushUrl: string }
    load.set(hello.load)
    pushUrl.set(hello.pushUrl)
    void refreshCard()
    void loadTasks()
    void loadDeliveries()
  })
  events.addEventListener('load', (event) => {
    const state = JSON.parse((event as MessageEvent).data) as LoadState
    const isReload = state.files.length > 0
    load.set(state)
    if (isReload) reloads.update((n) => n + 1)
    if (!state.failure) void refreshCard()
  })
  events.addEventListener('push-refused', () => refusedDeliveries.update((n) => n + 1))
  events.addEventListener('task', (event) => upsertTask(JSON.parse((event as MessageEvent).data) as TaskLine))
  events.addEventListener('push', (event) => {
    const delivery = JSON.parse((event as MessageEvent).data) as PushDelivery
    deliveries.update((list) => [...list.slice(-(MAX_DELIVERIES - 1)), delivery])
  })
}
