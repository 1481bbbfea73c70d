// The ceiling of Bun and Deno: their native HTTP servers (Bun.serve, Deno.serve) answering the same bytes as
// ceiling.mjs does on node:http (_ceiling-answers.mjs) from a bare fetch handler, the way serveAgent serves an
// agent there. On 127.0.0.1:PORT; BENCH_STREAM_EVENTS events per stream.
import { ceilingAnswers, ceilingCard, streamEventsOf } from './_ceiling-answers.mjs'

const port = Number(process.env.PORT ?? 3000)
const hostname = process.env.HOST ?? '127.0.0.1'
const server = globalThis.Bun ? 'Bun.serve' : globalThis.Deno ? 'Deno.serve' : undefined
if (!server) throw new Error('ceiling-fetch.mjs runs on Bun or Deno (ceiling.mjs is the ceiling of Node)')

const card = ceilingCard(`http://${hostname}:${port}/`, `bare ${server}`)
const answers = ceilingAnswers({
  randomUUID: () => crypto.randomUUID(),
  streamEvents: streamEventsOf(process.env.BENCH_STREAM_EVENTS),
})
const json = { 'content-type': 'application/json' }
const eventStream = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }

// A string body: the runtime sends it whole with its Content-Length, the least it can do for either answer.
async function fetch(request) {
  if (request.method === 'GET') return new Response(card, { headers: json })
  const { stream, body } = answers.answer(await request.text())
  return new Response(body, { headers: stream ? eventStream : json })
}

const listening = () => console.log(`[ceiling] ${server} listening on http://${hostname}:${port}/`)
if (globalThis.Bun) {
  Bun.serve({ port, hostname, fetch })
  listening()
} else Deno.serve({ port, hostname, onListen: listening }, fetch)
