// The ceiling: what node:http itself does for the same exchange, with no framework, validation, task
// lifecycle or store. It reads the body, JSON.parse()s it, and answers with JSON.stringify() of a result
// shaped like our runtime's (a completed task with the echoed artifact), so the bytes on the wire are
// comparable. message/stream answers text/event-stream with BENCH_STREAM_EVENTS `data:` events (the count
// our runtime sends, measured by the bench) and ends. Any GET answers a small card.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'

const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? '127.0.0.1'
const streamEvents = Math.max(2, Number(process.env.BENCH_STREAM_EVENTS ?? 4))
const card = JSON.stringify({
  name: 'Ceiling',
  description: 'bare node:http',
  url: `http://${host}:${port}/`,
  version: '0.1.0',
  capabilities: { streaming: true },
  skills: [],
})

function textOf(message) {
  return (message?.parts ?? [])
    .map((part) => (part?.kind === 'text' ? part.text : ''))
    .join('')
    .trim()
}

function task(message, state) {
  const id = randomUUID()
  const contextId = randomUUID()
  return {
    kind: 'task',
    id,
    contextId,
    status: { state, timestamp: new Date().toISOString() },
    artifacts: [{ artifactId: randomUUID(), parts: [{ kind: 'text', text: `Echo: ${textOf(message)}` }], lastChunk: true }],
    history: [{ ...message, taskId: id, contextId }],
  }
}

// With Content-Length: writeHead() without one makes node:http answer chunked, which costs a small response
// an extra write (and measured ~2.5x slower here), and no real server answers JSON that way.
function json(res, value) {
  const body = typeof value === 'string' ? value : JSON.stringify(value)
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

function stream(res, rpc) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
  const { id: taskId, contextId, artifacts } = task(rpc.params?.message, 'working')
  const event = (params, method = 'tasks/statusUpdate') => `data: ${JSON.stringify({ jsonrpc: '2.0', method, params })}\n\n`
  const status = (state, final) => event({ taskId, contextId, status: { state, timestamp: new Date().toISOString() }, final })
  // working … working, the artifact, then the final completed status: streamEvents events in all, written
  // as one chunk (the least a server can do; our runtime also sends the events of one synchronous run at once).
  let events = ''
  for (let i = 0; i < streamEvents - 2; i++) events += status('working', false)
  events += event({ taskId, contextId, artifact: artifacts[0] }, 'tasks/artifactUpdate')
  res.end(events + status('completed', true))
}

const server = createServer((req, res) => {
  if (req.method === 'GET') return json(res, card)
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    let rpc
    try {
      rpc = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      return json(res, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } })
    }
    if (rpc.method === 'message/stream') return stream(res, rpc)
    json(res, { jsonrpc: '2.0', id: rpc.id, result: task(rpc.params?.message, 'completed') })
  })
})

server.listen(port, host, () => console.log(`[ceiling] listening on http://${host}:${port}/`))
process.once('SIGTERM', () => {
  server.closeAllConnections?.()
  server.close(() => process.exit(0))
})
