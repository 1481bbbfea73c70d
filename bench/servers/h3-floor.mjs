// The floor of a server built on h3 v2 and srvx on Node, the runtime's own HTTP layer: an h3 app answering the same
// small card as ceiling.mjs, served by srvx on 127.0.0.1:PORT, and nothing else (no agent, no A2A, no store, no
// TypeScript). Its start-up row says what those two packages cost a start before any of the runtime's own code: on
// Node 20, srvx's Node adapter and h3 build classes on the fetch globals (Headers, Request, Response) as they load,
// which makes Node 20 load its fetch implementation (undici) before the server can answer.
import { H3 } from 'h3'
import { serve } from 'srvx'
import { ceilingCard } from './_ceiling-answers.mjs'

const port = Number(process.env.PORT ?? 3000)
const hostname = process.env.HOST ?? '127.0.0.1'
const card = ceilingCard(`http://${hostname}:${port}/`, 'h3 + srvx')
const json = { 'content-type': 'application/json' }

const app = new H3().get('/.well-known/agent-card.json', () => new Response(card, { headers: json }))
serve({ fetch: app.fetch, port, hostname, silent: true })
