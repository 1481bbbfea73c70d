// The main job end to end: generate an agent with create-a2a-agent (from this clone), install it, start it
// with `npm start`, and talk to it as a client would: the card, message/send, message/stream.
// The temporary folder goes on every way out: the end, --once, an error, Ctrl-C (SIGINT) and SIGTERM.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { inspect } from 'node:util'

const generatorBin = fileURLToPath(new URL('../generator/bin/create-a2a-agent.mjs', import.meta.url))
const once = process.argv.includes('--once')
const host = process.env.HOST ?? '127.0.0.1'
const askedPort = process.env.PORT ?? '3000'
// A name of its own, so the card read back is known to be this agent's and not another server's on the port.
const name = `Demo Agent ${randomBytes(3).toString('hex')}`

/** A problem the demo explains in one line (no stack). */
class DemoError extends Error {}

/** Child processes, each the leader of its own process group (so stopping one stops what it started). */
const children = new Set()
let workspace
let serving = false
let leaving = false

/** Stops every child's process group and removes the temporary folder; safe to call more than once. */
async function cleanUp() {
  const stopped = await Promise.allSettled([...children].map(stopGroup))
  if (workspace) rmSync(workspace, { recursive: true, force: true, maxRetries: 5 })
  workspace = undefined
  for (const outcome of stopped) if (outcome.status === 'rejected') throw outcome.reason
}

/** `last`, when the demo ends well: printed once everything it started has stopped (their farewells come first). */
async function leave(code, message, last) {
  if (leaving) return
  leaving = true
  if (message) console.error(message)
  try {
    await cleanUp()
  } catch (error) {
    console.error(
      error instanceof DemoError ? error.message : `demo: could not clean up ${workspace ?? ''}: ${error.message}`,
    )
    code ||= 1
  }
  if (last && code === 0) console.log(last)
  process.exit(code)
}

// Ctrl-C, a SIGTERM or a closed terminal (SIGHUP): once the agent serves, that is how the demo ends; before, it is
// cut short. Either way the agent's process group and the temporary folder go with it.
for (const [signal, number] of [
  ['SIGINT', 2],
  ['SIGTERM', 15],
  ['SIGHUP', 1],
]) {
  process.on(
    signal,
    () => void leave(serving ? 0 : 128 + number, serving ? undefined : `\ndemo: stopped by ${signal}; cleaning up`),
  )
}

/** SIGTERM to the group, SIGKILL past 5 s; resolves once no process of the group is left. */
async function stopGroup(child) {
  const alive = () => {
    try {
      process.kill(-child.pid, 0)
      return true
    } catch {
      return false
    }
  }
  const signal = (name) => {
    try {
      process.kill(-child.pid, name)
    } catch {}
  }
  signal('SIGTERM')
  for (let waited = 0; alive(); waited += 50) {
    if (waited === 5000) signal('SIGKILL')
    if (waited > 15_000) throw new DemoError(`demo: process group ${child.pid} would not stop`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  children.delete(child)
}

function start(command, args, options) {
  const child = spawn(command, args, { ...options, detached: true })
  child.once('error', (error) => void leave(1, `demo: could not run ${command}: ${error.message}`))
  children.add(child)
  return child
}

/** `true` when nothing listens on host:port; a host or port that cannot be used at all is an error. */
function portIsFree(port) {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', (error) => {
      if (error.code === 'EADDRINUSE') resolve(false)
      else
        reject(
          new DemoError(`demo: cannot listen on ${host}:${port} (${error.code ?? error.message}); set HOST and PORT`),
        )
    })
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(true)))
  })
}

async function anyFreePort() {
  const probe = createServer()
  await new Promise((resolve, reject) =>
    probe.once('error', reject).listen({ host, port: 0, exclusive: true }, resolve),
  )
  const { port } = probe.address()
  await new Promise((resolve) => probe.close(resolve))
  return port
}

/** Decided before the install, so a port in use costs nothing. */
async function choosePort() {
  if (!/^\d{1,5}$/.test(askedPort) || Number(askedPort) > 65535)
    throw new DemoError(`demo: PORT must be a port number (got "${askedPort}")`)
  if (Number(askedPort) === 0) return anyFreePort()
  if (await portIsFree(Number(askedPort))) return Number(askedPort)
  const port = await anyFreePort()
  console.log(`Port ${askedPort} is in use by another program; the demo uses port ${port} instead.\n`)
  return port
}

