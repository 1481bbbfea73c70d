import { authHeaders } from './auth-headers'
import { dialectHeaders, errorIn, frameIn, methodName, type Operation } from './dialects'
import type { Dialect, Update } from './model'
import { fieldsOf, readFrames } from './sse'

/** What the page saw on the wire: the request it sent, then each response or SSE frame, as text. */
export interface WireEvent {
  /** When the page sent or received it, in ms since the epoch (with the page's sub-millisecond clock). */
  at: number
  direction: 'request' | 'response' | 'frame'
  raw: string
  updates: Update[]
  /** An SSE frame's `id:`, the task's event number (`seq`) where the server numbers its events. */
  seq?: number
}

/** Now, in ms since the epoch: the monotonic clock from the page's start, so offsets between events stay exact. */
export const now = (): number => performance.timeOrigin + performance.now()

/** The agent's JSON-RPC endpoint: the page is served by the agent's own server. */
const ENDPOINT = '/'

/** Raw text kept per wire event: a page showing a 50 MB artifact would only stall the browser. */
const MAX_RAW_CHARS = 64 * 1024

const clip = (text: string) =>
  text.length > MAX_RAW_CHARS
    ? `${text.slice(0, MAX_RAW_CHARS)}… (${text.length - MAX_RAW_CHARS} more characters)`
    : text

let nextId = 1

function request(
  dialect: Dialect,
  operation: Operation,
  params: unknown,
): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify(
    { jsonrpc: '2.0', id: `inspector-${nextId++}`, method: methodName(dialect, operation), params },
    null,
    2,
  )
  return { body, headers: { 'content-type': 'application/json', ...dialectHeaders(dialect), ...authHeaders() } }
}

function parsed(text: string): Update[] {
  try {
    return frameIn(JSON.parse(text))
  } catch {
    return [{ kind: 'error', code: 0, message: `Not JSON: ${text.slice(0, 200)}` }]
  }
}

/** A whole answer's updates; its errors carry the HTTP status when it was not a success (401, 503…). */
function answered(text: string, status: number): Update[] {
  const updates = parsed(text)
  if (status >= 200 && status < 300) return updates
  const withStatus = updates.map((update) => (update.kind === 'error' ? { ...update, httpStatus: status } : update))
  // An answer that is no JSON-RPC error (a proxy's page, an empty body) is an error all the same.
  return withStatus.some((update) => update.kind === 'error')
    ? withStatus
    : [
        {
          kind: 'error',
          code: 0,
          message: `The agent answered HTTP ${status} without a JSON-RPC error`,
          httpStatus: status,
        },
      ]
}

/**
 * One JSON-RPC call, answered in one response. `onWire` hears the request and the response; the updates are
 * the answer's (an error becomes an `error` update).
 */
export async function call(
  dialect: Dialect,
  operation: Operation,
  params: unknown,
  onWire?: (event: WireEvent) => void,
): Promise<Update[]> {
  const { body, headers } = request(dialect, operation, params)
  onWire?.({ at: now(), direction: 'request', raw: body, updates: [] })
  let text: string
  let status: number
  try {
    const response = await fetch(ENDPOINT, { method: 'POST', headers, body })
    status = response.status
    text = await response.text()
  } catch (error) {
    // Heard like any answer: a send with no answer at all is over too, not left sending.
    const updates: Update[] = [
      { kind: 'error', code: 0, message: `The agent did not answer: ${(error as Error).message}` },
    ]
    onWire?.({ at: now(), direction: 'response', raw: '', updates })
    return updates
  }
  const updates = answered(text, status)
  onWire?.({ at: now(), direction: 'response', raw: clip(text), updates })
  return updates
}

/** The result of a call as JSON (for views that show a whole object), or the error. */
export async function callForResult(
  dialect: Dialect,
  operation: Operation,
  params: unknown,
): Promise<{ result?: unknown; error?: string }> {
  const { body, headers } = request(dialect, operation, params)
  try {
    const json = await (await fetch(ENDPOINT, { method: 'POST', headers, body })).json()
    if (json.error) {
      const error = errorIn(json.error)
      return { error: error.kind === 'error' ? `${error.code}: ${error.message}` : 'error' }
    }
    return { result: json.result }
  } catch (error) {
    return { error: (error as Error).message }
  }
}

/**
 * A streaming send: each SSE frame is handed over as it arrives (its raw text and its updates). Resolves when
 * the stream ends; `signal` stops reading (the task runs on).
 */
export async function stream(
  dialect: Dialect,
  params: unknown,
  onWire: (event: WireEvent) => void,
  signal: AbortSignal,
  { operation = 'stream', lastEventId }: { operation?: 'stream' | 'subscribe'; lastEventId?: number } = {},
): Promise<void> {
  const { body, headers } = request(dialect, operation, params)
  if (lastEventId !== undefined) headers['last-event-id'] = String(lastEventId)
  onWire({ at: now(), direction: 'request', raw: body, updates: [] })
  let response: Response
  try {
    response = await fetch(ENDPOINT, {
      method: 'POST',
      headers: { ...headers, accept: 'text/event-stream' },
      body,
      signal,
    })
  } catch (error) {
    if (!signal.aborted)
      onWire({
        at: now(),
        direction: 'response',
        raw: '',
        updates: [{ kind: 'error', code: 0, message: `The agent did not answer: ${(error as Error).message}` }],
      })
    return
  }
  // An error before the stream starts comes back as one JSON-RPC response.
  if (!response.headers.get('content-type')?.includes('text/event-stream') || !response.body) {
    const text = await response.text()
    onWire({ at: now(), direction: 'response', raw: clip(text), updates: answered(text, response.status) })
    return
  }
  try {
    await readFrames(response.body, (frame) => {
      const { data, id } = fieldsOf(frame)
      if (!data) return // a comment (heartbeat) or an id-only frame
      const event: WireEvent = { at: now(), direction: 'frame', raw: clip(frame), updates: parsed(data) }
      if (id && /^\d{1,15}$/.test(id)) event.seq = Number(id)
      onWire(event)
    })
  } catch (error) {
    if (!signal.aborted)
      onWire({
        at: now(),
        direction: 'frame',
        raw: '',
        updates: [{ kind: 'error', code: 0, message: `The stream broke: ${(error as Error).message}` }],
      })
  }
}
