import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { assertRuntimeBuilt, fixturePath } from './_fixture-process.ts'
import { eventReader } from './_sse.ts'

const children: ChildProcess[] = []
const folders: string[] = []
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true })
})

beforeAll(() => assertRuntimeBuilt())

/** Starts test/fixtures/health-agent.mjs; resolves with its url and a promise of its exit code once it listens. */
async function startAgent(): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [fixturePath('health-agent.mjs')], { stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
      const match = /^url (\S+)$/m.exec(out)
      if (match) resolve(match[1]!)
    })
    void exited.then((code) => reject(new Error(`the agent exited (${code}) before listening: ${stderr}`)))
  })
  return { child, url, exited }
}

const send = (url: string, method: string, text: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: { message: { role: 'user', messageId: `m-${text}`, parts: [{ kind: 'text', text }] } },
    }),
  })

function refused(url: string): Promise<boolean> {
  const { port } = new URL(url)
  return new Promise((resolve) => {
    const socket = connect({ port: Number(port), host: '127.0.0.1' })
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'))
  })
}

describe('readiness at shutdown (a serveAgent process)', () => {
  it('on SIGTERM /readyz answers 503 while the task still runs, /healthz 200, a new task is refused; the task then completes', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'a2a-health-'))
    folders.push(folder)
    const release = join(folder, 'release')
    const agent = await startAgent()
    expect((await fetch(`${agent.url}readyz`)).status).toBe(200)

    const stream = eventReader(await send(agent.url, 'message/stream', `hold:${release}`))
    const first = await stream.next()
    expect(first.params.status.state).toBe('working')

    agent.child.kill('SIGTERM')
    // The task holds until the file exists: whatever the machine's load, it is still running here.
    await expect.poll(async () => (await fetch(`${agent.url}readyz`)).status).toBe(503)
    const readiness = await fetch(`${agent.url}readyz`)
    expect(await readiness.json()).toEqual({ status: 'unavailable', reason: 'draining: the server is shutting down' })
    expect((await fetch(`${agent.url}healthz`)).status).toBe(200)
    expect((await fetch(`${agent.url}ping`)).status).toBe(200)
    const late = await (await send(agent.url, 'message/send', 'late')).json()
    expect(late.error.message).toMatch(/shutting down/)

    writeFileSync(release, '')
    let last: any
    for (let event = await stream.next(); event; event = await stream.next()) last = event
    expect(last.params).toMatchObject({ final: true, status: { state: 'completed' } })
    expect(await agent.exited).toBe(0)
    expect(await refused(agent.url)).toBe(true)
  })
})
