import { authHeaders } from './auth-headers'
import { AGENT_BASE } from './base'
import { dialectHeaders, frameIn, methodName, type Operation } from './dialects'
import { errorText } from './exchange'
import type { Dialect, Update } from './model'
import { restAnswerIn, restRequest, restRequestText } from './rest'
import { fieldsOf, readFrames } from './sse'
import { restAddress, tracing } from './state'

/**
 * The page's calls to the agent, in the chosen dialect: JSON-RPC on the agent's endpoint, or REST on the paths of
 * the card's HTTP+JSON interface.
 */

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

/** The agent's JSON-RPC endpoint: the page is served by the agent's own server, below the agent's path. */
const ENDPOINT = AGENT_BASE

/** Raw text kept per wire event: a page showing a 50 MB artifact would only stall the browser. */
const MAX_RAW_CHARS = 64 * 1024

const clip = (text: string) =>
  text.length > MAX_RAW_CHARS
    ? `${text.slice(0, MAX_RAW_CHARS)}… (${text.length - MAX_RAW_CHARS} more characters)`
    : text

let nextId = 1

type Params = Record<string, unknown>

/** A request as sent, and as the timeline shows it (`raw`). */
interface Outgoing {
  url: string
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string }
  raw: string
  rest: boolean
}

function request(dialect: Dialect, operation: Operation, params: Params): Outgoing {
  const headers = { ...dialectHeaders(dialect), ...authHeaders() }
  if (dialect === 'a2a-1.0-rest') {
    // Until the card is read, the agent's path: where this runtime serves REST by default.
    const sent = restRequest(restAddress.value ?? AGENT_BASE.slice(0, -1), operation, params)
    const init: Outgoing['init'] = { method: sent.method, headers }
    if (sent.body !== undefined) {
      headers['content-type'] = 'application/a2a+json'
      init.body = sent.body
    }
    return { url: sent.path, init, raw: restRequestText(sent), rest: true }
  }
  const body = JSON.stringify(
    { jsonrpc: '2.0', id: `inspector-${nextId++}`, method: methodName(dialect, operation), params },
    null,
    2,
  )
  headers['content-type'] = 'application/json'
  return { url: ENDPOINT, init: { method: 'POST', headers, body }, raw: body, rest: false }
}

function parsed(text: string, rest: boolean): Update[] {
  try {
    const json: unknown = JSON.parse(text)
    return rest ? restAnswerIn(json) : frameIn(json)
  } catch {
    return [{ kind: 'error', code: 0, message: `Not JSON: ${text.slice(0, 200)}` }]
  }
}

/** A whole answer's updates; its errors carry the HTTP status when it was not a success (401, 503…). */
function answered(text: string, status: number, rest: boolean): Update[] {
  const updates = parsed(text, rest)
  if (status >= 200 && status < 300) return updates
  const withStatus = updates.map((update) => (update.kind === 'error' ? { ...update, httpStatus: status } : update))
  // An answer that is no error of the binding's (a proxy's page, an empty body) is an error all the same.
  return withStatus.some((update) => update.kind === 'error')
    ? withStatus
    : [
        {
          kind: 'error',
          code: 0,
          message: `The agent answered HTTP ${status} without ${rest ? 'a google.rpc.Status' : 'a JSON-RPC error'}`,
          httpStatus: status,
        },
      ]
}

/** An answer as the timeline shows it: REST's status is half its meaning (there is no envelope), so it goes first. */
const answerText = (text: string, status: number, rest: boolean) =>
  rest ? `HTTP ${status}${text ? `\n\n${clip(text)}` : ''}` : clip(text)

/**
 * One JSON-RPC call, answered in one response. `onWire` hears the request and the response; the updates are
 * the answer's (an error becomes an `error` update).
 */
export async function call(
  dialect: Dialect,
  operation: Operation,
  params: Params,
  onWire?: (event: WireEvent) => void,
): Promise<Update[]> {
  const { url, init, raw, rest } = request(dialect, operation, params)
  onWire?.({ at: now(), direction: 'request', raw, updates: [] })
  let text: string
  let status: number
  try {
    const response = await fetch(url, init)
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
  const updates = answered(text, status, rest)
  onWire?.({ at: now(), direction: 'response', raw: answerText(text, status, rest), updates })
  return updates
}

/** The result of a call as JSON (for views that show a whole object), or the error. */
export async function callForResult(
  dialect: Dialect,
  operation: Operation,
  params: Params,
): Promise<{ result?: unknown; error?: string }> {
  const { url, init, rest } = request(dialect, operation, params)
  try {
    const response = await fetch(url, init)
    const text = await response.text()
    const error = answered(text, response.status, rest).find((update) => update.kind === 'error')
    if (error?.kind === 'error') return { error: errorText(error) }
    // REST answers the result itself; JSON-RPC wraps it.
    const json = JSON.parse(text)
    return { result: rest ? json : json.result }
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
  params: Params,
  onWire: (event: WireEvent) => void,
  signal: AbortSignal,
  { operation = 'stream', lastEventId }: { operation?: 'stream' | 'subscribe'; lastEventId?: number } = {},
): Promise<void> {
  const { url, init, raw, rest } = request(dialect, operation, params)
  if (lastEventId !== undefined) init.headers['last-event-id'] = String(lastEventId)
  // The platform dialect numbers a stream's events when asked (`Last-Event-ID: 0`): with traces shown, each frame's
  // number says which trace made it. The other dialects number them always.
  else if (dialect === 'platform' && tracing.value) init.headers['last-event-id'] = '0'
  init.headers.accept = 'text/event-stream'
  onWire({ at: now(), direction: 'request', raw, updates: [] })
  let response: Response
  try {
    response = await fetch(url, { ...init, signal })
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
  // An error before the stream starts comes back as one answer (JSON-RPC's response, REST's HTTP error).
  if (!response.headers.get('content-type')?.includes('text/event-stream') || !response.body) {
    const text = await response.text()
    const updates = answered(text, response.status, rest)
    onWire({ at: now(), direction: 'response', raw: answerText(text, response.status, rest), updates })
    return
  }
  try {
    await readFrames(response.body, (frame) => {
      const { data, id } = fieldsOf(frame)
      if (!data) return // a comment (heartbeat) or an id-only frame
      const event: WireEvent = { at: now(), direction: 'frame', raw: clip(frame), updates: parsed(data, rest) }
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
