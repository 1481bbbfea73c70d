// The main job end to end: generate an agent with create-a2a-agent (from this clone), install it, start it
// with `npm start`, and talk to it as a client would: the card, message/send, message/stream.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { run } from '../dist/index.js'

const once = process.argv.includes('--once')
const port = process.env.PORT ?? '3000'
const workspace = mkdtempSync(join(tmpdir(), 'a2a-demo-'))
const project = join(workspace, 'demo-agent')

console.log(`$ npx create-a2a-agent ${project} --template streaming --yes\n`)
const code = await run([project, '--template', 'streaming', '--name', 'Demo Agent', '--description', 'Streams back what you say', '--pm', 'npm', '--no-git', '--yes'])
if (code !== 0) process.exit(code)

console.log(`\n$ cd ${project} && npm start`)
const server = spawn('npm', ['start'], { cwd: project, env: { ...process.env, PORT: port, HOST: process.env.HOST ?? '127.0.0.1' }, stdio: ['ignore', 'inherit', 'inherit'], detached: true })
const stop = () => {
  try {
    process.kill(-server.pid, 'SIGTERM')
  } catch {}
}
process.once('SIGINT', () => (stop(), process.exit(0)))
process.once('SIGTERM', () => (stop(), process.exit(0)))

const url = `http://${process.env.HOST ?? '127.0.0.1'}:${port}/`
for (let tries = 0; ; tries++) {
  const ready = await fetch(`${url}.well-known/agent.json`).then((r) => r.ok, () => false)
  if (ready) break
  if (tries > 200 || server.exitCode !== null) throw new Error('The generated agent did not start')
  await new Promise((resolve) => setTimeout(resolve, 100))
}

const rpc = (method, params) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: method, method, params }) })
const message = (text) => ({ message: { role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'text', text }] } })

console.log(`\nGET ${url}.well-known/agent.json`)
console.log(await (await fetch(`${url}.well-known/agent.json`)).json())

console.log('\nmessage/send "hello from the demo"')
console.dir((await (await rpc('message/send', message('hello from the demo'))).json()).result, { depth: 6 })

console.log('\nmessage/stream "streams arrive word by word" (raw SSE):')
process.stdout.write(await (await rpc('message/stream', message('streams arrive word by word'))).text())

if (once) {
  stop()
  await new Promise((resolve) => (server.exitCode === null ? server.once('exit', resolve) : resolve()))
  rmSync(workspace, { recursive: true, force: true })
} else {
  console.log(`The agent in ${project} keeps serving at ${url} — try:
  curl -s ${url} -H 'content-type: application/json' -d '{"jsonrpc":"2.0","id":"1","method":"message/send","params":{"message":{"role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}}'
Press Ctrl-C to stop.`)
}
