import { afterEach, describe, expect, it } from 'vitest'
import { rpc } from '../_rpc.ts'
import { type A2aOnProject, a2aOnProject, freePort } from '../_support.ts'

// `a2a start --log-format json`: what a log shipper reads from a production server's stdout and stderr.

const agentSource = `import { defineAgent } from 'a2a-runtime'

export default defineAgent({
  card: { name: 'Logged', description: 'Fails what it is asked', version: '1.0.0' },
  execute: () => {
    throw new Error('no model configured')
  },
})
`

const runs: A2aOnProject[] = []
afterEach(async () => {
  await Promise.all(runs.splice(0).map((run) => run.dispose()))
})

/** `a2a start` with `args` on the agent above; its stdout and stderr as they arrive, and its exit. */
function start(args: string[], env: Record<string, string> = {}) {
  const run = a2aOnProject('a2a-logs-start-', agentSource, ['start', ...args], {
    A2A_LOG_LEVEL: '',
    A2A_LOG_FORMAT: '',
    A2A_REQUEST_LOG: '',
    ...env,
  })
  runs.push(run)
  return run
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
    const answer = await rpc(`http://127.0.0.1:${port}/`, 'message/send', {
      message: { kind: 'message', role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hi' }] },
    })
    const task = (answer.body as { result: { id: string } }).result
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
    process.kill(fromEnv.child.pid!, 'SIGTERM')
    await fromEnv.exit
    await fromEnv.dispose()

    const refused = start(['--log-format', 'yaml', '--port', String(port)])
    expect(await refused.exit).not.toBe(0)
    expect(refused.output.stderr.trim()).toBe('a2a: --log-format must be one of text, json (got "yaml")')
  })
})