/**
 * Passes the generator's output on up to its "Next:" steps (cd, install, npm run dev), which the demo takes its
 * own way: it starts the agent with `npm start` on the port it chose.
 */
function withoutNextSteps(stream) {
  let pending = ''
  // A blank line waits for the next one: the one before "Next:" goes with it.
  let blank = ''
  let hiding = false
  const pass = (text) => {
    if (hiding) return
    if (text.trim() === '' && text !== '') {
      blank += text
      return
    }
    if (text.trimEnd() === 'Next:') hiding = true
    else process.stdout.write(blank + text)
    blank = ''
  }
  stream.setEncoding('utf8').on('data', (chunk) => {
    pending += chunk
    for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
      pass(pending.slice(0, end + 1))
      pending = pending.slice(end + 1)
    }
  })
  stream.once('end', () => pass(`${pending}${blank}`))
}

/** The card as printed: every level shown, a skill's tags on one line (`tags: echo, demo`) rather than `[Array]`. */
const shownCard = (card) => ({
  ...card,
  skills: card.skills?.map((skill) =>
    Array.isArray(skill.tags) ? { ...skill, tags: { [inspect.custom]: () => skill.tags.join(', ') } } : skill,
  ),
})

const exited = (child) =>
  new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', resolve),
  )

/** Waits until the card at `url` is this agent's: another server on the port, or none, does not count. */
async function waitForOwnCard(url, server) {
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
    // A holder of the port that never answers must not outlast the deadline.
    const card = await fetch(`${url}.well-known/agent.json`, { signal: AbortSignal.timeout(5_000) })
      .then((response) => (response.ok ? response.json() : undefined))
      .catch(() => undefined)
    if (card?.name === name) return
    if (server.exitCode !== null || server.signalCode !== null)
      throw new DemoError(`demo: the generated agent stopped before it served ${url} (its output is above)`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new DemoError(`demo: the generated agent did not serve its card at ${url} within 120 s`)
}

async function main() {
  const port = await choosePort()
  workspace = mkdtempSync(join(tmpdir(), 'a2a-demo-'))
  const project = join(workspace, 'demo-agent')

  console.log(`$ npx create-a2a-agent ${project} --template streaming --name '${name}' --yes\n`)
  const args = [
    project,
    '--template',
    'streaming',
    '--name',
    name,
    '--description',
    'Streams back what you say',
    '--pm',
    'npm',
    '--no-git',
    '--yes',
  ]
  const generator = start(process.execPath, [generatorBin, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  withoutNextSteps(generator.stdout)
  const [code] = await new Promise((resolve) => generator.once('close', (...outcome) => resolve(outcome)))
  children.delete(generator)
  if (code !== 0) throw new DemoError(`demo: create-a2a-agent failed (exit ${code ?? 'by a signal'})`)

  console.log(`\n$ cd ${project} && PORT=${port} npm start`)
  const server = start('npm', ['start'], {
    cwd: project,
    env: { ...process.env, PORT: String(port), HOST: host },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/`
  await waitForOwnCard(url, server)

  const rpc = (method, params) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: method, method, params }),
    })
  const message = (text) => ({
    message: { role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'text', text }] },
  })

  console.log(`\nGET ${url}.well-known/agent.json`)
  console.log(inspect(shownCard(await (await fetch(`${url}.well-known/agent.json`)).json()), { depth: null }))

  console.log('\nmessage/send "hello from the demo"')
  console.dir((await (await rpc('message/send', message('hello from the demo'))).json()).result, { depth: 6 })

  console.log('\nmessage/stream "streams arrive word by word" (raw SSE):')
  process.stdout.write(await (await rpc('message/stream', message('streams arrive word by word'))).text())

  const next =
    'Next, an agent of your own: npx create-a2a-agent my-agent, then npm run dev in it (it reloads as you edit src/agent.ts).'
  if (once) return leave(0, undefined, `\n${next}`)
  serving = true
  console.log(`The agent in ${project} keeps serving at ${url} — try:
  curl -s ${url} -H 'content-type: application/json' -d '{"jsonrpc":"2.0","id":"1","method":"message/send","params":{"message":{"role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}}'
Press Ctrl-C to stop (the temporary folder is removed then).
${next}`)
  await exited(server)
  children.delete(server)
  if (!leaving) await leave(1, 'demo: the generated agent stopped')
}

main().catch((error) => leave(1, error instanceof DemoError ? error.message : `demo: ${error?.message ?? error}`))
