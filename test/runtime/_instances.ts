import { type FixtureAgent, type FixtureProbe, startFixtureAgent } from './_fixture-process.ts'

/**
 * Several agent processes (test/fixtures/instances-agent.mjs) on one shared store, the one an `A2A_STORE` URL names
 * (`redis://…?prefix=…`, `postgres://…?schema=…`), each on 127.0.0.1 and a free port, spoken to in A2A v1.0 over
 * JSON-RPC. A test stops them (SIGTERM, then SIGKILL) or kills them (SIGKILL) by PID.
 */

/** How long a task's lease lasts unless the test says otherwise: short, so a killed instance's tasks fail soon. */
export const SHORT_LEASE_MS = 2000

const V1_HEADERS = { 'content-type': 'application/json', 'a2a-version': '1.0' }
/** How long a stopped instance gets to close (its tasks end, its leases go back) before it is killed. */
const STOP_GRACE_MS = 10_000

/** A JSON-RPC answer: the HTTP status and the parsed body (`result` or `error`). */
export interface Answer {
  status: number
  body: any
}

/** One SSE event: its `id:` (undefined when the frame has none) and its JSON-RPC `result`. */
export interface StreamEvent {
  id: number | undefined
  result: any
}

/** A stream of SSE events being read, one at a time; `next()` resolves undefined once it has ended. */
export interface EventStream {
  next(): Promise<StreamEvent | undefined>
  /** Cuts the stream (the client goes away). */
  cancel(): Promise<void>
}

export interface AgentInstance {
  /** `A`, `B`…: in the order they were started. */
  name: string
  url: string
  pid: number
  alive(): boolean
  /** What the process printed on stderr (the end of it): the runtime's log lines, for a failure to quote. */
  stderr(): string
  /** One A2A v1.0 JSON-RPC call. */
  call(method: string, params: unknown): Promise<Answer>
  /** A streaming call (SendStreamingMessage, SubscribeToTask); rejects when the answer is not a stream. */
  stream(method: string, params: unknown, headers?: Record<string, string>): Promise<EventStream>
  /** SIGTERM by PID; SIGKILL if it has not exited after a grace period. Resolves once it has exited. */
  stop(): Promise<void>
  /** SIGKILL by PID (a crash); resolves once it has exited. */
  kill(): Promise<void>
}

/** `url` with these query options set (a `leaseMs`, a fresh `prefix` or `schema`…), others kept. */
export function withStoreOptions(url: string, options: Record<string, string | number>): string {
  const parsed = new URL(url)
  for (const [key, value] of Object.entries(options)) parsed.searchParams.set(key, String(value))
  return parsed.href
}

/** A name no other test uses: a Redis key prefix or a PostgreSQL schema (letters, digits and `_`). */
export const freshName = (label: string) => `${label}_${Math.random().toString(36).slice(2, 10)}`

/**
 * Starts `count` instances (default 2) together on the store `storeUrl` names, with `leaseMs` (default
 * SHORT_LEASE_MS) unless the URL sets one; resolves once each listens. Should one fail to start, those that did are
 * killed. The caller stops them (`stopAll`).
 */
export async function startInstances(
  storeUrl: string,
  options: { count?: number; leaseMs?: number } = {},
): Promise<AgentInstance[]> {
  const url = new URL(storeUrl).searchParams.has('leaseMs')
    ? storeUrl
    : withStoreOptions(storeUrl, { leaseMs: options.leaseMs ?? SHORT_LEASE_MS })
  const names = Array.from({ length: options.count ?? 2 }, (_, i) => String.fromCharCode(65 + i))
  const started = await Promise.allSettled(
    names.map(() => startFixtureAgent<FixtureProbe>('instances-agent.mjs', { A2A_STORE: url })),
  )
  const agents = started.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []))
  const failed = started.find((outcome) => outcome.status === 'rejected')
  if (failed) {
    await Promise.all(agents.map((agent) => agent.kill()))
    throw (failed as PromiseRejectedResult).reason
  }
  return agents.map((agent, i) => instanceOf(names[i]!, agent))
}

/** Stops every instance still running. */
export async function stopAll(instances: AgentInstance[]): Promise<void> {
  await Promise.all(instances.map((instance) => instance.stop()))
}

function instanceOf(name: string, agent: FixtureAgent<FixtureProbe>): AgentInstance {
  const post = (method: string, params: unknown, headers: Record<string, string> = {}) =>
    fetch(agent.url, {
      method: 'POST',
      headers: { ...V1_HEADERS, ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    })
  const exited = new Promise<void>((resolve) => {
    if (!agent.alive()) resolve()
    else agent.child.once('exit', () => resolve())
  })
  return {
    name,
    url: agent.url,
    pid: agent.pid,
    alive: agent.alive,
    stderr: agent.stderr,
    async call(method, params) {
      const response = await post(method, params)
      const text = await response.text()
      return { status: response.status, body: text ? JSON.parse(text) : undefined }
    },
    async stream(method, params, headers) {
      const response = await post(method, params, headers)
      if (!response.headers.get('content-type')?.startsWith('text/event-stream'))
        throw new Error(`${name} answered ${method} with ${response.status}: ${(await response.text()).slice(0, 500)}`)
      return sseEvents(response)
    },
    async stop() {
      if (!agent.alive()) return
      process.kill(agent.pid, 'SIGTERM')
      const timer = setTimeout(() => void agent.kill(), STOP_GRACE_MS)
      await exited
      clearTimeout(timer)
    },
    kill: agent.kill,
  }
}

/** Reads `response`'s SSE frames one at a time, each with its own `id:` (keep-alive comments passed over). */
function sseEvents(response: Response): EventStream {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  return {
    async next() {
      for (;;) {
        const end = buffer.indexOf('\n\n')
        if (end !== -1) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const data = /^data: (.*)$/m.exec(frame)
          if (!data) continue
          const id = /^id: (\d+)$/m.exec(frame)
          return { id: id ? Number(id[1]) : undefined, result: JSON.parse(data[1]!).result }
        }
        const { done, value } = await reader.read()
        if (done) return undefined
        buffer += decoder.decode(value, { stream: true })
      }
    },
    cancel: () => reader.cancel(),
  }
}
