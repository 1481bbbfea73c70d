// The ceiling of workerd: a Worker answering the same bytes as ceiling.mjs does on node:http (_ceiling-answers.mjs)
// from its own fetch handler, with no Durable Object in between. BENCH_STREAM_EVENTS, the events per stream, comes
// as a variable (`wrangler dev --var`): a Worker has no process environment.
import { ceilingAnswers, ceilingCard, streamEventsOf } from './_ceiling-answers.mjs'

const json = { 'content-type': 'application/json' }
const eventStream = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }
let answers

export default {
  async fetch(request, env) {
    if (request.method === 'GET')
      return new Response(ceilingCard(new URL('/', request.url).href, 'bare Worker fetch handler'), { headers: json })
    answers ??= ceilingAnswers({
      randomUUID: () => crypto.randomUUID(),
      streamEvents: streamEventsOf(env.BENCH_STREAM_EVENTS),
    })
    const { stream, body } = answers.answer(await request.text())
    return new Response(body, { headers: stream ? eventStream : json })
  },
}
