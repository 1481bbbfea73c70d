import { dialectHeaders } from './dialects'
import type { Dialect } from './model'
import { card, connected, deliveries, type LoadState, load, type PushDelivery, pushUrl, reloads, type TaskLine, tasks } from './state'

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

/** The tasks the agent has, newest first (v1.0's ListTasks: the one dialect that lists). */
async function loadTasks(): Promise<void> {
  try {
    const response = await fetch('/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...dialectHeaders('a2a-1.0') },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'inspector-list', method: 'ListTasks', params: { pageSize: 100, historyLength: 1 } }),
    })
    const json = await response.json()
    for (const task of json.result?.tasks ?? []) {
      const text = task.history?.[0]?.parts?.find((part: { text?: string }) => typeof part.text === 'string')?.text ?? ''
      upsertTask({
        id: task.id,
        contextId: task.contextId,
        state: String(task.status?.state ?? '')
          .replace(/^TASK_STATE_/, '')
          .toLowerCase()
          .replace(/_/g, '-'),
        at: task.status?.timestamp ?? '',
        title: text.slice(0, 80),
      })
    }
  } catch {
    // the agent does not load right now: the live channel brings tasks as they change
  }
}

/** Listens to the dev server: loads and reloads, task states, push deliveries. EventSource reconnects by itself. */
export function connect(): void {
  const events = new EventSource('/__a2a/events')
  events.addEventListener('open', () => connected.set(true))
  events.addEventListener('error', () => connected.set(false))
  events.addEventListener('hello', (event) => {
    const hello = JSON.parse((event as MessageEvent).data) as { load?: LoadState; pushUrl: string; deliveries: PushDelivery[] }
    load.set(hello.load)
    pushUrl.set(hello.pushUrl)
    deliveries.set(hello.deliveries)
    void refreshCard()
    void loadTasks()
  })
  events.addEventListener('load', (event) => {
    const state = JSON.parse((event as MessageEvent).data) as LoadState
    const isReload = state.files.length > 0
    load.set(state)
    if (isReload) reloads.update((n) => n + 1)
    if (!state.failure) void refreshCard()
  })
  events.addEventListener('task', (event) => upsertTask(JSON.parse((event as MessageEvent).data) as TaskLine))
  events.addEventListener('push', (event) => {
    const delivery = JSON.parse((event as MessageEvent).data) as PushDelivery
    deliveries.update((list) => [...list.slice(-(MAX_DELIVERIES - 1)), delivery])
  })
}
