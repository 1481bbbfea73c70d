import { afterEach, describe, expect, it } from 'vitest'
import { type A2aOnProject, a2aOnProject, freePort } from '../_support.ts'

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

let dev: A2aOnProject | undefined
afterEach(async () => {
  await dev?.dispose()
  dev = undefined
})

/** `a2a dev` on the agent above; the output's lines after start-up, once the failed task is logged. */
async function failedTaskLines(env: Record<string, string> = {}): Promise<string[]> {
  const port = await freePort()
  dev = a2aOnProject('a2a-agent-error-', agentSource, ['dev'], { PORT: String(port), A2A_LOG_LEVEL: '', ...env })
  const { child, output } = dev
  await expect.poll(() => output.all, { timeout: 15_000 }).toMatch(/Inspector at .*\n/)
  const startUp = output.all.length
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
  process.kill(child.pid!, 'SIGINT')
  await dev.exit
  return output.all
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
