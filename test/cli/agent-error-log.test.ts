import { type ChildProcess, spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { a2aBin, freePort, makeAgentProject } from '../_support.ts'

/**
 * An agent that throws what the AI SDK throws when its model endpoint does not answer: a RetryError holding one
 * APICallError per attempt, each with the request it sent (a long conversation), a response body and a cause
 * chain down to the socket's ECONNREFUSED. Under `a2a dev` the failed task is a few lines of the console, each
 * short; the stack and the error's fields come only at debug level.
 */
const agentSource = `import { defineAgent } from 'a2a-runtime'

class APICallError extends Error {
  constructor(attempt: number) {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), {
      code: 'ECONNREFUSED', errno: -111, syscall: 'connect', address: '127.0.0.1', port: 9,
    })
    super('Cannot connect to API: connect ECONNREFUSED 127.0.0.1:9', { cause: new TypeError('fetch failed', { cause: refused }) })
    this.name = 'AI_APICallError'
    Object.assign(this, {
      attempt,
      url: 'http://127.0.0.1:9/v1/chat/completions',
      requestBodyValues: {
        model: 'gpt-test',
        messages: Array.from({ length: 40 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: 'turn ' + i + ' '.repeat(20) })),
      },
      responseBody: 'upstream said no\\n'.repeat(30),
      isRetryable: true,
    })
  }
}

class RetryError extends Error {
  constructor() {
    const errors = [1, 2, 3].map((attempt) => new APICallError(attempt))
    super('Failed after 3 attempts. Last error: ' + errors[2]!.message + ' ' + 'x'.repeat(2000))
    this.name = 'AI_RetryError'
    Object.assign(this, { reason: 'maxRetriesExceeded', errors, lastError: errors[2] })
  }
}

export default defineAgent({
  card: { name: 'Unreachable Model', description: 'Calls a model endpoint nobody listens on' },
  async execute() {
    throw new RetryError()
  },
})
`

let project: string | undefined
let child: ChildProcess | undefined

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

/** `a2a dev` on the agent above; the output's lines after start-up, once the failed task is logged. */
async function failedTaskLines(env: Record<string, string> = {}): Promise<string[]> {
  project = makeAgentProject('a2a-agent-error-', agentSource)
  const port = await freePort()
  child = spawn(process.execPath, [a2aBin, 'dev'], {
    cwd: project,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', A2A_LOG_LEVEL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  await expect.poll(() => output, { timeout: 15_000 }).toMatch(/Inspector at .*\n/)
  const startUp = output.length
  const response = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { parts: [{ kind: 'text', text: 'hi' }] } },
    }),
  })
  const body = (await response.json()) as { result: { status: { state: string } } }
  expect(body.result.status.state).toBe('failed')
  // The log is written before the task settles; a line still in the pipe arrives before the dev server stops.
  const exited = new Promise((resolve) => child!.once('exit', resolve))
  process.kill(child.pid!, 'SIGINT')
  await exited
  return output
    .slice(startUp)
    .split('\n')
    .filter((line) => line !== '' && !/stopp|shut|Bye/i.test(line))
}

describe('a task failed by its agent, on the a2a dev console', () => {
  it('is a few short lines: the message, its causes, and how to see the stack', async () => {
    const lines = await failedTaskLines()
    expect(lines.length).toBeGreaterThan(0)
    expect(lines.length).toBeLessThanOrEqual(6)
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(400)
    const text = lines.join('\n')
    expect(text).toContain('Unreachable Model')
    expect(text).toContain('AI_RetryError: Failed after 3 attempts. Last error: Cannot connect to API')
    expect(text).toContain('fetch failed')
    expect(text).toContain('connect ECONNREFUSED 127.0.0.1:9')
    expect(text).toContain('A2A_LOG_LEVEL=debug')
    expect(text).not.toMatch(/^\s+at /m)
    expect(text).not.toContain('requestBodyValues')
  })

  it('shows the stack and the fields at debug level', async () => {
    const text = (await failedTaskLines({ A2A_LOG_LEVEL: 'debug' })).join('\n')
    expect(text).toMatch(/^\s+at /m)
    expect(text).toContain('requestBodyValues')
  })
})
