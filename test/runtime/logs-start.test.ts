import { type ChildProcess, spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { a2aBin, freePort, makeAgentProject } from '../_support.ts'

// `a2a start --log-format json`: what a log shipper reads from a production server's stdout and stderr.

const agentSource = `import { defineAgent } from 'a2a-runtime'

export default defineAgent({
  card: { name: 'Logged', description: 'Fails what it is asked', version: '1.0.0' },
  execute: () => {
    throw new Error('no model configured')
  },
})
`

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

/** `a2a start` with `args` on the agent above; its stdout and stderr as they arrive, and its exit. */
function start(args: string[], env: Record<string, string> = {}) {
  project = makeAgentProject('a2a-logs-start-', agentSource)
  const output = { stdout: '', stderr: '' }
  child = spawn(process.execPath, [a2aBin, 'start', ...args], {
    cwd: project,
    env: { ...process.env, HOST: '127.0.0.1', A2A_LOG_LEVEL: '', A2A_LOG_FORMAT: '', A2A_REQUEST_LOG: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk))
  const exit = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)))
  return { output, exit }
}

const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)

describe('a2a start --log-format json', () => {
  it('writes every line as one JSON object: start-up, the request line, a failed task', async () => {
    const port = await freePort()
    const { output } = start(['--log-format', 'json', '--request-log', 'info', '--port', String(port)])
    await expect.poll(() => output.stdout, { timeout: 15_000 }).toContain('listening on')
    const answer = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hi' }] } },
      }),
    })
    const task = ((await answer.json()) as { result: { id: string } }).result
    await expect.poll(() => output.stdout, { timeout: 15_000 }).toContain('"route":"/"')
    await expect.poll(() => output.stderr, { timeout: 15_000 }).toContain('no model configured')
    const [listening, request] = jsonLines(output.stdout)
    expect(listening).toMatchObject({ level: 'info', message: expect.stringContaining('Agent "Logged" listening on') })
    expect(request).toMatchObject({ level: 'info', method: 'POST', route: '/', status: 200 })
    expect(jsonLines(output.stderr)).toEqual([
      expect.objectContaining({
        level: 'error',
        task_id: task.id,
        error_name: 'Error',
        error_message: 'no model configured',
      }),
    ])
  })

  it('A2A_LOG_FORMAT does the same; a format it does not know stops the start in one line naming the flag', async () => {
    const port = await freePort()
    const fromEnv = start(['--port', String(port)], { A2A_LOG_FORMAT: 'json' })
    await expect.poll(() => fromEnv.output.stdout, { timeout: 15_000 }).toContain('listening on')
    expect(jsonLines(fromEnv.output.stdout)[0]).toMatchObject({ level: 'info' })
    process.kill(child!.pid!, 'SIGTERM')
    await fromEnv.exit
    rmSync(project!, { recursive: true, force: true })

    const refused = start(['--log-format', 'yaml', '--port', String(port)])
    expect(await refused.exit).not.toBe(0)
    expect(refused.output.stderr.trim()).toBe('a2a: --log-format must be one of text, json (got "yaml")')
  })
})
