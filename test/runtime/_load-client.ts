import { Agent, type IncomingHttpHeaders, request } from 'node:http'
import { performance } from 'node:perf_hooks'

/**
 * A node:http client for the load test and the soak: global fetch hides its connection pool, while here every
 * request goes through an `Agent` the caller sizes (1,000+ sockets for the load test) and destroys at the end.
 */

export const jsonRpc = (
  method: string,
  params: unknown,
  id: string | number = `r-${Math.random().toString(36).slice(2)}`,
) => JSON.stringify({ jsonrpc: '2.0', id, method, params })

/** An agent for many requests at once: no cap on sockets. `keepAlive` reuses connections between requests. */
export const httpAgent = (keepAlive: boolean) =>
  new Agent({ keepAlive, maxSockets: Number.POSITIVE_INFINITY, maxFreeSockets: 256 })

export interface HttpReply {
  status: number
  headers: IncomingHttpHeaders
  text: string
  ms: number
}

interface RequestOptions {
  agent: Agent
  headers?: Record<string, string>
  /** Destroys the request past it and rejects. Default 30 s. */
  timeoutMs?: number
}

/** POSTs `body` to `url` and reads the whole answer. */
export function post(url: string, body: string | Buffer, options: RequestOptions): Promise<HttpReply> {
  const started = performance.now()
  const payload = typeof body === 'string' ? Buffer.from(body) : body
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent: options.agent,
        headers: { 'content-type': 'application/json', 'content-length': payload.length, ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.once('end', () => {
          clearTimeout(timer)
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - started,
          })
        })
        res.once('error', fail)
      },
    )
    function fail(error: Error) {
      clearTimeout(timer)
      reject(error)
    }
    const timer = setTimeout(() => {
      req.destroy()
      reject(new Error(`no answer within ${options.timeoutMs ?? 30_000} ms`))
    }, options.timeoutMs ?? 30_000)
    req.once('error', fail)
    req.end(payload)
  })
}

export interface RpcReply extends HttpReply {
  body: any
}

/** A JSON-RPC call; `body` is the parsed answer (undefined when it is not JSON). */
export async function rpc(url: string, method: string, params: unknown, options: RequestOptions): Promise<RpcReply> {
  const reply = await post(url, jsonRpc(method, params), options)
  let body: unknown
  try {
    body = JSON.parse(reply.text)
  } catch {
    body = undefined
  }
  return { ...reply, body }
}

export interface SseFrame {
  id?: number
  data: any
}

export interface StreamResult {
  status: number
  contentType: string
  frames: SseFrame[]
  /** The body when it was not an event stream (an error answer). */
  text: string
  /** The server ended the body (false: the client destroyed it, or the connection broke). */
  ended: boolean
  timedOut: boolean
  /** To the first complete event and to the end (or the destroy), in ms. */
  firstMs: number
  ms: number
}

export interface OpenStream {
  done: Promise<StreamResult>
  /** Leaves the stream: closes the connection (the client disconnects mid-stream). */
  destroy(): void
}

/**
 * POSTs a streaming request and reads its SSE frames as they come; `onFrame` sees each one (and may destroy
 * the stream). `done` resolves when the body ends, breaks, is destroyed or times out; it never rejects.
 */
