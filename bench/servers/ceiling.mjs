// The ceiling: what node:http itself does for the same exchange, with no framework, validation, task
// lifecycle or store (the answers: _ceiling-answers.mjs). message/stream answers text/event-stream with
// BENCH_STREAM_EVENTS `data:` events (the count our runtime sends, measured by the bench) and ends. Any GET
// answers a small card.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { ceilingAnswers, ceilingCard, streamEventsOf } from './_ceiling-answers.mjs'

const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? '127.0.0.1'
const card = ceilingCard(`http://${host}:${port}/`, 'bare node:http')
const answers = ceilingAnswers({ randomUUID, streamEvents: streamEventsOf(process.env.BENCH_STREAM_EVENTS) })

// With Content-Length: writeHead() without one makes node:http answer chunked, which costs a small response
// an extra write (and measured ~2.5x slower here), and no real server answers JSON that way.
function json(res, body) {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

const server = createServer((req, res) => {
  if (req.method === 'GET') return json(res, card)
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    const { stream, body } = answers.answer(Buffer.concat(chunks).toString('utf8'))
    if (!stream) return json(res, body)
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
    res.end(body)
  })
})

server.listen(port, host, () => console.log(`[ceiling] listening on http://${host}:${port}/`))
process.once('SIGTERM', () => {
  server.closeAllConnections?.()
  server.close(() => process.exit(0))
})
