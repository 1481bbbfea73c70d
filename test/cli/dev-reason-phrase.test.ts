import { type ChildProcess, spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { afterEach, expect, it } from 'vitest'
import { a2aBin, freePort, makeAgentProject } from '../_support.ts'
import { rawRequest } from '../runtime/_raw-request.ts'

/** `a2a dev` serves through listhen's server, not serveAgent's: its answers carry reason phrases too. */

let child: ChildProcess | undefined
let project: string | undefined
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve))
    process.kill(child.pid!, 'SIGKILL')
    await exited
  }
  child = undefined
  if (project) rmSync(project, { recursive: true, force: true })
  project = undefined
})

it('a2a dev answers 401 Unauthorized, not a bare 401', async () => {
  project = makeAgentProject(
    'a2a-reason-phrase-',
    `import { defineAgent } from 'a2a-runtime'
export default defineAgent({
  card: { name: 'Guarded', description: 'Needs a token', authentication: { schemes: ['bearer'] } },
  execute: (_ctx, task) => task.complete(),
})
`,
  )
  const port = await freePort()
  child = spawn(process.execPath, [a2aBin, 'dev'], {
    cwd: project,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', A2A_BEARER_TOKEN: 'dev-token' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  await expect.poll(() => output, { timeout: 15_000 }).toContain('Dev server at')
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: { message: { parts: [{ kind: 'text', text: 'hi' }] } },
  })
  const request = `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
  expect(await rawRequest(port, request)).toBe('HTTP/1.1 401 Unauthorized')
})
