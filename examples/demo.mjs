// Starts the example agent and talks to it as a client would: the card, message/send, message/stream.
import { serveAgent } from 'a2a-runtime'
import agent from './echo-agent.mjs'

const server = await serveAgent(agent, { port: process.env.PORT ? Number(process.env.PORT) : 3000 })
const rpc = (method, params) =>
  fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: method, method, params }) })
const message = (text) => ({ message: { role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'text', text }] } })

console.log(`\nGET ${server.url}.well-known/agent.json`)
console.log(await (await fetch(`${server.url}.well-known/agent.json`)).json())

console.log('\nmessage/send "hello from the demo"')
console.dir((await (await rpc('message/send', message('hello from the demo'))).json()).result, { depth: 6 })

console.log('\nmessage/stream "streams arrive word by word" (raw SSE):')
process.stdout.write(await (await rpc('message/stream', message('streams arrive word by word'))).text())

if (process.argv.includes('--once')) {
  await server.close()
} else {
  console.log(`The agent keeps serving at ${server.url} — try:
  curl -s ${server.url} -H 'content-type: application/json' -d '{"jsonrpc":"2.0","id":"1","method":"message/send","params":{"message":{"role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}}'
Press Ctrl-C to stop.`)
}
