import { authHeaders } from './auth-headers'
import { AGENT_BASE } from './base'
import { dialectHeaders } from './dialects'
import type { Dialect } from './model'
import { restAddressIn } from './rest'
import { fieldsOf, readFrames } from './sse'
import {
  agents,
  card,
  connected,
  credential,
  deliveries,
  dialect,
  type LoadState,
  load,
  type PushDelivery,
  pushUrl,
  refusedDeliveries,
  reloads,
  restAddress,
  selectedTask,
  type TaskLine,
  type Tracing,
  taskFeed,
  tasks,
  tracing,
} from './state'

/** The most deliveries the page keeps (the server keeps its own, bounded in bytes). */
const MAX_DELIVERIES = 200
/** A lost channel is opened again at most this often. */
const RETRY_MS = 1000
/** Typing a credential changes it at each key: the channel is opened again once it has stayed the same this long. */
const CREDENTIAL_SETTLE_MS = 300

const CARD_PATHS: Record<Dialect, string> = {
  platform: `${AGENT_BASE}.well-known/agent.json`,
  'a2a-1.0': `${AGENT_BASE}.well-known/agent-card.json`,
  'a2a-1.0-rest': `${AGENT_BASE}.well-known/agent-card.json`,
  'a2a-0.3': `${AGENT_BASE}.well-known/agent-card.json`,
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

/**
 * The platform card, which the chat reads for streaming, skills and push, and the v1.0 card's REST interface (an
 * `HTTP+JSON` entry of its `supportedInterfaces`), which decides whether the page offers REST and where it sends.
 */
async function refreshCard(): Promise<void> {
  const [served, v1] = await Promise.all([fetchCard('platform'), fetchCard('a2a-1.0')])
  if (!('error' in served)) card.set(served)
  if ('error' in v1) return
  const address = restAddressIn(v1)
  restAddress.set(address)
  // REST chosen earlier, of an agent that no longer lists it: the same v1.0 operations in JSON-RPC.
  if (address === undefined && dialect.value === 'a2a-1.0-rest') dialect.set('a2a-1.0')
}

/** The tasks the channel told of since its hello: newer than the list asked for then. */
const heardSinceHello = new Set<string>()

function upsertTask(line: TaskLine): void {
  heardSinceHello.add(line.id)
  tasks.update((map) => new Map(map).set(line.id, line))
}

/**
 * The agent's tasks, newest first, from the dev store (there while the agent does not load): every task, or when
 * the card declares authentication, those of the page's credential; a refused credential is said, not listed.
 */
async function loadTasks(): Promise<void> {
  const headers = authHeaders()
  const asked = JSON.stringify(headers)
  try {
    const response = await fetch(`${AGENT_BASE}__a2a/api/tasks`, { headers, cache: 'no-store' })
    const answer = (await response.json()) as { tasks: TaskLine[] } | { error?: string }
    // The credential changed meanwhile: this answer is another caller's.
    if (JSON.stringify(authHeaders()) !== asked) return
    if (!response.ok || !('tasks' in answer)) {
      const reason = ('error' in answer && answer.error) || 'no reason given'
      taskFeed.set({ refused: `${reason} (HTTP ${response.status})` })
      tasks.set(new Map())
      return
    }
    taskFeed.set({})
    // The list replaces what the page showed (a reload may have changed who the credential is), but a line heard
    // since is newer than the list's.
    tasks.update((map) => {
      const next = new Map(answer.tasks.map((line) => [line.id, line]))
      for (const id of heardSinceHello) {
        const line = map.get(id)
        if (line) next.set(id, line)
      }
      return next
    })
  } catch {
    // the dev server is gone: the channel reconnects and asks again
  }
}

async function loadDeliveries(): Promise<void> {
  try {
    const response = await fetch(`${AGENT_BASE}__a2a/api/push`, { headers: authHeaders(), cache: 'no-store' })
    const { deliveries: kept } = (await response.json()) as { deliveries: PushDelivery[] }
    deliveries.set(kept.slice(-MAX_DELIVERIES))
  } catch {
    // as above
  }
}

/** One event of the live channel. */
function heard(event: string, data: string): void {
  if (event === 'hello') {
    heardSinceHello.clear()
    const hello = JSON.parse(data) as {
      load?: LoadState
      pushUrl: string
      tracing?: Tracing
      agent?: string
      agents?: string[]
    }
    agents.set(hello.agent && hello.agents ? { current: hello.agent, names: hello.agents } : undefined)
    load.set(hello.load)
    pushUrl.set(hello.pushUrl)
    tracing.set(hello.tracing)
    void refreshCard()
    void loadTasks()
    void loadDeliveries()
  } else if (event === 'load') {
    const state = JSON.parse(data) as LoadState
    const isReload = state.files.length > 0
    load.set(state)
    if (isReload) reloads.update((n) => n + 1)
    if (!state.failure) void refreshCard()
  } else if (event === 'tracing') tracing.set((JSON.parse(data) as Tracing | null) ?? undefined)
  else if (event === 'agents') {
    const names = JSON.parse(data) as string[]
    agents.update((known) => known && { ...known, names })
  } else if (event === 'push-refused') refusedDeliveries.update((n) => n + 1)
  else if (event === 'task') upsertTask(JSON.parse(data) as TaskLine)
  else if (event === 'push') {
    const delivery = JSON.parse(data) as PushDelivery
    deliveries.update((list) => [...list.slice(-(MAX_DELIVERIES - 1)), delivery])
  }
}

/** The channel open now; aborted when the credential changes (a new one opens). */
let channel: AbortController | undefined
let lastOpened = 0

/**
 * The live channel as a fetch() stream rather than an EventSource, which cannot send headers: the task lines it
 * carries are those of the credential it is opened with. Opened again when it ends (the dev server stopped, or a
 * reload had its pages check their credential again), at most once per `RETRY_MS`.
 */
async function open(): Promise<void> {
  const controller = new AbortController()
  channel = controller
  lastOpened = Date.now()
  let ended = false
  try {
    const response = await fetch(`${AGENT_BASE}__a2a/events`, {
      headers: { accept: 'text/event-stream', ...authHeaders() },
      cache: 'no-store',
      signal: controller.signal,
    })
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`)
    connected.set('open')
    await readFrames(response.body, (frame) => {
      const { event, data } = fieldsOf(frame)
      if (data && channel === controller) heard(event, data)
    })
    ended = true
  } catch {
    // the dev server is gone, or this channel was replaced
  }
  if (channel !== controller) return
  // A stream the server ended is opened again at once (within the bound); a failed one says so while it retries.
  if (!ended) connected.set('lost')
  setTimeout(
    () => {
      if (channel === controller) void open()
    },
    Math.max(ended ? 0 : RETRY_MS, lastOpened + RETRY_MS - Date.now()),
  )
}

/**
 * Listens to the dev server: loads and reloads, task states, push deliveries. A new credential has the channel
 * open again with it, and the tasks of the former one leave the page at once.
 */
export function connect(): void {
  void open()
  let sent = JSON.stringify(authHeaders())
  let settle: ReturnType<typeof setTimeout> | undefined
  credential.subscribe(() => {
    const headers = JSON.stringify(authHeaders())
    if (headers === sent) return
    sent = headers
    channel?.abort()
    channel = undefined
    tasks.set(new Map())
    selectedTask.set(undefined)
    taskFeed.set({})
    // Deliveries carry their tasks' content: the new credential's are fetched when its channel opens.
    deliveries.set([])
    clearTimeout(settle)
    settle = setTimeout(() => void open(), CREDENTIAL_SETTLE_MS)
  })
}
