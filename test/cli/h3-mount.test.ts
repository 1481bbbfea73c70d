import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'

// The built runtime bundles h3 (runtime/scripts/bundle.mjs) while users keep their own h3 beside it: an app of
// theirs must still mount `app.h3` and serve it with its own h3. Run on the built package (after `npm run build`),
// with the h3 the repository installs as the user's.

const root = fileURLToPath(new URL('../..', import.meta.url))
const builtRuntime = pathToFileURL(`${root}runtime/dist/index.js`).href

/** A user's server: its own H3 app with a route of its own and the agent's app mounted at /a2a, on node:http. */
const USER_SERVER = `
import { createServer } from 'node:http'
import { H3 } from 'h3'
import { toNodeHandler } from 'h3/node'
const { createA2AApp, defineAgent } = await import(${JSON.stringify(builtRuntime)})
const agent = defineAgent({
  card: { name: 'Mounted', description: 'Echoes' },
  execute(ctx, task) { task.working('on it'); task.artifact('echo: ' + ctx.text); task.complete() },
})
const a2a = createA2AApp(agent, { env: {}, publicUrl: 'http://127.0.0.1/a2a/', maxBodySize: 4096 })
const app = new H3().get('/own', () => ({ own: true }))
app.mount('/a2a', a2a.h3)
const listen = (handler) =>
  new Promise((resolve) => { const server = createServer(handler).listen(0, '127.0.0.1', () => resolve(server)) })
// The agent's app mounted in the user's, and the same app at the root of a server of its own (unmounted).
const [mounted, unmounted] = [await listen(toNodeHandler(app)), await listen(toNodeHandler(a2a.h3))]
console.log('listening on ' + mounted.address().port + ' ' + unmounted.address().port)
`

let child: ChildProcess | undefined

afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  child = undefined
})

/** The user's server's address (the agent at /a2a), and the unmounted app's. */
async function startUserServer(): Promise<{ base: string; unmounted: string }> {
  child = spawn(process.execPath, ['--input-type=module', '-e', USER_SERVER], {
    cwd: root,
    env: { ...process.env, NODE_OPTIONS: '' },
  })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  await expect.poll(() => output, { timeout: 30_000 }).toMatch(/listening on \d+ \d+|Error/)
  const ports = /listening on (\d+) (\d+)/.exec(output)
  if (!ports) throw new Error(`the user's server did not start: ${output}`)
  return { base: `http://127.0.0.1:${ports[1]}`, unmounted: `http://127.0.0.1:${ports[2]}` }
}

/** What a response says: its status, type and body. */
async function answer(response: Response) {
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text() }
}

const send = (method: string, text: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method,
  params: { message: { role: 'user', messageId: `m-${method}`, parts: [{ kind: 'text', text }] } },
})

describe("the built runtime's app mounted in a user's own h3 app", () => {
  it('answers its card, a send and a stream at the mount path, beside the routes of the user', async () => {
    const { base } = await startUserServer()
    expect(await (await fetch(`${base}/own`)).json()).toEqual({ own: true })

    const card = await fetch(`${base}/a2a/.well-known/agent-card.json`)
    expect(card.status).toBe(200)
    expect((await card.json()).name).toBe('Mounted')

    const sent = await fetch(`${base}/a2a/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(send('message/send', 'hello')),
    })
    expect(sent.status).toBe(200)
    const task = (await sent.json()).result
    expect(task.status.state).toBe('completed')
    expect(task.artifacts[0].parts[0].text).toBe('echo: hello')

    const streamed = await fetch(`${base}/a2a/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(send('message/stream', 'again')),
    })
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const events = (await streamed.text())
      .split('\n\n')
      .filter((frame) => frame.includes('data:'))
      .map((frame) => JSON.parse(frame.slice(frame.indexOf('data:') + 5)).params)
    expect(events.at(-1).status.state).toBe('completed')
    expect(events.some((event) => event.artifact?.parts[0].text === 'echo: again')).toBe(true)
  })

  it("answers what the runtime's h3 refuses as it does unmounted: an unknown path, an oversized body", async () => {
    const { base, unmounted } = await startUserServer()
    const unknown = await answer(await fetch(`${base}/a2a/no-such-route`))
    expect(unknown.status).toBe(404)
    expect(unknown).toEqual(await answer(await fetch(`${unmounted}/no-such-route`)))

    const oversized = (at: string) =>
      fetch(at, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(send('message/send', 'x'.repeat(8192))),
      })
    const refused = await answer(await oversized(`${base}/a2a/`))
    expect(refused.status).toBe(413)
    expect(refused).toEqual(await answer(await oversized(`${unmounted}/`)))
  })
})