export function openStream(
  url: string,
  body: string,
  options: RequestOptions & { onFrame?: (frame: SseFrame, index: number, stream: OpenStream) => void },
): OpenStream {
  const started = performance.now()
  const payload = Buffer.from(body)
  const result: StreamResult = {
    status: 0,
    contentType: '',
    frames: [],
    text: '',
    ended: false,
    timedOut: false,
    firstMs: Number.NaN,
    ms: Number.NaN,
  }
  let settle!: (result: StreamResult) => void
  const done = new Promise<StreamResult>((resolve) => (settle = resolve))
  let finished = false
  const finish = () => {
    if (finished) return
    finished = true
    clearTimeout(timer)
    result.ms = performance.now() - started
    settle(result)
  }
  const req = request(
    url,
    {
      method: 'POST',
      agent: options.agent,
      headers: { 'content-type': 'application/json', 'content-length': payload.length, ...options.headers },
    },
    (res) => {
      result.status = res.statusCode!
      result.contentType = String(res.headers['content-type'] ?? '')
      const sse = result.contentType.startsWith('text/event-stream')
      res.setEncoding('utf8')
      let buffer = ''
      res.on('data', (chunk: string) => {
        if (!sse) {
          result.text += chunk
          return
        }
        buffer += chunk
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const frame = parseFrame(block)
          if (!frame) continue
          if (result.frames.length === 0) result.firstMs = performance.now() - started
          result.frames.push(frame)
          options.onFrame?.(frame, result.frames.length - 1, stream)
          if (finished) return
        }
      })
      res.once('end', () => {
        result.ended = true
        if (buffer.trim() !== '') result.text += buffer
        finish()
      })
      res.once('close', finish)
      res.once('error', finish)
    },
  )
  const timer = setTimeout(() => {
    result.timedOut = true
    req.destroy()
    finish()
  }, options.timeoutMs ?? 30_000)
  req.once('error', finish)
  req.end(payload)
  const stream: OpenStream = {
    done,
    destroy() {
      req.destroy()
      finish()
    },
  }
  return stream
}

/** One SSE block: `id:` and `data:` lines; a comment-only block (`: keep-alive`) is none. */
function parseFrame(block: string): SseFrame | undefined {
  let id: number | undefined
  let data: string | undefined
  for (const line of block.split('\n')) {
    if (line.startsWith('id: ')) id = Number(line.slice(4))
    else if (line.startsWith('data: ')) data = (data === undefined ? '' : `${data}\n`) + line.slice(6)
  }
  if (data === undefined) return undefined
  return { ...(id !== undefined && { id }), data: JSON.parse(data) }
}

/** Runs `work` over `items` with at most `limit` at once. */
export async function eachLimited<T>(
  items: T[],
  limit: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0
  const lane = async () => {
    while (next < items.length) {
      const index = next++
      await work(items[index]!, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane))
}

/** A platform or v1.0 stream event reduced to "kind:state/text", the same for both dialects. */
export function summarize(data: SseFrame['data']): string {
  // Platform: JSON-RPC notifications.
  if (data?.method === 'tasks/statusUpdate') {
    const text = data.params.status.message?.parts?.[0]?.text
    return `status:${data.params.status.state}${text ? `:${text}` : ''}${data.params.final ? ':final' : ''}`
  }
  if (data?.method === 'tasks/artifactUpdate') return `artifact:${data.params.artifact.parts[0].text}`
  // v1.0: JSON-RPC responses with a Task, a status or an artifact update.
  const result = data?.result
  if (result?.task) return `task:${v1State(result.task.status.state)}`
  if (result?.statusUpdate) {
    const text = result.statusUpdate.status.message?.parts?.[0]?.text
    const state = v1State(result.statusUpdate.status.state)
    return `status:${state}${text ? `:${text}` : ''}${['completed', 'failed', 'canceled', 'rejected', 'input-required', 'auth-required'].includes(state) ? ':final' : ''}`
  }
  if (result?.artifactUpdate) return `artifact:${result.artifactUpdate.artifact.parts[0].text}`
  if (data?.error) return `error:${data.error.code}`
  return `unknown:${JSON.stringify(data).slice(0, 100)}`
}

/** TASK_STATE_INPUT_REQUIRED → input-required. */
export const v1State = (state: string) =>
  state
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace('_', '-')

/** The task id a stream event is about, in either dialect. */
export function taskIdOf(data: SseFrame['data']): string | undefined {
  return (
    data?.params?.taskId ??
    data?.result?.task?.id ??
    data?.result?.statusUpdate?.taskId ??
    data?.result?.artifactUpdate?.taskId
  )
}
