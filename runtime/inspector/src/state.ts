// What the dev server sends, typed once for both sides.
import type { EventTimes, LoadState, PushDelivery, TaskLine, TaskTrace, Tracing } from '../../src/dev/inspector/wire.js'
import { type Artifact, DIALECTS, type Dialect, type Message, type Part } from './model'
import { Store } from './store'

export type { EventTimes, LoadState, PushDelivery, TaskLine, TaskTrace, Tracing }

/** One message the page sent and what came back for it. */
export interface Exchange {
  key: number
  dialect: Dialect
  sent: Part[]
  skillId?: string
  taskId?: string
  contextId?: string
  state: string
  /** `working` updates' texts, as progress. */
  progress: string[]
  artifacts: Artifact[]
  /** The question of an `input-required` status. */
  question?: string
  /** A reply that is not a task (a Message), or a status message that came with the end. */
  reply?: Message
  error?: string
  running: boolean
  /** Answered already (a question answered, the next exchange continues the task). */
  answered?: boolean
  /** A message on a task that exists already (an answer to its question). */
  followUp?: boolean
}

export interface TimelineEntry {
  /** When it happened, in ms since the epoch; undefined when that is not known (the page says so). */
  at?: number
  /** The task's event number an SSE frame carried: its trace is looked up by it (`traceOf`). */
  seq?: number
  /** For an answer without an event number: the trace of the task's latest event when it arrived. */
  traceId?: string
  direction: 'request' | 'response' | 'frame'
  raw: string
  summary: string[]
}

export interface Timeline {
  taskId: string
  dialect: Dialect
  /**
   * Where offsets count from, in ms since the epoch: the page's first request of the task, or for a replay the
   * task's creation. Unknown for a replay of a task the dev server forgot: then its earliest known event.
   */
  t0?: number
  /** Read back from the agent ("Replay its events"), not followed as it ran. */
  replayed: boolean
  entries: TimelineEntry[]
  /** Characters of raw text held, for the page's own budget. */
  chars: number
  /** Events dropped from the start past the timeline's bound. */
  dropped: number
}

export type Tab = 'chat' | 'tasks' | 'card' | 'push'

const savedDialect = localStorage.getItem('a2a-inspector-dialect')
export const dialect = new Store<Dialect>(
  DIALECTS.some((known) => known.id === savedDialect) ? (savedDialect as Dialect) : 'platform',
)
dialect.subscribe(() => localStorage.setItem('a2a-inspector-dialect', dialect.value))

/**
 * The path of the agent's REST interface (A2A v1.0 over HTTP+JSON) as its v1.0 card lists it: undefined until the
 * card is read, or when it lists none (then the page offers no REST).
 */
export const restAddress = new Store<string | undefined>(undefined)

export const tab = new Store<Tab>('chat')
/**
 * The agents of a dev server that serves a folder of them: the one this page inspects and every one's name, for the
 * switch between their pages. Undefined for a dev server of one agent (the page then shows no switch).
 */
export const agents = new Store<{ current: string; names: string[] } | undefined>(undefined)
export const card = new Store<Record<string, unknown> | undefined>(undefined)
export const load = new Store<LoadState | undefined>(undefined)
/** Loads seen since the page opened: the first is the one before the page, not a reload. */
export const reloads = new Store<number>(0)
/** The live channel: connecting at first, then open or lost (and retrying). */
export const connected = new Store<'connecting' | 'open' | 'lost'>('connecting')
export const exchanges = new Store<Exchange[]>([])
export const contextId = new Store<string | undefined>(undefined)
export const timelines = new Store<Map<string, Timeline>>(new Map())
export const tasks = new Store<Map<string, TaskLine>>(new Map())
/**
 * Whether the dev server lists tasks for the page's credential: `refused` holds why not (the agent asks for a
 * credential the page lacks, or does not accept the one it has), so an empty list never passes for "no tasks".
 */
export const taskFeed = new Store<{ refused?: string }>({})
export const selectedTask = new Store<string | undefined>(undefined)
export const deliveries = new Store<PushDelivery[]>([])
/** Deliveries the receiver refused (too large), which the page counts. */
export const refusedDeliveries = new Store<number>(0)
/** What the page says to screen readers about the chat: state changes, not every chunk. */
export const announcement = new Store<string>('')
export const pushUrl = new Store<string | undefined>(undefined)
/** Set when the agent runs with telemetry: the page then shows the trace of each task event (linked with `url`). */
export const tracing = new Store<Tracing | undefined>(undefined)

export type Credential = { scheme: 'bearer' | 'apiKey'; value: string }
const savedCredential = sessionStorage.getItem('a2a-inspector-credential')
/** What the page sends an agent that asks for authentication; kept for this tab only. */
export const credential = new Store<Credential | undefined>(
  savedCredential ? (JSON.parse(savedCredential) as Credential) : undefined,
)
credential.subscribe(() => {
  if (credential.value?.value) sessionStorage.setItem('a2a-inspector-credential', JSON.stringify(credential.value))
  else sessionStorage.removeItem('a2a-inspector-credential')
})
